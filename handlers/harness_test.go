package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/jobs"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/payproviders"
	"portal/handlers"
	"portal/handlers/server"
	"portal/relay/backend"
	"portal/relay/hashlink"
	"portal/relay/invitelink"
	"portal/relay/session"
	"portal/relay/throttle"
)

const testSecret = "test-hash-secret-0123456789"

// testEnv is a real server on a real database with the demo data.
type testEnv struct {
	t      testing.TB
	db     *bun.DB
	srv    *httptest.Server
	client *http.Client
	gw     *payment.TestGateway
	svc    *engine.Service // the server's engine
}

func newEnv(t testing.TB, db *bun.DB) *testEnv {
	t.Helper()
	return newEnvWith(t, db, envOptions{})
}

// envOptions shape a testEnv.
type envOptions struct {
	log            io.Writer // default: nowhere
	trustedProxies []netip.Prefix
	hsts           time.Duration
	limiter        throttle.Limiter // sign-in budgets; nil: the default (memory)
	limits         throttle.SignInConfig
	backend        *url.URL // set: the hash login asks this admin backend
	// sessionDB holds the sessions; default db. A test that cuts the
	// engine's database keeps its sessions, so requests get past the
	// session check.
	sessionDB *bun.DB
	// provider, when set, takes the payments instead of the test gateway
	// (Stripe on stripe-mock: its webhook route is mounted).
	provider engine.PaymentProvider
	// hashSecrets opens the organisations' own hash secrets; nil: none.
	hashSecrets *session.Sealer
	// organisationRefresh: 0 the server's default; negative re-reads the
	// organisations on every request, for tests that change them in the
	// database between requests.
	organisationRefresh time.Duration
	// publicHost is the host of the portal's base URL (Deps.PublicHost).
	publicHost string
	// stripeAPIURL is the Stripe API (a stripe-mock) of the organisations
	// that choose Stripe in their own payment settings.
	stripeAPIURL string
	// invitations checks invitation links; nil: none.
	invitations *invitelink.Signer
	// staff, when set, gives the staff sign-in for the server's address
	// (staff_test.go: staffDeps).
	staff func(t testing.TB, db *bun.DB, serverURL string) server.StaffDeps
	// serverTiming reports each request's statements in a Server-Timing
	// header (Deps.ServerTiming); the statements are counted as serve counts them.
	serverTiming bool
}

// testPaymentSecrets seals the organisations' own payment secrets in tests.
var testPaymentSecrets = func() *session.Sealer {
	kr, err := session.NewKeyring([]byte(strings.Repeat("p", 32)))
	if err != nil {
		panic(err)
	}
	return kr.Sealer("organisation payment secret")
}()

// orgPayments wires the organisations' own payment settings as serve does
// (cmd/portal orgPaymentOptions): their providers, built by payproviders.
func orgPayments(db *bun.DB, o envOptions, gw *payment.TestGateway) []engine.ServiceOption {
	settingsSvc := engine.NewService(db, nil, engine.WithSecretSealer(testPaymentSecrets))
	links := server.PaymentLinks("")
	dir := payproviders.New(settings.Of(settingsSvc).OrganisationPaymentConfigs, payproviders.Build(payproviders.Options{StripeAPIURL: o.stripeAPIURL, TestGateway: gw,
		PayLink: func(ref string, amount int64) string { return links.PayLink("", ref, amount) }}), slog.New(slog.DiscardHandler), 0)
	return []engine.ServiceOption{engine.WithSecretSealer(testPaymentSecrets), payment.WithTestPayments(true),
		payment.WithPaymentProviders(dir.Provider), payment.WithRetiredPaymentProviders(dir.Retired), payment.WithPaymentSettingsChanged(dir.Invalidate),
		payment.WithPaymentMethodProviders(dir.Method)}
}

func newEnvWith(t testing.TB, db *bun.DB, o envOptions) *testEnv {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 3, clock.Now()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	if o.serverTiming {
		db = db.WithQueryHook(engine.QueryHook{}) // counts bun's statements, as serve does
	}
	env := &testEnv{t: t, db: db}
	var handler http.Handler
	env.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(env.srv.Close)
	env.gw = payment.NewTestGateway(server.TestGatewayURLs(env.srv.URL))
	if o.log == nil {
		o.log = io.Discard
	}
	if o.sessionDB == nil {
		o.sessionDB = db
	}
	log := slog.New(slog.NewTextHandler(o.log, nil))
	var relay server.RelayDeps
	if o.backend != nil {
		relay.Backend = backend.New(backend.Config{BaseURL: o.backend, APIKey: "test-api-key"})
	}
	var provider engine.PaymentProvider = env.gw
	gateway := env.gw
	if o.provider != nil {
		provider, gateway = o.provider, nil
	}
	var staff server.StaffDeps
	if o.staff != nil {
		staff = o.staff(t, o.sessionDB, env.srv.URL)
	}
	// The public URL as serve sets it: the payment links are then built on
	// the organisation's address, read in the transactions that hand them out.
	env.svc = engine.NewService(db, provider, append([]engine.ServiceOption{engine.WithLogger(log), engine.WithPaymentLinks(server.PaymentLinks(env.srv.URL)),
		engine.WithPublicURL(env.srv.URL)},
		orgPayments(db, o, env.gw)...)...)
	handler = handlers.New(handlers.Deps{
		Staff:               staff,
		Engine:              env.svc,
		Sessions:            session.NewManager(session.NewDBStore(o.sessionDB), session.Config{Secure: false}),
		Gateway:             gateway,
		StripeWebhook:       o.provider != nil && o.provider.Name() == "stripe",
		HashSecret:          testSecret,
		Logger:              log,
		TrustedProxies:      o.trustedProxies,
		HSTSMaxAge:          o.hsts,
		Relay:               relay,
		SignInLimiter:       o.limiter,
		SignInLimits:        o.limits,
		HashSecrets:         o.hashSecrets,
		OrganisationRefresh: o.organisationRefresh,
		PublicHost:          o.publicHost,
		Invitations:         o.invitations,
		ServerTiming:        o.serverTiming,
	})
	env.client = env.newClient()
	return env
}

// runJobs runs the due jobs with the payment jobs' handlers of the
// server's engine (a refund) and returns how many ran.
func (env *testEnv) runJobs() int {
	env.t.Helper()
	r := jobs.New(env.db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	payment.Of(env.svc).SchedulePayments(r, clock.Now)
	n, err := r.Work(context.Background(), 100)
	if err != nil {
		env.t.Fatalf("run jobs: %v", err)
	}
	return n
}

func (env *testEnv) newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %d body %q: %v", r.status, r.body, err)
	}
}

func (env *testEnv) do(c *http.Client, method, path string, body any, headers ...string) response {
	env.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			env.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, env.srv.URL+path, rd)
	if err != nil {
		env.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return roundTrip(env.t, c, req, headers...)
}

// roundTrip sends req with c, headers given as pairs, and reads the whole answer.
func roundTrip(t testing.TB, c *http.Client, req *http.Request, headers ...string) response {
	t.Helper()
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" { // net/http sends req.Host, not a Host header
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// login signs the client in with the hash of userKey.
func (env *testEnv) login(c *http.Client, userKey string) {
	env.t.Helper()
	res := env.do(c, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": userKey, "hash": hashlink.Sign(testSecret, userKey)})
	if res.status != http.StatusOK {
		env.t.Fatalf("login %s: %d %s", userKey, res.status, res.body)
	}
}

// form is the decoded FormDTO.
type form struct {
	ProcessID    string   `json:"processId"`
	Step         int      `json:"step"`
	ProcessState string   `json:"processState"`
	Question     *string  `json:"question"`
	QuestionType *string  `json:"questionType"`
	Required     *bool    `json:"required"`
	Options      []string `json:"options"`
	People       []struct {
		ID         int64   `json:"id"`
		FirstName  string  `json:"firstName"`
		Answer     *string `json:"answer"`
		Hide       bool    `json:"hide"`
		Selected   bool    `json:"selected"`
		CanSelect  bool    `json:"canSelect"`
		Status     string  `json:"status"`
		PaymentURL *string `json:"paymentUrl"`
	} `json:"people"`
	PaymentURL *string `json:"paymentUrl"`
}

type httpError struct {
	Timestamp string `json:"timestamp"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Message   string `json:"message"`
	Path      string `json:"path"`
	Errors    []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// processError is the spec's process error body.
type processError struct {
	ProcessID    string `json:"processId"`
	Step         int    `json:"step"`
	ProcessState string `json:"processState"`
	Message      string `json:"message"`
	Errors       struct {
		People []struct {
			ID    int64  `json:"id"`
			Error string `json:"error"`
		} `json:"people"`
	} `json:"errors"`
}

// expectHTTPError checks a response is the spec's HTTP error body with status.
func expectHTTPError(t *testing.T, res response, status int, path string) httpError {
	t.Helper()
	if res.status != status {
		t.Fatalf("status %d, want %d: %s", res.status, status, res.body)
	}
	var e httpError
	res.json(t, &e)
	if e.Status != status || e.Error != http.StatusText(status) || e.Message == "" || e.Path != path || e.Errors == nil {
		t.Fatalf("error body %s does not have the spec's shape for %d at %s", res.body, status, path)
	}
	if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
		t.Fatalf("timestamp %q: %v", e.Timestamp, err)
	}
	return e
}

// answers for the demo definition's steps, for persons 1 (adult) and 3 (junior).
var demoAnswers = map[int][]map[string]any{
	1: {{"id": 1, "answer": "0612345678"}, {"id": 3, "answer": "0687654321"}},
	2: {{"id": 1, "answer": "M"}, {"id": 3, "answer": "S"}},
	3: {{"id": 1, "answer": "1"}, {"id": 3, "answer": "0"}},
	4: {{"id": 1, "answer": "0"}, {"id": 3, "answer": "0"}},
	5: {{"id": 1, "answer": "Old Club"}}, // transfer_club: only after a yes at 4
	6: {{"id": 3, "answer": "1"}},
	7: {{"id": 1, "answer": "1"}, {"id": 3, "answer": "0"}},
	8: {{"id": 1, "answer": "1"}, {"id": 3, "answer": "1"}},
}

// demoPath is the path of demoAnswers through the demo definition: nobody
// transfers, so transfer_club (5) is left out.
var demoPath = []int{1, 2, 3, 4, 6, 7, 8}

// demoLast is the demo definition's last step; demoLast+1 is the DONE form's step.
const demoLast = 8

// startDemo signs in as demo and returns the new process at person selection.
func (env *testEnv) startDemo(c *http.Client) form {
	env.t.Helper()
	env.login(c, "demo")
	res := env.do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil)
	if res.status != http.StatusCreated {
		env.t.Fatalf("load: %d %s", res.status, res.body)
	}
	var f form
	res.json(env.t, &f)
	return f
}

// next posts one step and decodes the form.
func (env *testEnv) next(c *http.Client, pid string, step int, people []map[string]any) (response, form) {
	env.t.Helper()
	res := env.do(c, http.MethodPost, "/api/forms/next", map[string]any{"processId": pid, "step": step, "people": people})
	var f form
	if res.status == http.StatusOK {
		res.json(env.t, &f)
	}
	return res, f
}

// completeDemo runs selection and all questions and returns the DONE form.
func (env *testEnv) completeDemo(c *http.Client) form {
	env.t.Helper()
	f := env.startDemo(c)
	res, f := env.next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}})
	if res.status != http.StatusOK {
		env.t.Fatalf("select: %d %s", res.status, res.body)
	}
	for _, step := range demoPath {
		res, f = env.next(c, f.ProcessID, step, demoAnswers[step])
		if res.status != http.StatusOK {
			env.t.Fatalf("step %d: %d %s", step, res.status, res.body)
		}
	}
	return f
}

// logBuffer collects a server's log lines; the server writes from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns what was logged since the last take, and forgets it.
func (b *logBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the log lines that contain every one of parts.
func (b *logBuffer) lines(parts ...string) []string {
	var out []string
	for line := range strings.SplitSeq(b.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

// together runs f(0) … f(n-1) in n goroutines released at the same moment,
// so that they race, and returns when every one has returned.
func together(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// checkout follows an order's stable pay link (as the browser does) and
// returns the provider's checkout it redirects to: the test gateway's page.
func (env *testEnv) checkout(c *http.Client, payLink string) *url.URL {
	env.t.Helper()
	u, err := url.Parse(payLink)
	if err != nil {
		env.t.Fatalf("pay link %q: %v", payLink, err)
	}
	if !strings.HasPrefix(u.Path, "/pay/") {
		return u
	}
	res := env.do(c, http.MethodGet, u.RequestURI(), nil)
	to, err := url.Parse(res.header.Get("Location"))
	if res.status != http.StatusSeeOther || err != nil || !strings.HasPrefix(to.Path, "/dev/pay/") {
		env.t.Fatalf("pay link %q: %d to %q, want 303 to the test gateway", payLink, res.status, res.header.Get("Location"))
	}
	return to
}
