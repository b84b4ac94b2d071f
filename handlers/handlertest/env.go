package handlertest

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

// HashSecret is the server's hash secret: it signs the hash links of the tests' user keys.
const HashSecret = "test-hash-secret-0123456789"

// Env is a real server on a real database with the demo data.
type Env struct {
	TB      testing.TB
	DB      *bun.DB
	Server  *httptest.Server
	Client  *http.Client
	Gateway *payment.TestGateway
	Engine  *engine.Service // the server's engine
}

// NewEnv starts a server on db with the demo data and the default options.
func NewEnv(t testing.TB, db *bun.DB) *Env {
	t.Helper()
	return NewEnvWith(t, db, Options{})
}

// Options shape an Env.
type Options struct {
	Log            io.Writer // default: nowhere
	TrustedProxies []netip.Prefix
	HSTS           time.Duration
	Limiter        throttle.Limiter // sign-in budgets; nil: the default (memory)
	Limits         throttle.SignInConfig
	Backend        *url.URL // set: the hash login asks this admin backend
	// sessionDB holds the sessions; default db. A test that cuts the
	// engine's database keeps its sessions, so requests get past the
	// session check.
	SessionDB *bun.DB
	// provider, when set, takes the payments instead of the test gateway
	// (Stripe on stripe-mock: its webhook route is mounted).
	Provider engine.PaymentProvider
	// hashSecrets opens the organisations' own hash secrets; nil: none.
	HashSecrets *session.Sealer
	// organisationRefresh: 0 the server's default; negative re-reads the
	// organisations on every request, for tests that change them in the
	// database between requests.
	OrganisationRefresh time.Duration
	// publicHost is the host of the portal's base URL (Deps.PublicHost).
	PublicHost string
	// stripeAPIURL is the Stripe API (a stripe-mock) of the organisations
	// that choose Stripe in their own payment settings.
	StripeAPIURL string
	// invitations checks invitation links; nil: none.
	Invitations *invitelink.Signer
	// staff, when set, gives the staff sign-in for the server's address
	// (staff.go: NewStaffEnv).
	Staff func(t testing.TB, db *bun.DB, serverURL string) server.StaffDeps
	// serverTiming reports each request's statements in a Server-Timing
	// header (Deps.ServerTiming); the statements are counted as serve counts them.
	ServerTiming bool
}

// PaymentSecrets seals the organisations' own payment secrets in tests.
var PaymentSecrets = func() *session.Sealer {
	kr, err := session.NewKeyring([]byte(strings.Repeat("p", 32)))
	if err != nil {
		panic(err)
	}
	return kr.Sealer("organisation payment secret")
}()

// OrganisationPayments wires the organisations' own payment settings as serve does
// (cmd/portal orgPaymentOptions): their providers, built by payproviders.
func OrganisationPayments(db *bun.DB, o Options, gw *payment.TestGateway) []engine.ServiceOption {
	settingsSvc := engine.NewService(db, nil, engine.WithSecretSealer(PaymentSecrets))
	links := server.PaymentLinks("")
	dir := payproviders.New(settings.Of(settingsSvc).OrganisationPaymentConfigs, payproviders.Build(payproviders.Options{StripeAPIURL: o.StripeAPIURL, TestGateway: gw,
		PayLink: func(ref string, amount int64) string { return links.PayLink("", ref, amount) }}), slog.New(slog.DiscardHandler), 0)
	return []engine.ServiceOption{engine.WithSecretSealer(PaymentSecrets), payment.WithTestPayments(true),
		payment.WithPaymentProviders(dir.Provider), payment.WithRetiredPaymentProviders(dir.Retired), payment.WithPaymentSettingsChanged(dir.Invalidate),
		payment.WithPaymentMethodProviders(dir.Method)}
}

// NewEnvWith starts a server on db with the demo data, shaped by o.
func NewEnvWith(t testing.TB, db *bun.DB, o Options) *Env {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 3, clock.Now()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	if o.ServerTiming {
		db = db.WithQueryHook(engine.QueryHook{}) // counts bun's statements, as serve does
	}
	env := &Env{TB: t, DB: db}
	var handler http.Handler
	env.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(env.Server.Close)
	env.Gateway = payment.NewTestGateway(server.TestGatewayURLs(env.Server.URL))
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.SessionDB == nil {
		o.SessionDB = db
	}
	log := slog.New(slog.NewTextHandler(o.Log, nil))
	var relay server.RelayDeps
	if o.Backend != nil {
		relay.Backend = backend.New(backend.Config{BaseURL: o.Backend, APIKey: "test-api-key"})
	}
	var provider engine.PaymentProvider = env.Gateway
	gateway := env.Gateway
	if o.Provider != nil {
		provider, gateway = o.Provider, nil
	}
	var staff server.StaffDeps
	if o.Staff != nil {
		staff = o.Staff(t, o.SessionDB, env.Server.URL)
	}
	// The public URL as serve sets it: the payment links are then built on
	// the organisation's address, read in the transactions that hand them out.
	env.Engine = engine.NewService(db, provider, append([]engine.ServiceOption{engine.WithLogger(log), engine.WithPaymentLinks(server.PaymentLinks(env.Server.URL)),
		engine.WithPublicURL(env.Server.URL)},
		OrganisationPayments(db, o, env.Gateway)...)...)
	handler = handlers.New(handlers.Deps{
		Staff:               staff,
		Engine:              env.Engine,
		Sessions:            session.NewManager(session.NewDBStore(o.SessionDB), session.Config{Secure: false}),
		Gateway:             gateway,
		StripeWebhook:       o.Provider != nil && o.Provider.Name() == "stripe",
		HashSecret:          HashSecret,
		Logger:              log,
		TrustedProxies:      o.TrustedProxies,
		HSTSMaxAge:          o.HSTS,
		Relay:               relay,
		SignInLimiter:       o.Limiter,
		SignInLimits:        o.Limits,
		HashSecrets:         o.HashSecrets,
		OrganisationRefresh: o.OrganisationRefresh,
		PublicHost:          o.PublicHost,
		Invitations:         o.Invitations,
		ServerTiming:        o.ServerTiming,
	})
	env.Client = env.NewClient()
	return env
}

// RunJobs runs the due jobs with the payment jobs' handlers of the
// server's engine (a refund) and returns how many ran.
func (env *Env) RunJobs() int {
	env.TB.Helper()
	r := jobs.New(env.DB, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	payment.Of(env.Engine).SchedulePayments(r, clock.Now)
	n, err := r.Work(context.Background(), 100)
	if err != nil {
		env.TB.Fatalf("run jobs: %v", err)
	}
	return n
}

// NewClient is a client with its own cookie jar that does not follow redirects.
func (env *Env) NewClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test if it cannot.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %d body %q: %v", r.Status, r.Body, err)
	}
}

// Do sends a request to the server (a JSON body unless body is a string or bytes),
// headers given as pairs, and reads the whole answer.
func (env *Env) Do(c *http.Client, method, path string, body any, headers ...string) Response {
	env.TB.Helper()
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
			env.TB.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, env.Server.URL+path, rd)
	if err != nil {
		env.TB.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return RoundTrip(env.TB, c, req, headers...)
}

// RoundTrip sends req with c, headers given as pairs, and reads the whole answer.
func RoundTrip(t testing.TB, c *http.Client, req *http.Request, headers ...string) Response {
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
	return Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// Login signs the client in with the hash of userKey.
func (env *Env) Login(c *http.Client, userKey string) {
	env.TB.Helper()
	res := env.Do(c, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": userKey, "hash": hashlink.Sign(HashSecret, userKey)})
	if res.Status != http.StatusOK {
		env.TB.Fatalf("login %s: %d %s", userKey, res.Status, res.Body)
	}
}

// Form is the decoded FormDTO.
type Form struct {
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

// HTTPError is the spec's HTTP error body.
type HTTPError struct {
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

// ProcessError is the spec's process error body.
type ProcessError struct {
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

// ExpectHTTPError checks a response is the spec's HTTP error body with status.
func ExpectHTTPError(t *testing.T, res Response, status int, path string) HTTPError {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	var e HTTPError
	res.JSON(t, &e)
	if e.Status != status || e.Error != http.StatusText(status) || e.Message == "" || e.Path != path || e.Errors == nil {
		t.Fatalf("error body %s does not have the spec's shape for %d at %s", res.Body, status, path)
	}
	if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
		t.Fatalf("timestamp %q: %v", e.Timestamp, err)
	}
	return e
}

// DemoAnswers are answers for the demo definition's steps, for persons 1 (adult) and 3 (junior).
var DemoAnswers = map[int][]map[string]any{
	1: {{"id": 1, "answer": "0612345678"}, {"id": 3, "answer": "0687654321"}},
	2: {{"id": 1, "answer": "M"}, {"id": 3, "answer": "S"}},
	3: {{"id": 1, "answer": "1"}, {"id": 3, "answer": "0"}},
	4: {{"id": 1, "answer": "0"}, {"id": 3, "answer": "0"}},
	5: {{"id": 1, "answer": "Old Club"}}, // transfer_club: only after a yes at 4
	6: {{"id": 3, "answer": "1"}},
	7: {{"id": 1, "answer": "1"}, {"id": 3, "answer": "0"}},
	8: {{"id": 1, "answer": "1"}, {"id": 3, "answer": "1"}},
}

// DemoPath is the path of demoAnswers through the demo definition: nobody
// transfers, so transfer_club (5) is left out.
var DemoPath = []int{1, 2, 3, 4, 6, 7, 8}

// DemoLast is the demo definition's last step; demoLast+1 is the DONE form's step.
const DemoLast = 8

// StartDemo signs in as demo and returns the new process at person selection.
func (env *Env) StartDemo(c *http.Client) Form {
	env.TB.Helper()
	env.Login(c, "demo")
	res := env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil)
	if res.Status != http.StatusCreated {
		env.TB.Fatalf("load: %d %s", res.Status, res.Body)
	}
	var f Form
	res.JSON(env.TB, &f)
	return f
}

// Next posts one step and decodes the form.
func (env *Env) Next(c *http.Client, pid string, step int, people []map[string]any) (Response, Form) {
	env.TB.Helper()
	res := env.Do(c, http.MethodPost, "/api/forms/next", map[string]any{"processId": pid, "step": step, "people": people})
	var f Form
	if res.Status == http.StatusOK {
		res.JSON(env.TB, &f)
	}
	return res, f
}

// CompleteDemo runs selection and all questions and returns the DONE form.
func (env *Env) CompleteDemo(c *http.Client) Form {
	env.TB.Helper()
	f := env.StartDemo(c)
	res, f := env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}})
	if res.Status != http.StatusOK {
		env.TB.Fatalf("select: %d %s", res.Status, res.Body)
	}
	for _, step := range DemoPath {
		res, f = env.Next(c, f.ProcessID, step, DemoAnswers[step])
		if res.Status != http.StatusOK {
			env.TB.Fatalf("step %d: %d %s", step, res.Status, res.Body)
		}
	}
	return f
}

// LogBuffer collects a server's log lines; the server writes from many goroutines.
type LogBuffer struct {
	Mu  sync.Mutex
	Buf bytes.Buffer
}

// Write appends p; a server's goroutines may call it at once.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return b.Buf.Write(p)
}

// Take returns what was logged since the last take, and forgets it.
func (b *LogBuffer) Take() string {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	s := b.Buf.String()
	b.Buf.Reset()
	return s
}

// String returns everything logged since the last Take.
func (b *LogBuffer) String() string {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return b.Buf.String()
}

// Lines returns the log lines that contain every one of parts.
func (b *LogBuffer) Lines(parts ...string) []string {
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

// Together runs f(0) … f(n-1) in n goroutines released at the same moment,
// so that they race, and returns when every one has returned.
func Together(n int, f func(i int)) {
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

// Checkout follows an order's stable pay link (as the browser does) and
// returns the provider's checkout it redirects to: the test gateway's page.
func (env *Env) Checkout(c *http.Client, payLink string) *url.URL {
	env.TB.Helper()
	u, err := url.Parse(payLink)
	if err != nil {
		env.TB.Fatalf("pay link %q: %v", payLink, err)
	}
	if !strings.HasPrefix(u.Path, "/pay/") {
		return u
	}
	res := env.Do(c, http.MethodGet, u.RequestURI(), nil)
	to, err := url.Parse(res.Header.Get("Location"))
	if res.Status != http.StatusSeeOther || err != nil || !strings.HasPrefix(to.Path, "/dev/pay/") {
		env.TB.Fatalf("pay link %q: %d to %q, want 303 to the test gateway", payLink, res.Status, res.Header.Get("Location"))
	}
	return to
}
