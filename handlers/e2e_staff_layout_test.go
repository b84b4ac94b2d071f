package handlers_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	staffpages "portal/handlers/staff"
)

// staffLayoutWidths are the widths every staff page is laid out at: a
// phone, a tablet, a desktop.
var staffLayoutWidths = []int64{390, 768, 1280}

// staffShotWidths are the widths of the docs' screenshots (make
// screenshots-staff).
var staffShotWidths = []int64{390, 1280}

// staffLayoutCheck finds what a reader would see broken at the current
// width: the page scrolling sideways, text clipped by a box that hides
// its overflow, content wider than its table cell or block, and form
// fields or buttons lying over each other.
const staffLayoutCheck = `(() => {
	const out = [];
	const de = document.documentElement;
	if (de.scrollWidth > window.innerWidth) out.push("the page scrolls sideways: " + de.scrollWidth + " px wide at " + window.innerWidth);
	// checkVisibility: the content of a closed <details> keeps a layout box
	// in Chromium (content-visibility), but nobody sees it.
	const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden" && (!el.checkVisibility || el.checkVisibility()); };
	const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.dataset && el.dataset.testid ? "[data-testid=" + el.dataset.testid + "]" : "") +
		' "' + (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50) + '"';
	for (const el of document.body.querySelectorAll("*")) {
		if (!shown(el) || el.closest(".sr-only") || el.closest("svg")) continue;
		const cs = getComputedStyle(el);
		const hides = ["hidden", "clip"].includes(cs.overflowX) || ["hidden", "clip"].includes(cs.overflowY);
		const block = !cs.display.startsWith("inline") || cs.display === "inline-block";
		if (hides && el.scrollWidth > el.clientWidth + 1) out.push("text clipped: " + name(el) + " (" + el.scrollWidth + " > " + el.clientWidth + ")");
		else if (!hides && block && el.matches("td, th, dd, dt, li, p, h1, h2, h3, label, button, .btn, .card") && el.scrollWidth > el.clientWidth + 1)
			out.push("wider than its box: " + name(el) + " (" + el.scrollWidth + " > " + el.clientWidth + ")");
	}
	const fields = [...document.querySelectorAll("main input:not([type=hidden]), main select, main textarea, main button, main label, main .btn")].filter(shown);
	for (let i = 0; i < fields.length; i++) for (let j = i + 1; j < fields.length; j++) {
		const a = fields[i], b = fields[j];
		if (a.contains(b) || b.contains(a) || (a.htmlFor && a.htmlFor === b.id) || (b.htmlFor && b.htmlFor === a.id)) continue;
		const r = a.getBoundingClientRect(), s = b.getBoundingClientRect();
		const w = Math.min(r.right, s.right) - Math.max(r.left, s.left), h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
		if (w > 1 && h > 1) out.push("overlap: " + name(a) + " and " + name(b));
	}
	return out;
})()`

// staffPageExamples fills the parameters of the staff pages that have
// them with records of the walk; a page another change adds with a
// parameter not named here is visited at its route's Example.
func staffPageExamples(registration, webhook, debitRun int64) map[string]string {
	return map[string]string{
		"/registrations/:id": "/registrations/" + strconv.FormatInt(registration, 10),
		"/webhooks/:id":      "/webhooks/" + strconv.FormatInt(webhook, 10),
		"/debits/:id":        "/debits/" + strconv.FormatInt(debitRun, 10),
	}
}

// staffPageName names a staff page for screenshots and messages:
// "overview", "registrations", "registration", "setup-staff".
func staffPageName(path string) string {
	if path == "" {
		return "overview"
	}
	var parts []string
	for _, p := range strings.Split(strings.Trim(path, "/"), "/") {
		if !strings.HasPrefix(p, ":") {
			parts = append(parts, p)
		}
	}
	name := strings.Join(parts, "-")
	if strings.HasSuffix(path, "/:id") {
		name = strings.TrimSuffix(name, "s") // one registration, one webhook
	}
	return name
}

// TestE2EStaffLayout loads every staff page of the route table (GET, not
// a download) as an administrator, on a season with an unpaid and a
// partly paid order, at 390, 768 and 1280 px: nothing scrolls sideways,
// no text is clipped or overflows its cell, no fields overlap; axe-core
// finds no violation of any impact. PORTAL_DOCS_SCREENSHOTS=1 (make
// screenshots-staff) also writes each page at 390 and 1280 px to
// docs/img/staff-NAME-WIDTH.png.
func TestE2EStaffLayout(t *testing.T) {
	t.Parallel()
	env := handlertest.NewStaffBankEnv(t, dbtest.SQLite(t), true)
	order, _ := env.UnpaidDemoOrder()
	handlertest.SecondUnpaidRegistration(t, env.DB, order)
	ctx := t.Context()
	// A part of the transfer arrived: the detail shows it, the open payments what is left.
	if _, err := staff.Of(engine.NewService(env.DB, env.Provider)).CaptureForRegistration(ctx, engine.CommandLine, 1, order.ProcessInstanceID,
		payment.Capture{AmountMinor: 5000, BookedOn: clock.Now().UTC(), Note: "statement 41"}); err != nil {
		t.Fatal(err)
	}
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	// A webhook, added as the setup page adds one (its secret needs the server's key).
	admin := env.MustStaffSignIn("admin@example.org", "/staff")
	env.Post(admin, "/staff/webhooks", url.Values{"url": {"https://club.example/hooks"}, "events": {"payment.succeeded"}}, "Origin", env.Server.URL)
	var hook engine.WebhookEndpoint
	if err := env.DB.NewSelect().Model(&hook).Limit(1).Scan(ctx); err != nil {
		t.Fatalf("the webhook: %v", err)
	}
	b := newE2EBrowser(t, env.Env, "staff-layout", true, true)
	staffBrowserSignIn(env, b, "admin@example.org", `[data-testid=overview-states]`)

	shots := os.Getenv("PORTAL_DOCS_SCREENSHOTS") == "1"
	examples := staffPageExamples(order.ProcessInstanceID, hook.ID, handlertest.LayoutDebitRun(t, env.DB, order))
	pages := 0
	for _, r := range staffpages.StaffRoutes() {
		if r.Method != "GET" || strings.HasSuffix(r.Path, ".csv") || strings.HasSuffix(r.Path, ".pdf") || strings.HasSuffix(r.Path, ".json") ||
			strings.HasSuffix(r.Path, "/file") {
			continue
		}
		path := r.Path
		if strings.Contains(path, ":") {
			if ex, ok := examples[path]; ok {
				path = ex
			} else {
				t.Logf("%s: no record to show; visiting its example %s", r.Path, r.Example)
				path = r.Example
			}
		}
		name := staffPageName(r.Path)
		b.navigate(server.StaffPrefix + path)
		if ct := e2eEval[string](b, "document.contentType"); ct != "text/html" {
			t.Logf("%s: %s, not a page", path, ct)
			continue
		}
		b.waitVisible(`[data-testid=staff-main]`)
		pages++
		for _, w := range staffLayoutWidths {
			b.do("viewport", chromedp.EmulateViewport(w, 900))
			for _, p := range e2eEval[[]string](b, staffLayoutCheck) {
				t.Errorf("%s at %d px: %s", name, w, p)
			}
			// Setup's section tabs scroll sideways on a phone only: from a
			// tablet's width they wrap.
			if w >= 768 && e2eEval[bool](b, `(() => { const n = document.querySelector("[data-testid=setup-sections]"); return !!n && n.scrollWidth > n.clientWidth + 1; })()`) {
				t.Errorf("%s at %d px: the setup section tabs scroll sideways", name, w)
			}
		}
		for _, v := range b.axeViolations(name) {
			t.Errorf("%s: axe-core %s violation %s (%s) at %s", name, v.Impact, v.ID, v.Help, strings.Join(v.Targets, ", "))
		}
		if shots {
			for _, w := range staffShotWidths {
				staffScreenshotAt(t, b, fmt.Sprintf("staff-%s-%d.png", name, w), w)
			}
		}
		b.do("viewport", chromedp.EmulateViewport(1280, 900))
	}
	if pages < 10 {
		t.Fatalf("only %d staff pages were laid out", pages)
	}
	// The compact menu at 390 px: one row, opened with the keyboard.
	b.navigate(server.StaffPrefix + "/registrations?" + url.Values{"sort": {"owed"}}.Encode())
	b.waitVisible(`[data-testid=registrations-table]`)
	b.do("viewport", chromedp.EmulateViewport(390, 900))
	if h := e2eEval[float64](b, `document.querySelector("nav[aria-label]").getBoundingClientRect().height`); h > 48 {
		t.Errorf("the navigation is %.0f px high at 390 px, want one row", h)
	}
	b.do("focus the menu", chromedp.Focus(chromedp.CSS(`[data-testid=staff-nav-toggle]`)))
	b.enter()
	b.waitVisible(`[data-testid=staff-nav-compact] a[href="/staff/audit"]`)
	b.do("viewport", chromedp.EmulateViewport(1280, 900))

	// Money by payment method fits its block from 390 to 1280 px in every
	// language: no column cut off (its box does not scroll), no word
	// broken inside (each word of a label or figure fits its cell).
	for _, code := range []string{"de", "fr", "en"} {
		b.navigate(server.StaffPrefix + "/year-report?lang=" + code)
		b.waitVisible(`[data-testid=year-report-by-method]`)
		for _, w := range []int64{390, 768, 1024, 1280} {
			b.do("viewport", chromedp.EmulateViewport(w, 900))
			for _, p := range e2eEval[[]string](b, yearReportMethodsFit) {
				t.Errorf("year-end report (%s) at %d px: money by payment method: %s", code, w, p)
			}
		}
	}
	b.do("viewport", chromedp.EmulateViewport(1280, 900))
}

// yearReportMethodsFit finds what does not fit in the year-end report's
// money by payment method: its box scrolling (a column cut off), or a word
// wider than its cell (broken inside).
const yearReportMethodsFit = `(() => {
	const out = [];
	const sec = document.querySelector("[data-testid=year-report-by-method]");
	const box = sec.querySelector("div");
	if (box.scrollWidth > box.clientWidth + 1) out.push("cut off: " + box.scrollWidth + " px in " + box.clientWidth);
	const ctx = document.createElement("canvas").getContext("2d");
	for (const el of sec.querySelectorAll("th, td")) {
		if (!el.getClientRects().length) continue;
		const cs = getComputedStyle(el);
		ctx.font = cs.font;
		const inner = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
		for (const word of el.textContent.trim().split(/\s+/)) {
			if (word && ctx.measureText(word).width > inner + 1) out.push("the word " + JSON.stringify(word) + " broken in " + Math.round(inner) + " px");
		}
	}
	return out;
})()`

// staffScreenshotAt writes the whole page at width px to docs/img/name.
func staffScreenshotAt(t *testing.T, b *e2eBrowser, name string, width int64) {
	t.Helper()
	b.do("viewport", chromedp.EmulateViewport(width, 900))
	png := e2eRun(b, "screenshot", chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(e2eModuleRoot(t), "docs", "img", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
