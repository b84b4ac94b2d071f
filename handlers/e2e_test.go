package handlers_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
)

// The browser end-to-end suite: Debian's Chromium, driven with chromedp,
// goes through the whole registration from the e-mail link to a completed
// payment, once with JavaScript (htmx swaps) and once without (plain forms),
// and once with the keyboard only. Every page of the flow is checked with
// axe-core and photographed at 390 and 1280 px; every response the browser
// receives is scanned for the hash secret.
//
// Without Chromium the tests skip, saying so; PORTAL_E2E=required (set by
// .ci/run) turns that skip into a failure.

const (
	e2eDefaultChromium = "/usr/bin/chromium"
	e2eAxePath         = "static/node_modules/axe-core/axe.min.js" // relative to the module root
	e2eActionTimeout   = 15 * time.Second
)

// e2eRequired reports whether a missing browser or axe-core fails the run
// (PORTAL_E2E=required, as in CI) instead of skipping.
func e2eRequired() bool { return os.Getenv("PORTAL_E2E") == "required" }

// e2eUnavailable skips the test, or fails it under PORTAL_E2E=required.
func e2eUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if e2eRequired() {
		t.Fatalf("%s (PORTAL_E2E=required)", msg)
	}
	t.Skip(msg + "; set PORTAL_E2E=required to fail instead")
}

// e2eModuleRoot is the directory of go.mod: tests run in the package
// directory, but the artifacts and axe-core live relative to the root.
func e2eModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("e2e: no go.mod above %s", dir)
		}
	}
}

// e2eArtifacts is where screenshots go: $PORTAL_TEST_ARTIFACTS, or
// test-artifacts/ at the module root (ignored by git).
func e2eArtifacts(t *testing.T, flow string) string {
	t.Helper()
	base := os.Getenv("PORTAL_TEST_ARTIFACTS")
	if base == "" {
		base = filepath.Join(e2eModuleRoot(t), "test-artifacts")
	}
	dir := filepath.Join(base, "e2e", flow)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// e2eTraffic is what the browser received, seen through the Fetch domain:
// every response is paused, its headers and body scanned, then released.
type e2eTraffic struct {
	mu        sync.Mutex
	exchanges []e2eExchange
	leaks     []string // responses that carried the hash secret
	errs      []string // responses that could not be inspected
}

type e2eExchange struct {
	method, url string
	status      int64
	htmx        bool   // sent by htmx (HX-Request header)
	referer     string // the Referer header, if any
}

// e2eBrowser drives one Chromium tab through the pages of a test server.
type e2eBrowser struct {
	t       *testing.T
	env     *handlertest.Env
	ctx     context.Context // the tab
	js      bool
	axe     string // axe-core's source; empty skips the accessibility checks
	shotDir string // empty takes no screenshots
	shots   int
	net     *e2eTraffic
	start   time.Time
}

// newE2EBrowser starts headless Chromium with a fresh profile, with
// JavaScript on or off, and starts watching its traffic.
func newE2EBrowser(t *testing.T, env *handlertest.Env, flow string, js, checks bool) *e2eBrowser {
	t.Helper()
	exe := os.Getenv("PORTAL_CHROMIUM")
	if exe == "" {
		exe = e2eDefaultChromium
	}
	if _, err := os.Stat(exe); err != nil {
		e2eUnavailable(t, "e2e: Chromium not found at %s", exe)
	}
	b := &e2eBrowser{t: t, env: env, js: js, net: &e2eTraffic{}, start: time.Now()}
	if checks {
		path := filepath.Join(e2eModuleRoot(t), e2eAxePath)
		src, err := os.ReadFile(path)
		if err != nil {
			e2eUnavailable(t, "e2e: axe-core not found at %s (run npm ci --prefix static)", path)
		}
		b.axe = string(src)
		b.shotDir = e2eArtifacts(t, flow)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b.ctx = ctx
	watching := make(chan struct{})
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		<-watching
	})
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		close(watching)
		t.Fatalf("e2e: starting Chromium at %s: %v", exe, err)
	}

	paused := chromedp.Events(ctx, fetch.RequestPaused)
	go func() {
		defer close(watching)
		for ev, err := range paused {
			if err != nil {
				return
			}
			b.net.inspect(ctx, ev)
		}
	}()
	b.do("watch responses", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
			{URLPattern: "*", RequestStage: fetch.RequestStageResponse}}})
		return err
	}))
	if !js {
		b.scripts(false) // emulation state belongs to the tab and holds across navigations
	}
	b.do("viewport", chromedp.EmulateViewport(1280, 900))
	return b
}

// inspect scans one paused response for the secret and releases it.
func (n *e2eTraffic) inspect(ctx context.Context, ev fetch.EventRequestPaused) {
	x := e2eExchange{method: ev.Request.Method, url: ev.Request.URL, status: ev.ResponseStatusCode}
	for k, v := range ev.Request.Headers {
		switch strings.ToLower(k) {
		case "hx-request":
			x.htmx = fmt.Sprint(v) == "true"
		case "referer":
			x.referer = fmt.Sprint(v)
		}
	}
	var found []string
	for _, h := range ev.ResponseHeaders {
		if strings.Contains(h.Value, handlertest.HashSecret) {
			found = append(found, "header "+h.Name)
		}
	}
	// A request the page gave up meanwhile (a navigation replaced by
	// another) is gone from the browser: it delivered nothing.
	problem := func(err error) bool {
		return err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "Invalid InterceptionId")
	}
	var errs []string
	if ev.ResponseStatusCode < 300 || ev.ResponseStatusCode >= 400 { // redirects have no body to read
		body, err := chromedp.Call(ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: ev.RequestID})
		if problem(err) {
			errs = append(errs, fmt.Sprintf("%s %s: reading the body: %v", x.method, x.url, err))
		} else if err == nil && strings.Contains(string(body.Body), handlertest.HashSecret) {
			found = append(found, "body")
		}
	}
	_, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
	if problem(err) {
		errs = append(errs, fmt.Sprintf("%s %s: releasing the response: %v", x.method, x.url, err))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.exchanges = append(n.exchanges, x)
	for _, f := range found {
		n.leaks = append(n.leaks, fmt.Sprintf("%s %s (%d): %s", x.method, x.url, x.status, f))
	}
	n.errs = append(n.errs, errs...)
}

// status is the last status the browser received for method and path.
func (n *e2eTraffic) status(method, path string) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := len(n.exchanges) - 1; i >= 0; i-- {
		x := n.exchanges[i]
		if u, err := url.Parse(x.url); err == nil && x.method == method && u.Path == path {
			return x.status
		}
	}
	return 0
}

func (n *e2eTraffic) snapshot() []e2eExchange {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.exchanges)
}

// checkTraffic fails on any response that carried the secret, on any
// request after the e-mail link that carried its hash or a Referer, and on
// the hash in the browser's history.
func (b *e2eBrowser) checkTraffic(hash string) {
	b.t.Helper()
	b.net.mu.Lock()
	leaks, errs := slices.Clone(b.net.leaks), slices.Clone(b.net.errs)
	b.net.mu.Unlock()
	for _, l := range leaks {
		b.t.Errorf("the hash secret reached the browser: %s", l)
	}
	for _, e := range errs {
		b.t.Errorf("e2e: %s", e)
	}
	xs := b.net.snapshot()
	if len(xs) < 10 {
		b.t.Errorf("only %d responses were inspected: the traffic watch is not working", len(xs))
	}
	link := -1
	for i, x := range xs {
		if !strings.HasPrefix(x.url, b.env.Server.URL+"/") {
			continue // the mailbox
		}
		switch {
		case link < 0 && strings.Contains(x.url, hash):
			link = i
		case link < 0:
			b.t.Errorf("%s %s was requested before the e-mail link", x.method, x.url)
		case strings.Contains(x.url, hash):
			b.t.Errorf("request %s %s after the e-mail link carries the link hash", x.method, x.url)
		case x.referer != "":
			// The link's own Referer is the mailbox's business; the portal's pages send none.
			b.t.Errorf("%s %s sent Referer %q despite Referrer-Policy no-referrer", x.method, x.url, x.referer)
		}
	}
	if link < 0 {
		b.t.Errorf("the e-mail link was never requested")
	}
	entries := e2eRun(b, "read the history", chromedp.NavigationEntries())
	for _, e := range entries.Entries {
		if strings.Contains(e.URL, hash) {
			b.t.Errorf("the link hash is in the browser history: %s", e.URL)
		}
	}
}

// do runs actions with a deadline and fails the test with what was being done.
func (b *e2eBrowser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eActionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("e2e: %s (at %s): %v", what, b.location(), err)
	}
}

// e2eRun runs one action that returns a value.
func e2eRun[T any](b *e2eBrowser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eActionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("e2e: %s (at %s): %v", what, b.location(), err)
	}
	return v
}

// e2eEval evaluates a JavaScript expression in the page. DevTools evaluation
// works with the page's scripts disabled, so the JavaScript-free flow can
// read the DOM the same way.
func e2eEval[T any](b *e2eBrowser, expr string) T {
	b.t.Helper()
	return e2eRun(b, "evaluate "+expr, chromedp.Evaluate[T](expr))
}

// location is the current address, or a note when it cannot be read.
func (b *e2eBrowser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "unknown location: " + err.Error()
	}
	return loc
}

func (b *e2eBrowser) logf(format string, args ...any) {
	b.t.Helper()
	b.t.Logf("%5.1fs %s", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

func (b *e2eBrowser) navigate(path string) {
	b.t.Helper()
	b.do("navigate to "+path, chromedp.Navigate(b.env.Server.URL+path))
}

func (b *e2eBrowser) waitVisible(sel string) {
	b.t.Helper()
	b.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (b *e2eBrowser) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// clickTo clicks and waits for what the click leads to: a new page without
// JavaScript, an htmx swap with it.
func (b *e2eBrowser) clickTo(sel, next string) {
	b.t.Helper()
	b.click(sel)
	b.waitVisible(next)
	b.settled()
}

// settled waits until htmx has finished: while it settles a swap, elements
// that kept their id carry the old page's attributes for a moment.
func (b *e2eBrowser) settled() {
	b.t.Helper()
	if !b.js {
		return
	}
	// As long as any other action may take: beside the volume tests and the
	// calendar on two cores, 5 s was seen to run out on a page that settled.
	ctx, cancel := context.WithTimeout(b.ctx, e2eActionTimeout)
	defer cancel()
	// A page is visible before its deferred scripts have run: wait for the
	// load to finish too, or htmx may not be there yet on a busy machine.
	const expr = `document.readyState === "complete" && !document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added")`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
		b.t.Fatalf("e2e: htmx did not settle at %s: %v", b.location(), err)
	}
}

func (b *e2eBrowser) typeInto(sel, text string) {
	b.t.Helper()
	// SetValue refuses the empty string, so the field is emptied in the page.
	b.do("type into "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf("document.querySelector(%q).value = ''", sel)),
		chromedp.SendKeys(chromedp.CSS(sel), text))
}

func (b *e2eBrowser) text(sel string) string {
	b.t.Helper()
	return strings.Join(strings.Fields(e2eRun(b, "text of "+sel, chromedp.TextContent(chromedp.CSS(sel)))), " ")
}

func (b *e2eBrowser) attr(sel, name string) string {
	b.t.Helper()
	return e2eRun(b, "attribute "+name+" of "+sel, chromedp.AttributeValue(chromedp.CSS(sel), name)).Value
}

func (b *e2eBrowser) count(sel string) int {
	b.t.Helper()
	return e2eEval[int](b, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
}

func (b *e2eBrowser) checked(sel string) bool {
	b.t.Helper()
	return e2eEval[bool](b, fmt.Sprintf("document.querySelector(%q).checked", sel))
}

// waitFocus waits until the focused element matches sel: after an htmx swap
// the portal's script moves focus to the error summary or the heading.
func (b *e2eBrowser) waitFocus(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eActionTimeout)
	defer cancel()
	expr := fmt.Sprintf("document.activeElement && document.activeElement.matches(%q)", sel)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		b.t.Fatalf("e2e: focus did not move to %s (it is on %s): %v", sel, b.focused(), err)
	}
}

// focused describes the focused element.
func (b *e2eBrowser) focused() string {
	return e2eEval[string](b, `(() => { const e = document.activeElement; if (!e) return "nothing";
		return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.dataset && e.dataset.testid ? "[data-testid=" + e.dataset.testid + "]" : "") })()`)
}

// waitPath polls the address until its path starts with prefix: the done
// page's countdown navigates by itself.
func (b *e2eBrowser) waitPath(prefix string, within time.Duration) {
	b.t.Helper()
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if u, err := url.Parse(b.location()); err == nil && strings.HasPrefix(u.Path, prefix) {
			return
		}
		if time.Since(start) > within {
			b.t.Fatalf("e2e: still at %s after %s, want a path starting with %s", b.location(), within, prefix)
		}
		<-tick.C
	}
}

// checkPage is run on every page of the flow: no hash secret in the DOM, no
// serious or critical axe-core violation, and two screenshots.
func (b *e2eBrowser) checkPage(name string) {
	b.t.Helper()
	defer func(start time.Time) { b.logf("checked %s in %s", name, time.Since(start).Round(time.Millisecond)) }(time.Now())
	if html := e2eEval[string](b, "document.documentElement.outerHTML"); strings.Contains(html, handlertest.HashSecret) {
		b.t.Errorf("%s: the page contains the hash secret", name)
	}
	if b.axe != "" {
		b.runAxe(name)
	}
	if b.shotDir != "" {
		b.shots++
		for _, w := range []int64{390, 1280} {
			b.do("viewport", chromedp.EmulateViewport(w, 900))
			png := e2eRun(b, "screenshot", chromedp.FullScreenshot(100))
			file := filepath.Join(b.shotDir, fmt.Sprintf("%02d-%s-%d.png", b.shots, name, w))
			if err := os.WriteFile(file, png, 0o644); err != nil {
				b.t.Fatal(err)
			}
		}
	}
}

// scripts switches the page's JavaScript on or off.
func (b *e2eBrowser) scripts(on bool) {
	b.t.Helper()
	b.do(fmt.Sprintf("scripts on: %v", on), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	}))
}

// e2eAxeViolation is one failed axe-core rule.
type e2eAxeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// runAxe injects axe-core (once per document) and fails on violations of
// impact serious or critical.
func (b *e2eBrowser) runAxe(name string) {
	b.t.Helper()
	for _, v := range b.axeViolations(name) {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("%s: axe-core %s violation %s (%s) at %s", name, v.Impact, v.ID, v.Help, strings.Join(v.Targets, ", "))
		} else {
			b.t.Logf("%s: axe-core %s finding %s (%s) at %s", name, v.Impact, v.ID, v.Help, strings.Join(v.Targets, ", "))
		}
	}
}

// axeViolations runs axe-core on the page (injected once per document)
// and returns every violation, whatever its impact; it fails the test
// when axe checked nothing.
func (b *e2eBrowser) axeViolations(name string) []e2eAxeViolation {
	b.t.Helper()
	if !b.js {
		// axe-core waits on timers, which do not fire while the page's
		// scripts are disabled. Scripts the page skipped while loading stay
		// skipped, so switching them on just for axe does not bring htmx in.
		b.scripts(true)
		defer b.scripts(false)
	}
	if !e2eEval[bool](b, "typeof window.axe === 'object'") {
		e2eRun(b, "inject axe-core", chromedp.Evaluate[chromedp.Void](b.axe))
	}
	const run = `axe.run(document, {resultTypes: ["violations"]}).then(r => ({
		passes: r.passes.length,
		violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(" "))}))}))`
	res := e2eRun(b, "run axe-core", chromedp.Evaluate[struct {
		Passes     int               `json:"passes"`
		Violations []e2eAxeViolation `json:"violations"`
	}](run, chromedp.EvalAwaitPromise))
	if res.Passes == 0 {
		b.t.Errorf("%s: axe-core checked nothing", name)
	}
	return res.Violations
}

// e2eLink is the e-mail link of the demo user for period 1.
func e2eLink() (path, hash string) {
	hash = hashlink.Sign(handlertest.HashSecret, "demo")
	return "/membership/register/1?u=demo&h=" + hash, hash
}

// e2eMailbox serves a page with the e-mail link on another site (localhost
// against the portal's 127.0.0.1), so that following it is the cross-site
// arrival a webmail gives: the SameSite=Strict session cookie set by the
// hash guard is not sent on the redirect, and the portal carries the
// browser over with its continue page.
func e2eMailbox(t *testing.T, env *handlertest.Env) string {
	t.Helper()
	link, _ := e2eLink()
	page := fmt.Sprintf(`<!DOCTYPE html><html lang="en"><title>Inbox</title><main><h1>Your registration link</h1>`+
		`<p><a id="mail-link" href="%s%s">Register for membership</a></p></main></html>`, env.Server.URL, link)
	mail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(mail.Close)
	return strings.Replace(mail.URL, "127.0.0.1", "localhost", 1)
}

// arrive opens the mailbox and follows the e-mail link to the overview,
// with a click or, for the keyboard flow, with Tab and Enter.
func (b *e2eBrowser) arrive(keyboard bool) {
	b.t.Helper()
	mailbox := e2eMailbox(b.t, b.env)
	b.do("open the mailbox", chromedp.Navigate(mailbox))
	b.waitVisible(`#mail-link`)
	if keyboard {
		b.tabTo(`#mail-link`)
		b.enter()
	} else {
		b.click(`#mail-link`)
	}
	b.waitVisible(`[data-testid=overview][data-state=new]`)
	b.settled()
	// The hash guard answered 303 to the clean address; the cookie that it
	// set was withheld on that cross-site redirect, so the continue page
	// sent the browser on, now same-site.
	want := b.env.Server.URL + "/membership/register/1?continue=1"
	if got := b.location(); got != want {
		b.t.Errorf("after the e-mail link the address is %s, want %s", got, want)
	}
}

// personStatuses reads the overview's person list as name -> status.
func (b *e2eBrowser) personStatuses() map[string]string {
	b.t.Helper()
	rows := e2eEval[[][]string](b, `[...document.querySelectorAll("[data-testid=person]")].map(li =>
		[li.querySelector(".font-medium").textContent.trim(), li.querySelector("[data-testid=person-status]").textContent.trim()])`)
	out := map[string]string{}
	for _, r := range rows {
		out[r[0]] = r[1]
	}
	return out
}

func (b *e2eBrowser) expectStatuses(want map[string]string) {
	b.t.Helper()
	got := b.personStatuses()
	for name, st := range want {
		if got[name] != st {
			b.t.Errorf("overview: %s is %q, want %q (all: %v)", name, got[name], st, got)
		}
	}
}

// stepSel selects the step page with number n.
func stepSel(n int) string { return fmt.Sprintf(`[data-testid=step][data-step="%d"]`, n) }

// TestE2ERegistrationWithJavaScript goes through the whole registration with
// htmx enhancing the forms.
func TestE2ERegistrationWithJavaScript(t *testing.T) {
	t.Parallel()
	e2eRegistrationFlow(t, true)
}

// TestE2ERegistrationWithoutJavaScript goes through the whole registration
// with the page's scripts disabled: plain forms, POST then 303 then GET.
func TestE2ERegistrationWithoutJavaScript(t *testing.T) {
	t.Parallel()
	e2eRegistrationFlow(t, false)
}

func e2eRegistrationFlow(t *testing.T, js bool) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	flow := map[bool]string{true: "js", false: "nojs"}[js]
	b := newE2EBrowser(t, env, flow, js, true)
	_, hash := e2eLink()
	base := "/membership/register/1"

	// The e-mail link, followed from a mailbox on another site.
	b.logf("e-mail link")
	b.arrive(false)
	if htmx := e2eEval[bool](b, "typeof window.htmx === 'object'"); htmx != js {
		t.Fatalf("htmx loaded: %v, want %v (JavaScript enabled: %v)", htmx, js, js)
	}
	b.expectStatuses(map[string]string{"Alex Morgan": "Available", "Sam Morgan": "Available",
		"Robin Morgan": "Available", "Jamie Morgan": "Registered"})
	b.checkPage("overview")

	// Person selection: Jamie is registered already and cannot be chosen.
	b.clickTo(`[data-testid=start]`, stepSel(0))
	if !e2eEval[bool](b, `document.querySelector("#answer-4").disabled`) {
		t.Errorf("Jamie (registered) can be selected")
	}
	b.checkPage("persons")
	b.click(`#answer-1`)
	b.click(`#answer-3`)
	b.clickTo(`[data-testid=submit]`, stepSel(1))
	if js {
		b.waitFocus("h1")
	}

	// Question 1, with a validation error first.
	b.logf("question 1")
	if got := b.text(`[data-testid=question]`); got != "Emergency contact phone number" {
		t.Errorf("question 1 heading %q", got)
	}
	// Eight until the transfer question is answered: "Which club?" may follow it.
	if got := b.text(`[data-testid=progress]`); got != "Question 1 of 8" {
		t.Errorf("progress %q, want Question 1 of 8", got)
	}
	b.checkPage("question-1")
	b.typeInto(`#answer-1`, "12345")
	b.typeInto(`#answer-3`, "0687654321")
	b.clickTo(`[data-testid=submit]`, `[data-testid=error-summary]`)
	if st := b.net.status("POST", base+"/step/1"); st != 422 {
		t.Errorf("wrong phone number: status %d, want 422", st)
	}
	if title := e2eEval[string](b, "document.title"); !strings.HasPrefix(title, "Error:") {
		t.Errorf("title %q does not start with Error:", title)
	}
	if got := b.attr(`#answer-1`, "aria-invalid"); got != "true" {
		t.Errorf("wrong field aria-invalid=%q", got)
	}
	if got := b.attr(`#answer-1`, "aria-describedby"); got != "answer-1-error" {
		t.Errorf("wrong field aria-describedby=%q", got)
	}
	if got := b.text(`#answer-1-error`); !strings.Contains(got, "10 digits") {
		t.Errorf("inline error %q", got)
	}
	if got := e2eEval[string](b, `document.querySelector("#answer-1").value`); got != "12345" {
		t.Errorf("entered value not kept: %q", got)
	}
	if got := e2eEval[string](b, `document.querySelector("#answer-3").value`); got != "0687654321" {
		t.Errorf("the other person's value not kept: %q", got)
	}
	// The field is red: aria-invalid's style is not undone by a border utility.
	if got := e2eEval[string](b, `getComputedStyle(document.querySelector("#answer-1")).borderTopColor`); got != "rgb(185, 28, 28)" {
		t.Errorf("the wrong field's border is %s, want red-700 rgb(185, 28, 28)", got)
	}
	if got := b.attr(`[data-testid=error-summary] a`, "href"); got != "#answer-1" {
		t.Errorf("error summary links to %q, want #answer-1", got)
	}
	if js {
		b.waitFocus("#error-summary")
	}
	b.checkPage("question-1-error")
	b.typeInto(`#answer-1`, "0612345678")
	b.clickTo(`[data-testid=submit]`, stepSel(2))

	// Question 2: a select per person; the title is the question again.
	b.logf("question 2")
	if title := e2eEval[string](b, "document.title"); !strings.HasPrefix(title, "Club shirt size") {
		t.Errorf("question 2 has the title %q", title)
	}
	b.checkPage("question-2")
	b.do("choose shirt sizes", chromedp.SetValue(chromedp.CSS(`#answer-1`), "M"), chromedp.SetValue(chromedp.CSS(`#answer-3`), "S"))
	b.clickTo(`[data-testid=submit]`, stepSel(3))

	// Question 3, then Back from question 4: the saved answer is there.
	b.checkPage("question-3")
	b.click(`#answer-1`)
	b.clickTo(`[data-testid=submit]`, stepSel(4))
	b.checkPage("question-4")
	b.logf("back")
	b.clickTo(`[data-testid=back]`, stepSel(3))
	if !b.checked(`#answer-1`) || b.checked(`#answer-3`) {
		t.Errorf("after Back, question 3 lost its answers (Alex insured: %v, Robin insured: %v)", b.checked(`#answer-1`), b.checked(`#answer-3`))
	}
	b.clickTo(`[data-testid=submit]`, stepSel(4))

	// Question 4 branches: Alex transfers from another club, so "Which
	// club?" (5) follows, for Alex only.
	b.click(`#answer-1`)
	if js {
		// A double click: htmx disables the button for the first request,
		// so one post is sent (checkPosts counts them). Without JavaScript
		// the browser decides whether one or two posts leave, so there the
		// flow clicks once.
		b.do("double-click Continue", chromedp.DoubleClick(chromedp.CSS(`[data-testid=submit]`)))
		b.waitVisible(stepSel(5))
		b.settled()
	} else {
		b.clickTo(`[data-testid=submit]`, stepSel(5))
	}
	b.logf("the transfer branch")
	if got := b.text(`[data-testid=question]`); got != "Which club is this person transferring from?" {
		t.Errorf("question 5 heading %q", got)
	}
	if n := b.count(`#answer-3`); n != 0 {
		t.Errorf("Which club? is asked for Robin, who does not transfer")
	}
	if got := b.text(`[data-testid=progress]`); got != "Question 5 of 8" {
		t.Errorf("progress %q, want Question 5 of 8", got)
	}
	b.checkPage("question-5-branch")
	b.typeInto(`#answer-1`, "Old Club")
	b.clickTo(`[data-testid=submit]`, stepSel(6))

	// Question 6 is for juniors only: Alex is hidden.
	if n := b.count(`#answer-1`); n != 0 {
		t.Errorf("guardian consent is asked for the adult Alex")
	}
	b.checkPage("question-6")
	b.click(`#answer-3`)
	b.clickTo(`[data-testid=submit]`, stepSel(7))

	// Leave for the overview, then continue where we left off.
	b.logf("leave and resume")
	b.navigate(base)
	b.waitVisible(`[data-testid=overview][data-state=in-progress]`)
	b.waitVisible(`[data-testid=resume-prompt]`)
	b.checkPage("overview-in-progress")
	// Start again asks first; "No, go back" keeps everything.
	b.clickTo(`[data-testid=start-again]`, `[data-testid=reset-confirm]`)
	b.checkPage("reset-confirm")
	b.clickTo(`[data-testid=cancel-reset]`, `[data-testid=overview][data-state=in-progress]`)
	b.clickTo(`[data-testid=continue]`, stepSel(7))
	b.checkPage("question-7")
	b.click(`#answer-1`)
	b.clickTo(`[data-testid=submit]`, stepSel(8))
	if got := b.text(`[data-testid=submit]`); got != "Continue to check your answers" {
		t.Errorf("last question's button says %q", got)
	}
	b.checkPage("question-8")
	b.click(`#answer-1`)
	b.click(`#answer-3`)
	b.clickTo(`[data-testid=submit]`, `[data-testid=review]`)

	// Check your answers, change one, confirm.
	b.logf("review")
	// The address follows the page, and reloading it renders the page in full.
	if got := b.location(); got != env.Server.URL+base+"/review" {
		t.Errorf("on the review page the address is %s", got)
	}
	b.do("reload the review page", chromedp.Reload())
	b.waitVisible(`[data-testid=review]`)
	b.checkReview(map[string]string{"Alex Morgan": "Medium", "Robin Morgan": "Small"})
	if got := b.reviewAnswers(clubQuestion); !maps.Equal(got, map[string]string{"Alex Morgan": "Old Club"}) {
		t.Errorf("review: Which club? answers %v, want Alex's Old Club only", got)
	}
	b.checkPage("review")
	b.logf("change")
	b.clickTo(`form:has(input[name=step][value="2"]) [data-testid=change]`, stepSel(2))
	if got := e2eEval[string](b, `document.querySelector("#answer-1").value`); got != "M" {
		t.Errorf("Change: the saved answer is %q, want M", got)
	}
	b.do("change Alex's size", chromedp.SetValue(chromedp.CSS(`#answer-1`), "L"))
	for n := 3; n <= 8; n++ {
		b.clickTo(`[data-testid=submit]`, stepSel(n))
	}
	b.clickTo(`[data-testid=submit]`, `[data-testid=review]`)
	b.checkReview(map[string]string{"Alex Morgan": "Large", "Robin Morgan": "Small"})

	// Changing the transfer answer to no takes "Which club?" off the path:
	// from question 4 the form goes on at 6, and the review leaves it out.
	b.logf("change the branch")
	b.clickTo(`form:has(input[name=step][value="4"]) [data-testid=change]`, stepSel(4))
	if !b.checked(`#answer-1`) {
		t.Errorf("Change: Alex's saved transfer answer is not ticked")
	}
	b.click(`#answer-1`)
	b.clickTo(`[data-testid=submit]`, stepSel(6))
	if got := b.text(`[data-testid=progress]`); got != "Question 5 of 7" {
		t.Errorf("progress %q, want Question 5 of 7", got)
	}
	b.clickTo(`[data-testid=submit]`, stepSel(7))
	b.clickTo(`[data-testid=submit]`, stepSel(8))
	b.clickTo(`[data-testid=submit]`, `[data-testid=review]`)
	if got := b.reviewAnswers(clubQuestion); len(got) != 0 {
		t.Errorf("review after the branch was left: Which club? answers %v, want none", got)
	}
	b.clickTo(`[data-testid=confirm]`, `[data-testid=done]`)

	// Done: the countdown goes to the payment page by itself (JS), or the
	// Pay now link does (no JS).
	b.logf("done")
	doneAt := time.Now()
	if got := b.attr(`[data-testid=countdown]`, "data-seconds"); got != "5" {
		t.Errorf("countdown of %q seconds", got)
	}
	if !strings.Contains(b.attr(`[data-testid=pay-now]`, "href"), "/pay/PO-") { // the stable pay link, which redirects to the gateway
		t.Errorf("Pay now goes to %q", b.attr(`[data-testid=pay-now]`, "href"))
	}
	if n := b.count(`[data-testid=order-lines] tbody tr`); n < 2 {
		t.Errorf("done page shows %d order lines", n)
	}
	if js {
		// The page leaves by itself after 5 s, too soon for the checks on a
		// busy machine; the flow without JavaScript checks it.
		// The countdown counts down visibly, then navigates by itself.
		e2eRun(b, "wait for the countdown to count", chromedp.Poll[bool](`Number(document.querySelector("[data-countdown-value]").textContent) < 5`,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(4*time.Second)))
		b.waitPath("/dev/pay/", 15*time.Second)
		waited := time.Since(doneAt)
		if waited < 4*time.Second {
			t.Errorf("the countdown went to the payment page after %s, want about 5 s", waited)
		}
		b.logf("the countdown went to the payment page after %s", waited.Round(100*time.Millisecond))
	} else {
		if got := b.text(`[data-countdown-value]`); got != "5" {
			t.Errorf("countdown shows %q without JavaScript", got)
		}
		b.checkPage("done")
		b.click(`[data-testid=pay-now]`)
	}

	// First attempt fails; retry makes a new attempt.
	b.logf("payment")
	b.waitVisible(`[data-testid=pay-page]`)
	ref1 := b.text(`[data-testid=pay-reference]`)
	b.checkPage("pay")
	b.clickTo(`[data-testid=pay-fail]`, `[data-testid=payment-return][data-outcome=failed]`)
	if title := e2eEval[string](b, "document.title"); !strings.HasPrefix(title, "Error:") {
		t.Errorf("failed payment title %q does not start with Error:", title)
	}
	if got := b.text(`[data-testid=return-reference]`); got != ref1 {
		t.Errorf("failed page shows reference %q, want %q", got, ref1)
	}
	b.checkPage("payment-failed")
	b.clickTo(`[data-testid=retry-payment]`, `[data-testid=pay-page]`)
	ref2 := b.text(`[data-testid=pay-reference]`)
	if ref2 == ref1 || ref2 == "" {
		t.Errorf("retry reuses the attempt: reference %q after %q", ref2, ref1)
	}

	// The second attempt is cancelled: back to the registration, pay from there.
	b.clickTo(`[data-testid=pay-cancel]`, `[data-testid=payment-return][data-outcome=cancelled]`)
	b.waitVisible(`[data-testid=retry-payment]`)
	b.checkPage("payment-cancelled")
	b.clickTo(`[data-testid=back-to-registration]`, `[data-testid=overview][data-state=committed]`)
	b.expectStatuses(map[string]string{"Alex Morgan": "Pending Payment", "Robin Morgan": "Pending Payment", "Sam Morgan": "Available"})
	b.checkPage("overview-committed")
	b.clickTo(`[data-testid=pay-now]`, `[data-testid=pay-page]`)
	ref3 := b.text(`[data-testid=pay-reference]`)
	if ref3 == ref2 || ref3 == ref1 {
		t.Errorf("paying after a cancel reuses attempt %q", ref3)
	}

	// Success.
	b.clickTo(`[data-testid=pay-success]`, `[data-testid=payment-return][data-outcome=success]`)
	if got := b.text(`[data-testid=return-title]`); got != "Payment received: registration complete" {
		t.Errorf("success title %q", got)
	}
	if got := b.text(`[data-testid=return-reference]`); got != ref3 {
		t.Errorf("success page shows reference %q, want %q", got, ref3)
	}
	b.waitVisible(`[data-testid=next-steps]`)
	if n := b.count(`[data-testid=retry-payment]`); n != 0 {
		t.Errorf("a paid order offers a retry")
	}
	b.checkPage("payment-success")
	b.navigate(base)
	b.waitVisible(`[data-testid=overview]`)
	b.expectStatuses(map[string]string{"Alex Morgan": "Registered", "Robin Morgan": "Registered",
		"Sam Morgan": "Available", "Jamie Morgan": "Registered"})
	b.checkPage("overview-registered")
	if htmx := e2eEval[bool](b, "typeof window.htmx === 'object'"); htmx != js {
		t.Errorf("at the end, htmx loaded: %v, want %v", htmx, js)
	}

	// Selection, 2 x question 1, questions 2 and 3, Back, 3 to 8, Change,
	// 2 to 8 again, Change, 4, 6, 7 and 8, Confirm; the resume post.
	b.checkPosts(1 + 2 + 2 + 1 + 6 + 1 + 7 + 1 + 4 + 1 + 1)
	b.checkTraffic(hash)
	b.logf("finished; %d pages checked", b.shots)
}

// clubQuestion is the demo's branch question, asked after a yes to transfer.
const clubQuestion = "Which club is this person transferring from?"

// reviewAnswers returns the review page's answers to one question, by person.
func (b *e2eBrowser) reviewAnswers(question string) map[string]string {
	b.t.Helper()
	return e2eEval[map[string]string](b, fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll("[data-testid=review-person]")].flatMap(h => {
		const row = [...h.nextElementSibling.querySelectorAll("[data-testid=review-row]")].find(r => r.querySelector("dt").textContent.trim() === %q);
		return row ? [[h.textContent.trim(), row.querySelector("dd").textContent.trim()]] : [];
	}))`, question))
}

// checkReview checks the check-your-answers page: both persons, a Change
// button per answer, the price lines and the button that names the action.
func (b *e2eBrowser) checkReview(sizes map[string]string) {
	b.t.Helper()
	t := b.t
	if got := b.text(`[data-testid=review] h1`); got != "Check your answers" {
		t.Errorf("review heading %q", got)
	}
	people := e2eEval[[]string](b, `[...document.querySelectorAll("[data-testid=review-person]")].map(e => e.textContent.trim())`)
	if !slices.Equal(people, []string{"Alex Morgan", "Robin Morgan"}) {
		t.Errorf("review lists %v", people)
	}
	rows, changes := b.count(`[data-testid=review-row]`), b.count(`[data-testid=change]`)
	if rows < 12 || changes != rows {
		t.Errorf("review: %d answers with %d Change buttons", rows, changes)
	}
	got := e2eEval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll("[data-testid=review-person]")].map(h =>
		[h.textContent.trim(), [...h.nextElementSibling.querySelectorAll("[data-testid=review-row]")]
			.find(r => r.querySelector("dt").textContent.trim() === "Club shirt size").querySelector("dd").textContent.trim()]))`)
	for name, size := range sizes {
		if got[name] != size {
			t.Errorf("review: %s's shirt size is %q, want %q", name, got[name], size)
		}
	}
	if n := b.count(`[data-testid=order-lines] tbody tr`); n < 2 {
		t.Errorf("review shows %d price lines", n)
	}
	if b.text(`[data-testid=order-total]`) == "" {
		t.Errorf("review shows no total")
	}
	if got := b.text(`[data-testid=confirm]`); got != "Confirm and pay" {
		t.Errorf("confirm button says %q", got)
	}
}

// checkPosts checks how the flow's registration posts were sent (by htmx
// with JavaScript, as plain form submissions without), that there were
// want of them, and that none failed (5xx) or was taken for a stale or
// double submission (409).
func (b *e2eBrowser) checkPosts(want int) {
	b.t.Helper()
	posts, viaHTMX := 0, 0
	for _, x := range b.net.snapshot() {
		if x.status == 409 || x.status >= 500 {
			b.t.Errorf("%s %s answered %d", x.method, x.url, x.status)
		}
		u, err := url.Parse(x.url)
		if err != nil {
			b.t.Fatal(err)
		}
		if x.method != "POST" || !strings.HasPrefix(u.Path, "/membership/register/") {
			continue
		}
		posts++
		if x.htmx {
			viaHTMX++
		}
	}
	switch {
	case posts != want:
		b.t.Errorf("%d registration posts were sent, want %d", posts, want)
	case b.js && viaHTMX != posts:
		b.t.Errorf("with JavaScript, %d of %d registration posts went through htmx", viaHTMX, posts)
	case !b.js && viaHTMX != 0:
		b.t.Errorf("without JavaScript, %d registration posts carried HX-Request", viaHTMX)
	}
}

// key presses one key (kb constants or plain text) on the focused element.
func (b *e2eBrowser) key(keys string) {
	b.t.Helper()
	b.do(fmt.Sprintf("press %q", keys), chromedp.KeyEvent(keys))
}

// enter presses Enter as a keyboard does: a raw key down, the character,
// the key up. (chromedp's KeyEvent sends a key down that Chromium does not
// treat as raw, so a key down that activates a link does not suppress the
// character, and the character then submits the field the link focused.)
func (b *e2eBrowser) enter() {
	b.t.Helper()
	b.do("press Enter", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeChar, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			if typ == input.DispatchKeyEventTypeChar {
				p.Text, p.UnmodifiedText = "\r", "\r"
			}
			if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	}))
}

// tabTo presses Tab until the focused element matches sel.
// submitByKeyboard tabs to the submit button, presses Enter and waits for
// the page showing sel, with the focus moved to its heading.
func (b *e2eBrowser) submitByKeyboard(sel string) {
	b.t.Helper()
	b.tabTo(`[data-testid=submit]`)
	b.enter()
	b.waitVisible(sel)
	b.waitFocus("h1")
}

func (b *e2eBrowser) tabTo(sel string) {
	b.t.Helper()
	var seen []string
	for range 40 {
		if e2eEval[bool](b, fmt.Sprintf("!!document.activeElement && document.activeElement.matches(%q)", sel)) {
			return
		}
		seen = append(seen, b.focused())
		b.key(kb.Tab)
	}
	b.t.Fatalf("e2e: Tab never reached %s; focus went through %s", sel, strings.Join(seen, " → "))
}

// TestE2EKeyboardOnly completes the registration and the payment with key
// presses only (Tab, Space, Enter and typing), with JavaScript on, where
// focus handling after htmx swaps matters.
func TestE2EKeyboardOnly(t *testing.T) {
	t.Parallel()
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	b := newE2EBrowser(t, env, "keyboard", true, false)
	_, hash := e2eLink()

	b.arrive(true)
	b.tabTo(`[data-testid=start]`)
	b.enter()
	b.waitVisible(stepSel(0))
	b.waitFocus("h1")

	b.logf("selection")
	b.tabTo(`#answer-1`)
	b.key(" ")
	b.tabTo(`#answer-3`)
	b.key(" ")
	b.submitByKeyboard(stepSel(1))

	b.logf("question 1, with an error")
	b.tabTo(`#answer-1`)
	b.key("061234567") // one digit short
	b.tabTo(`#answer-3`)
	b.key("0687654321")
	b.enter() // implicit submission from a text field
	b.waitVisible(`[data-testid=error-summary]`)
	b.waitFocus("#error-summary")
	b.tabTo(`[data-testid=error-summary] a`)
	b.enter() // the summary's link goes to the field
	b.waitFocus(`#answer-1`)
	b.key(kb.End)
	b.key("8")
	b.submitByKeyboard(stepSel(2))

	b.logf("question 2")
	b.tabTo(`#answer-1`)
	b.key("M") // type-ahead in a closed select
	b.tabTo(`#answer-3`)
	b.key("S")
	if a, r := e2eEval[string](b, `document.querySelector("#answer-1").value`), e2eEval[string](b, `document.querySelector("#answer-3").value`); a != "M" || r != "S" {
		t.Fatalf("keyboard selection gave sizes %q and %q, want M and S", a, r)
	}
	b.submitByKeyboard(stepSel(3))

	b.logf("question 3 and back")
	b.tabTo(`#answer-1`)
	b.key(" ")
	b.submitByKeyboard(stepSel(4))
	b.tabTo(`[data-testid=back]`)
	b.enter()
	b.waitVisible(stepSel(3))
	b.waitFocus("h1")
	if !b.checked(`#answer-1`) {
		t.Errorf("after Back, Alex's insurance is not checked")
	}
	b.submitByKeyboard(stepSel(4))
	// Nobody transfers: "Which club?" (5) is left out.
	b.submitByKeyboard(stepSel(6))

	b.logf("questions 6 to 8")
	b.tabTo(`#answer-3`)
	b.key(" ")
	b.submitByKeyboard(stepSel(7))
	b.tabTo(`#answer-1`)
	b.key(" ")
	b.submitByKeyboard(stepSel(8))
	b.tabTo(`#answer-1`)
	b.key(" ")
	b.tabTo(`#answer-3`)
	b.key(" ")
	b.submitByKeyboard(`[data-testid=review]`)

	b.logf("review and pay")
	b.tabTo(`[data-testid=confirm]`)
	b.enter()
	b.waitVisible(`[data-testid=done]`)
	b.waitFocus("h1")
	b.tabTo(`[data-testid=pay-now]`)
	b.enter()
	b.waitVisible(`[data-testid=pay-page]`)
	b.tabTo(`[data-testid=pay-success]`)
	b.enter()
	b.waitVisible(`[data-testid=payment-return][data-outcome=success]`)

	b.navigate("/membership/register/1")
	b.waitVisible(`[data-testid=overview]`)
	b.expectStatuses(map[string]string{"Alex Morgan": "Registered", "Robin Morgan": "Registered"})
	// One post per Enter: selection, 2 x question 1, questions 2 and 3,
	// Back, 3, 4, 6, 7 and 8, Confirm.
	b.checkPosts(1 + 2 + 2 + 1 + 5 + 1)
	b.checkTraffic(hash)
	b.logf("finished")
}
