package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers"
	"portal/handlers/adminapi"
	"portal/handlers/server"
	"portal/relay/hashlink"
)

// loadOpenAPI loads the embedded document and checks it is a valid OpenAPI 3 description.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(server.OpenAPIDocument)
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

var echoParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// TestOpenAPIDocument checks the document itself: valid, indented, the
// promised metadata, and exactly the /api routes echo registers.
func TestOpenAPIDocument(t *testing.T) {
	doc := loadOpenAPI(t)

	if doc.OpenAPI != "3.0.3" || doc.Info == nil || doc.Info.Version != "3.0.0" {
		t.Errorf("openapi %q, info.version %v: want 3.0.3 and 3.0.0", doc.OpenAPI, doc.Info)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Errorf("servers %v, want one entry \"/\"", doc.Servers)
	}

	var compact, indented bytes.Buffer
	if err := json.Compact(&compact, server.OpenAPIDocument); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&indented, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	indented.WriteByte('\n')
	if !bytes.Equal(indented.Bytes(), server.OpenAPIDocument) {
		t.Errorf("openapi.json is not indented with two spaces (json.Indent of it differs)")
	}

	// Every /api route of echo is documented, and every documented operation is a route.
	routes := map[string]bool{}
	for _, r := range handlers.New(handlers.Deps{}).Routes() {
		if !strings.HasPrefix(r.Path, "/api/") || r.Path == "/api/*" || r.Method == echo.RouteNotFound {
			continue
		}
		routes[r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for r := range routes {
		if !documented[r] {
			t.Errorf("route %s is registered in echo but not documented", r)
		}
	}
	for d := range documented {
		if !routes[d] {
			t.Errorf("operation %s is documented but not a route", d)
		}
	}

	// Security: the session cookie on the form endpoints, nothing on the public ones.
	scheme := doc.Components.SecuritySchemes["sessionCookie"]
	if scheme == nil || scheme.Value.Type != "apiKey" || scheme.Value.In != "cookie" || scheme.Value.Name != "JSESSIONID" {
		t.Errorf("security scheme sessionCookie must be an apiKey in the cookie JSESSIONID")
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			secured := op.Security != nil && len(*op.Security) == 1 && (*op.Security)[0]["sessionCookie"] != nil
			if want := strings.HasPrefix(path, "/api/forms/"); secured != want {
				t.Errorf("%s %s: session cookie security %v, want %v", method, path, secured, want)
			}
			for code, resp := range op.Responses.Map() {
				if resp.Value.Description == nil || len(*resp.Value.Description) < 30 {
					t.Errorf("%s %s %s: the description must state the condition", method, path, code)
				}
			}
		}
	}
	back := doc.Paths.Value("/api/forms/processes/{processid}/back").Post
	if back == nil || back.Extensions["x-extension"] != true || !strings.Contains(back.Description, "xtension") {
		t.Errorf("the back operation must be marked x-extension: true and say so in its description")
	}

	// FormDTO: every field required; the nullable ones are exactly those the handlers send as null.
	form := doc.Components.Schemas["FormDTO"].Value
	var props []string
	for name := range form.Properties {
		props = append(props, name)
	}
	sort.Strings(props)
	required := slices.Clone(form.Required)
	sort.Strings(required)
	if !slices.Equal(props, required) {
		t.Errorf("FormDTO properties %v, required %v: every field must be required", props, required)
	}
	var nullable []string
	for _, name := range props {
		if form.Properties[name].Value.Nullable {
			nullable = append(nullable, name)
		}
	}
	if want := []string{"options", "paymentUrl", "question", "questionType", "required"}; !slices.Equal(nullable, want) {
		t.Errorf("FormDTO nullable fields %v, want %v", nullable, want)
	}
	states := doc.Components.Schemas["ProcessState"].Value.Enum
	if len(states) != 10 || !slices.Contains(states, any("INIT")) || slices.Contains(states, any("ERROR")) {
		t.Errorf("ProcessState enum %v", states)
	}
}

// apiChecker sends requests to a running test server and validates every
// response against the document; it records which documented responses
// were seen.
type apiChecker struct {
	t      *testing.T
	env    *testEnv
	router routers.Router
	opts   *openapi3filter.Options
	seen   map[string]bool // "POST /api/forms/next 409"
}

func newAPIChecker(t *testing.T, env *testEnv, doc *openapi3.T) *apiChecker {
	t.Helper()
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	return &apiChecker{t: t, env: env, router: router, seen: map[string]bool{},
		opts: &openapi3filter.Options{
			IncludeResponseStatus: true, // an undocumented status fails
			MultiError:            true,
			// The session cookie is checked by the server itself, not by the validator.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		}}
}

func bodyBytes(t *testing.T, body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
}

// do sends a request with env.do and validates the response against the document.
func (ck *apiChecker) do(c *http.Client, method, path string, body any, headers ...string) response {
	ck.t.Helper()
	res := ck.env.do(c, method, path, body, headers...)
	ck.validate(ck.request(method, path, body, headers...), res)
	return res
}

// conforming is do for a request that must itself conform to the document.
func (ck *apiChecker) conforming(c *http.Client, method, path string, body any, headers ...string) response {
	ck.t.Helper()
	req := ck.request(method, path, body, headers...)
	route, params, err := ck.router.FindRoute(req)
	if err != nil {
		ck.t.Fatalf("%s %s: no route in the document: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: ck.opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		ck.t.Errorf("%s %s: the request does not conform to the document: %v", method, path, err)
	}
	return ck.do(c, method, path, body, headers...)
}

// request rebuilds the request env.do sends, for routing and validation.
func (ck *apiChecker) request(method, path string, body any, headers ...string) *http.Request {
	ck.t.Helper()
	raw := bodyBytes(ck.t, body)
	req, err := http.NewRequest(method, ck.env.srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		ck.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

func (ck *apiChecker) validate(req *http.Request, res response) {
	ck.t.Helper()
	if err := ck.check(req, res); err != nil {
		ck.t.Errorf("%s %s -> %d %s: %v", req.Method, req.URL.RequestURI(), res.status, res.body, err)
	}
}

// check validates one response against the document and records it as seen.
func (ck *apiChecker) check(req *http.Request, res response) error {
	route, params, err := ck.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("no route in the document: %w", err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: ck.opts},
		Status:                 res.status,
		Header:                 res.header,
		Options:                ck.opts,
	}
	in.SetBodyBytes(res.body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("the response violates the document: %w", err)
	}
	ref := route.Operation.Responses.Status(res.status)
	if len(ref.Value.Content) == 0 {
		if len(res.body) != 0 {
			return errors.New("the document promises an empty body")
		}
	} else if ct := res.header.Get("Content-Type"); strings.HasPrefix(ct, "text/csv") || ct == "application/yaml" || strings.HasPrefix(ct, "application/xml") {
		// An export, a definition or a bank file in another format: the validation above is all there is to check.
	} else {
		var value any
		if err := json.Unmarshal(res.body, &value); err != nil {
			return fmt.Errorf("the body is not JSON: %w", err)
		}
		media := ref.Value.Content.Get(res.header.Get("Content-Type"))
		if extra := undocumented(media.Schema.Value, value, "body"); len(extra) > 0 {
			return fmt.Errorf("members not in the document: %s", strings.Join(extra, ", "))
		}
	}
	ck.seen[fmt.Sprintf("%s %s %d", req.Method, route.Path, res.status)] = true
	return nil
}

// undocumented lists the object members of v that its schema does not name.
func undocumented(s *openapi3.Schema, v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if len(s.Properties) == 0 {
			return nil
		}
		for k, member := range v {
			p, ok := s.Properties[k]
			if !ok {
				out = append(out, at+"."+k)
				continue
			}
			out = append(out, undocumented(p.Value, member, at+"."+k)...)
		}
	case []any:
		if s.Items == nil {
			return nil
		}
		for i, item := range v {
			out = append(out, undocumented(s.Items.Value, item, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return out
}

// decodeForm decodes a FormDTO, failing the test on another status.
func decodeForm(t *testing.T, res response, status int) form {
	t.Helper()
	if res.status != status {
		t.Fatalf("status %d, want %d: %s", res.status, status, res.body)
	}
	var f form
	res.json(t, &f)
	return f
}

func wantStatus(t *testing.T, res response, status int) {
	t.Helper()
	if res.status != status {
		t.Fatalf("status %d, want %d: %s", res.status, status, res.body)
	}
}

// TestOpenAPIResponses walks the whole API on a running server and checks
// every real response against the document, then that every documented
// response except the server faults (500, 503) was produced.
func TestOpenAPIResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnvWith(t, db, envOptions{invitations: testInvitations})
		ck := newAPIChecker(t, env, doc)
		anon := env.newClient()
		big := `{"processId":"1","step":1,"people":[{"id":1,"answer":"` + strings.Repeat("x", 70<<10) + `"}]}`
		crossSite := []string{"Sec-Fetch-Site", "cross-site"}

		// The document itself, public.
		res := ck.conforming(anon, http.MethodGet, "/api/openapi.json", nil)
		if res.status != http.StatusOK || !bytes.Equal(res.body, server.OpenAPIDocument) {
			t.Fatalf("GET /api/openapi.json: %d, body equal to the embedded document: %v", res.status, bytes.Equal(res.body, server.OpenAPIDocument))
		}

		// Login.
		login := "/api/auth/external-login"
		c := env.newClient()
		loginBody := map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}
		loggedIn := ck.conforming(c, http.MethodPost, login, loginBody)
		wantStatus(t, loggedIn, http.StatusOK)
		wantStatus(t, ck.conforming(anon, http.MethodPost, login, map[string]string{"userKey": "demo", "hash": "00000000000000000000000000000000"}), http.StatusUnauthorized)
		wantStatus(t, ck.do(anon, http.MethodPost, login, `{"userKey":`), http.StatusBadRequest)
		wantStatus(t, ck.do(anon, http.MethodPost, login, "userKey=demo", "Content-Type", "application/x-www-form-urlencoded"), http.StatusUnsupportedMediaType)
		wantStatus(t, ck.do(anon, http.MethodPost, login, map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}, crossSite...), http.StatusForbidden)
		wantStatus(t, ck.do(anon, http.MethodPost, login, big), http.StatusRequestEntityTooLarge)
		// 429: a user key's budget of failed sign-ins (ten) is spent; then even its right hash is refused.
		for range 10 {
			wantStatus(t, ck.conforming(anon, http.MethodPost, login, map[string]string{"userKey": "guesser", "hash": "00000000000000000000000000000000"}), http.StatusUnauthorized)
		}
		wantStatus(t, ck.conforming(anon, http.MethodPost, login, map[string]string{"userKey": "guesser", "hash": hashlink.Sign(testSecret, "guesser")}), http.StatusTooManyRequests)

		// Load: 201 creates, 200 finds it again.
		load := "/api/forms/membership/1?userKey=demo"
		wantStatus(t, ck.do(anon, http.MethodGet, load, nil), http.StatusUnauthorized)
		f := decodeForm(t, ck.conforming(c, http.MethodGet, load, nil), http.StatusCreated)
		if f.ProcessState != "INIT" || f.Step != 0 {
			t.Fatalf("new form: %+v", f)
		}
		pid := f.ProcessID
		if g := decodeForm(t, ck.conforming(c, http.MethodGet, load+"&organisationId=1", nil), http.StatusOK); g.ProcessID != pid {
			t.Fatalf("second load found process %s, want %s", g.ProcessID, pid)
		}
		wantStatus(t, ck.do(c, http.MethodGet, "/api/forms/membership/x?userKey=demo", nil), http.StatusBadRequest)
		wantStatus(t, ck.do(c, http.MethodGet, "/api/forms/membership/1", nil), http.StatusUnauthorized)
		wantStatus(t, ck.conforming(c, http.MethodGet, "/api/forms/membership/1?userKey=demo-1", nil), http.StatusUnauthorized)
		wantStatus(t, ck.conforming(c, http.MethodGet, "/api/forms/membership/77?userKey=demo", nil), http.StatusNotFound)
		wantStatus(t, ck.conforming(c, http.MethodGet, "/api/forms/membership/2?userKey=demo", nil), http.StatusConflict)

		// The process endpoints before any step: back has no step before selection,
		// resume returns the INIT form unchanged.
		proc := func(id, op string) string { return "/api/forms/processes/" + id + "/" + op }
		wantStatus(t, ck.conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{}), http.StatusConflict)
		if g := decodeForm(t, ck.conforming(c, http.MethodPost, proc(pid, "resume"), map[string]any{}), http.StatusOK); g.ProcessState != "INIT" || g.Step != 0 {
			t.Fatalf("resume of a new process: %+v", g)
		}

		// Next: the request errors.
		next := "/api/forms/next"
		nextBody := func(step int, people []map[string]any) map[string]any {
			return map[string]any{"processId": pid, "step": step, "people": people}
		}
		wantStatus(t, ck.conforming(anon, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}})), http.StatusUnauthorized)
		wantStatus(t, ck.do(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}}), crossSite...), http.StatusForbidden)
		wantStatus(t, ck.do(c, http.MethodPost, next, big), http.StatusRequestEntityTooLarge)
		wantStatus(t, ck.do(c, http.MethodPost, next, nil, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType)
		wantStatus(t, ck.do(c, http.MethodPost, next, `{"processId":"1","step":0}`), http.StatusBadRequest)
		wantStatus(t, ck.conforming(c, http.MethodPost, next, map[string]any{"processId": "999999", "step": 0, "people": []any{}}), http.StatusNotFound)
		// 422: person 4 is already registered; and nobody selected.
		wantStatus(t, ck.conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 4}})), http.StatusUnprocessableEntity)
		wantStatus(t, ck.conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{})), http.StatusUnprocessableEntity)

		// Selection, then the questions; the step-1 submission sends back whole FormPersonDTOs.
		res = ck.conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}, {"id": 2, "selected": false}}))
		f = decodeForm(t, res, http.StatusOK)
		if f.ProcessState != "RUNNING" || f.Step != 1 {
			t.Fatalf("after selection: %+v", f)
		}
		wantStatus(t, ck.conforming(c, http.MethodPost, next, nextBody(1, []map[string]any{{"id": 1, "answer": "12345"}, {"id": 3, "answer": "0687654321"}})), http.StatusUnprocessableEntity)
		wantStatus(t, ck.conforming(c, http.MethodPost, next, nextBody(3, demoAnswers[3])), http.StatusConflict)
		wantStatus(t, ck.do(c, http.MethodPost, next, nextBody(1, []map[string]any{{"id": 2, "answer": "0612345678"}})), http.StatusBadRequest)
		var received struct {
			People []map[string]any `json:"people"`
		}
		res.json(t, &received)
		for _, p := range received.People {
			p["answer"] = map[float64]string{1: "0612345678", 3: "0687654321"}[p["id"].(float64)]
		}
		f = decodeForm(t, ck.conforming(c, http.MethodPost, next, nextBody(1, received.People)), http.StatusOK)
		f = decodeForm(t, ck.conforming(c, http.MethodPost, next, nextBody(2, demoAnswers[2])), http.StatusOK)
		if f.Step != 3 {
			t.Fatalf("after step 2: %+v", f)
		}

		// Back (extension): a stale step, a bad body, then back twice and forward again.
		wantStatus(t, ck.conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{"step": 5}), http.StatusConflict)
		wantStatus(t, ck.do(c, http.MethodPost, proc(pid, "back"), `{"step":"three"}`), http.StatusBadRequest)
		f = decodeForm(t, ck.conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{"step": 3}), http.StatusOK)
		if f.Step != 2 || f.ProcessState != "RUNNING" || f.People[0].Answer == nil {
			t.Fatalf("back to step 2: %+v", f)
		}
		f = decodeForm(t, ck.conforming(c, http.MethodPost, proc(pid, "back"), nil, "Content-Type", "application/json"), http.StatusOK)
		if f.Step != 1 {
			t.Fatalf("back to step 1: %+v", f)
		}
		f = decodeForm(t, ck.conforming(c, http.MethodPost, proc(pid, "resume"), map[string]any{}), http.StatusOK)
		if f.Step != 1 || f.ProcessState != "RUNNING" {
			t.Fatalf("resume: %+v", f)
		}
		for _, step := range demoPath {
			f = decodeForm(t, ck.conforming(c, http.MethodPost, next, nextBody(step, demoAnswers[step])), http.StatusOK)
		}
		if f.ProcessState != "DONE" || f.Step != demoLast+1 || f.PaymentURL == nil {
			t.Fatalf("after the last step: %+v", f)
		}

		// Committed: next and back are refused, resume shows the payment state, reset undoes it.
		wantStatus(t, ck.conforming(c, http.MethodPost, next, nextBody(demoLast+1, []map[string]any{})), http.StatusConflict)
		wantStatus(t, ck.conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{}), http.StatusConflict)
		if g := decodeForm(t, ck.conforming(c, http.MethodPost, proc(pid, "resume"), map[string]any{}), http.StatusOK); g.ProcessState != "DONE" || g.PaymentURL == nil {
			t.Fatalf("resume of a committed registration: %+v", g)
		}
		if g := decodeForm(t, ck.conforming(c, http.MethodGet, load, nil), http.StatusOK); g.ProcessState != "DONE" {
			t.Fatalf("load of a committed registration: %+v", g)
		}
		f = decodeForm(t, ck.conforming(c, http.MethodPost, proc(pid, "reset"), map[string]any{}), http.StatusOK)
		if f.ProcessState != "INIT" || f.Step != 0 {
			t.Fatalf("reset: %+v", f)
		}

		// The process endpoints' request errors.
		other := env.newClient()
		env.login(other, "demo-1")
		for _, op := range []string{"reset", "resume", "back"} {
			wantStatus(t, ck.conforming(anon, http.MethodPost, proc(pid, op), map[string]any{}), http.StatusUnauthorized)
			wantStatus(t, ck.do(c, http.MethodPost, proc(pid, op), map[string]any{}, crossSite...), http.StatusForbidden)
			wantStatus(t, ck.do(c, http.MethodPost, proc(pid, op), big), http.StatusRequestEntityTooLarge)
			wantStatus(t, ck.do(c, http.MethodPost, proc(pid, op), nil), http.StatusUnsupportedMediaType)
			wantStatus(t, ck.conforming(c, http.MethodPost, proc("999999", op), map[string]any{}), http.StatusNotFound)
			wantStatus(t, ck.conforming(c, http.MethodPost, proc("abc", op), map[string]any{}), http.StatusNotFound)
			wantStatus(t, ck.conforming(other, http.MethodPost, proc(pid, op), map[string]any{}), http.StatusNotFound)
		}

		// Commit again and pay: a completed registration is refused everywhere.
		decodeForm(t, ck.conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}, {"id": 3}})), http.StatusOK)
		for _, step := range demoPath {
			f = decodeForm(t, ck.conforming(c, http.MethodPost, next, nextBody(step, demoAnswers[step])), http.StatusOK)
		}
		if f.PaymentURL == nil {
			t.Fatalf("no payment url: %+v", f)
		}
		pay(t, env, c, *f.PaymentURL)
		for _, op := range []string{"reset", "resume", "back"} {
			wantStatus(t, ck.conforming(c, http.MethodPost, proc(pid, op), map[string]any{}), http.StatusConflict)
		}
		wantStatus(t, ck.conforming(c, http.MethodPost, next, nextBody(demoLast+1, []map[string]any{})), http.StatusConflict)
		if g := decodeForm(t, ck.conforming(c, http.MethodGet, load, nil), http.StatusCreated); g.ProcessID == pid || g.ProcessState != "INIT" {
			t.Fatalf("load after payment: %+v", g)
		}

		// The checker is not vacuous: a FormDTO without a field, with an extra
		// member or with an unknown state, and an undocumented status, all fail.
		req := ck.request(http.MethodGet, load, nil)
		good := ck.env.do(c, http.MethodGet, load, nil)
		if err := ck.check(req, good); err != nil {
			t.Fatalf("a real response fails: %v", err)
		}
		for name, mutate := range map[string]func(m map[string]any){
			"missing field":   func(m map[string]any) { delete(m, "paymentUrl") },
			"extra member":    func(m map[string]any) { m["message"] = "x" },
			"unknown state":   func(m map[string]any) { m["processState"] = "ERROR" },
			"bad person date": func(m map[string]any) { m["people"].([]any)[0].(map[string]any)["dateOfBirth"] = "01/02/2003" },
			"null people":     func(m map[string]any) { m["people"] = nil },
		} {
			var m map[string]any
			good.json(t, &m)
			mutate(m)
			raw, _ := json.Marshal(m)
			if err := ck.check(req, response{status: good.status, header: good.header, body: raw}); err == nil {
				t.Errorf("checker accepted a FormDTO with a %s: %s", name, raw)
			}
		}
		if err := ck.check(req, response{status: http.StatusAccepted, header: good.header, body: good.body}); err == nil {
			t.Errorf("checker accepted an undocumented status")
		}
		noCookie := loggedIn.header.Clone()
		noCookie.Del("Set-Cookie")
		if err := ck.check(ck.request(http.MethodPost, login, loginBody), response{status: http.StatusOK, header: noCookie}); err == nil {
			t.Errorf("checker accepted a login without Set-Cookie")
		}

		// The admin API's payments, while organisation 1 is the only one.
		checkAdminPaymentResponses(t, ck, env, anon, crossSite)
		checkAdminDebitResponses(t, ck, env, anon, crossSite)

		// The admin API, last: it adds a second organisation (without
		// hostnames, which leaves the pages and form API above unresolvable).
		checkAdminResponses(t, ck, env, anon, crossSite)

		// Every documented response was produced, except the server faults.
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				for code := range op.Responses.Map() {
					key := method + " " + path + " " + code
					if code != "500" && code != "503" && !ck.seen[key] {
						t.Errorf("documented response %s was never produced", key)
					}
				}
			}
		}
	})
}

// pay settles the payment of paymentURL with success at the test gateway.
func pay(t *testing.T, env *testEnv, c *http.Client, paymentURL string) {
	t.Helper()
	u := env.checkout(c, paymentURL)
	req, _ := http.NewRequest(http.MethodPost, env.srv.URL+u.Path, strings.NewReader("status=success"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	ret, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil {
		t.Fatalf("gateway answered %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if page := env.do(c, http.MethodGet, ret.RequestURI(), nil); page.status != http.StatusOK {
		t.Fatalf("payment return: %d %s", page.status, page.body)
	}
}

// checkAdminResponses produces every documented response of the admin API.
func checkAdminResponses(t *testing.T, ck *apiChecker, env *testEnv, anon *http.Client, crossSite []string) {
	t.Helper()
	if _, err := env.db.NewInsert().Model(&engine.Organisation{ID: 2, Name: "Hillside Hockey Club", Slug: "hillside", DefaultLanguage: "en"}).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	write, _ := env.apiKey(1, organisation.ScopeWrite)
	read, _ := env.apiKey(1, organisation.ScopeRead)
	bearer := func(key string, more ...string) []string {
		return append([]string{"Authorization", "Bearer " + key}, more...)
	}
	org := "/api/admin/organisation"
	wantStatus(t, ck.conforming(anon, http.MethodGet, org, nil, bearer(read)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, org, nil), http.StatusUnauthorized)
	wantStatus(t, ck.do(anon, http.MethodGet, org, nil, bearer(read, crossSite...)...), http.StatusOK) // a GET is not cross-origin checked
	wantStatus(t, ck.do(anon, http.MethodGet, org, nil, bearer("ptl_unknown")...), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, org, map[string]any{"contactEmail": "office@riverside.example"}, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodPatch, org, map[string]any{"name": "X"}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, org, `{"name":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPatch, org, "name=x", bearer(write, "Content-Type", "application/x-www-form-urlencoded")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, org, map[string]any{"slug": "hillside"}, bearer(write)...), http.StatusConflict)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, org, map[string]any{"accentColour": "red"}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodGet, org, nil, bearer(read, crossSite...)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodPatch, org, map[string]any{"name": "X"}, bearer(write, crossSite...)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, org, map[string]any{"name": "X"}), http.StatusUnauthorized)

	imp := "/api/admin/persons/import"
	csv := "externalId,firstName,lastName,dateOfBirth,email,userKeys\nM-1,Kim,Keller,1979-03-08,,family-1\n"
	wantStatus(t, ck.do(anon, http.MethodPost, imp, csv, bearer(write, "Content-Type", "text/csv")...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, imp, map[string]any{"persons": []map[string]any{{"externalId": "J-1", "firstName": "Jo", "lastName": "Json", "dateOfBirth": "2001-02-03"}}}, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, imp, map[string]any{"persons": []map[string]any{{"externalId": "J-2", "firstName": "", "lastName": "Json", "dateOfBirth": "2001-02-03"}}}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, imp, "externalId\n", bearer(write, "Content-Type", "text/csv")...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, imp, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, imp, csv, bearer(read, "Content-Type", "text/csv")...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, imp, csv, "Content-Type", "text/csv"), http.StatusUnauthorized)
	huge := "externalId,firstName,lastName,dateOfBirth\n\"" + strings.Repeat("a", adminapi.MaxImportBytes+1)
	wantStatus(t, ck.do(anon, http.MethodPost, imp, huge, bearer(write, "Content-Type", "text/csv")...), http.StatusRequestEntityTooLarge)

	types := "/api/admin/membership-types"
	wantStatus(t, ck.conforming(anon, http.MethodGet, types, nil, bearer(read)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, types, nil), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodPost, types, map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 60}, bearer(write)...), http.StatusCreated)
	wantStatus(t, ck.conforming(anon, http.MethodPost, types, map[string]any{"code": "SENIOR", "name": "Again"}, bearer(write)...), http.StatusConflict)
	wantStatus(t, ck.do(anon, http.MethodPost, types, map[string]any{"code": "senior", "name": ""}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, types, `{"code":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, types, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, types, map[string]any{}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, types, map[string]any{}), http.StatusUnauthorized)

	defs := "/api/admin/definitions"
	def := "key: extra\nname: Extra\ncategory: MEMBERSHIP\norganisationId: 9\nsteps:\n  - name: terms\n    questionText: I accept\n    questionType: ITC\n    required: true\n"
	wantStatus(t, ck.do(anon, http.MethodPost, defs, def, bearer(write, "Content-Type", "application/yaml")...), http.StatusCreated)
	wantStatus(t, ck.do(anon, http.MethodPost, defs, def, bearer(write, "Content-Type", "application/yaml")...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodPost, defs, "key: [", bearer(write, "Content-Type", "application/yaml")...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, defs, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, defs, def, bearer(read, "Content-Type", "application/yaml")...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, defs, def, "Content-Type", "application/yaml"), http.StatusUnauthorized)
	wantStatus(t, ck.do(anon, http.MethodPost, defs, strings.Repeat("#", 70<<10), bearer(write, "Content-Type", "application/yaml")...), http.StatusRequestEntityTooLarge)

	periods := "/api/admin/periods"
	wantStatus(t, ck.conforming(anon, http.MethodGet, periods, nil, bearer(read)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, periods, nil), http.StatusUnauthorized)
	newPeriod := map[string]any{"name": "Next season", "startDate": "2030-01-01", "endDate": "2030-12-31", "currency": "EUR", "definitionKey": "membership"}
	created := ck.conforming(anon, http.MethodPost, periods, newPeriod, bearer(write)...)
	wantStatus(t, created, http.StatusCreated)
	var period struct{ ID int64 }
	created.json(t, &period)
	wantStatus(t, ck.do(anon, http.MethodPost, periods, map[string]any{"name": "X"}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, periods, `{"name":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, periods, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, periods, newPeriod, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, periods, newPeriod), http.StatusUnauthorized)
	one := fmt.Sprintf("/api/admin/periods/%d", period.ID)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, map[string]any{"status": "open"}, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, map[string]any{"status": "ajar"}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, "/api/admin/periods/999", map[string]any{"status": "open"}, bearer(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, `{"status":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, map[string]any{}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, map[string]any{}), http.StatusUnauthorized)

	rules := one + "/price-rules"
	fee := map[string]any{"rules": []map[string]any{{"code": "adult-fee", "kind": "MEMBERSHIP_FEE", "label": "Adult", "membershipTypeId": 1, "amountMinor": 5000},
		{"code": "eb", "kind": "EARLY_BIRD", "label": "Early", "validUntil": "2030-02-01T00:00:00Z", "percentBp": -1000}}}
	wantStatus(t, ck.conforming(anon, http.MethodPut, rules, fee, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodGet, rules, nil, bearer(read)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/periods/999/price-rules", nil, bearer(read)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodGet, rules, nil), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodPut, "/api/admin/periods/999/price-rules", fee, bearer(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPut, rules, map[string]any{"rules": []map[string]any{{"code": "x", "kind": "NONE", "label": "x", "amountMinor": 1}}}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPut, rules, `{"rules":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPut, rules, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPut, rules, fee, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPut, rules, fee), http.StatusUnauthorized)

	unlink := "/api/admin/persons/unlink"
	wantStatus(t, ck.conforming(anon, http.MethodPost, unlink, map[string]any{"links": []map[string]string{{"externalId": "M-1", "userKey": "family-1"}}}, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, unlink, map[string]any{"links": []map[string]string{{"externalId": "nobody", "userKey": "family-1"}}}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, unlink, map[string]any{"links": []any{}}, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, unlink, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, unlink, `{"links":["`+strings.Repeat("x", adminapi.MaxBulkBytes)+`"]}`, bearer(write)...), http.StatusRequestEntityTooLarge)
	wantStatus(t, ck.do(anon, http.MethodPost, unlink, map[string]any{"links": []any{}}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, unlink, map[string]any{"links": []any{}}), http.StatusUnauthorized)

	checkInvitationResponses(t, ck, anon, write, read, crossSite)     // api_admin_invitations_test.go
	checkMembershipTypeResponses(t, ck, anon, write, read, crossSite) // api_admin_types_test.go
	checkDefinitionResponses(t, ck, anon, write, read, crossSite)     // api_admin_definitions_test.go
	checkExportResponses(t, ck, anon, read)                           // api_admin_export_test.go
	checkWebhookResponses(t, ck, anon, write, read)                   // api_admin_webhooks_test.go
	checkPersonalDataResponses(t, ck, anon, write, read)              // personal_data_test.go
}

// TestIDFormsAgreeWithTheDocument: each id of a next body takes exactly the
// forms docs/FORM-API.md and the OpenAPI description name (processId a string or
// a JSON number; step and people[].id JSON numbers only, as the spec's
// FormPersonDTO has them): the server accepts a form exactly when the
// document's request validation does.
func TestIDFormsAgreeWithTheDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnvWith(t, db, envOptions{})
		ck := newAPIChecker(t, env, doc)
		c := env.newClient()
		wantStatus(t, env.do(c, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}), http.StatusOK)
		f := decodeForm(t, env.do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil), http.StatusCreated)
		pid, err := strconv.ParseInt(f.ProcessID, 10, 64)
		if err != nil {
			t.Fatalf("processId %q is not a number", f.ProcessID)
		}
		person := f.People[0].ID
		tests := []struct {
			name   string
			body   map[string]any
			accept bool
		}{
			{"processId as a string", map[string]any{"processId": f.ProcessID, "step": 0, "people": []map[string]any{{"id": person}}}, true},
			{"processId as a number", map[string]any{"processId": pid, "step": 0, "people": []map[string]any{{"id": person}}}, true},
			{"person id as a string", map[string]any{"processId": f.ProcessID, "step": 0, "people": []map[string]any{{"id": strconv.FormatInt(person, 10)}}}, false},
			{"step as a string", map[string]any{"processId": f.ProcessID, "step": "0", "people": []map[string]any{{"id": person}}}, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				req := ck.request(http.MethodPost, "/api/forms/next", tc.body)
				route, params, err := ck.router.FindRoute(req)
				if err != nil {
					t.Fatal(err)
				}
				docErr := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: ck.opts})
				if (docErr == nil) != tc.accept {
					t.Errorf("the document accepts it: %v (%v), want %v", docErr == nil, docErr, tc.accept)
				}
				res := ck.do(c, http.MethodPost, "/api/forms/next", tc.body)
				if accepted := res.status != http.StatusBadRequest; accepted != tc.accept {
					t.Errorf("the server answers %d %s, want accepted %v", res.status, res.body, tc.accept)
				}
				if tc.accept {
					// Back to person selection for the next case.
					wantStatus(t, env.do(c, http.MethodPost, "/api/forms/processes/"+f.ProcessID+"/reset", map[string]any{}), http.StatusOK)
				}
			})
		}
	})
}
