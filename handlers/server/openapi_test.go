package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers"
	"portal/handlers/adminapi"
	"portal/handlers/handlertest"
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

func newAPIChecker(t *testing.T, env *handlertest.Env, doc *openapi3.T) *handlertest.APIChecker {
	t.Helper()
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	return &handlertest.APIChecker{T: t, Env: env, Router: router, Seen: map[string]bool{},
		Opts: &openapi3filter.Options{
			IncludeResponseStatus: true, // an undocumented status fails
			MultiError:            true,
			// The session cookie is checked by the server itself, not by the validator.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		}}
}

// TestOpenAPIResponses walks the whole API on a running server and checks
// every real response against the document, then that every documented
// response except the server faults (500, 503) was produced.
func TestOpenAPIResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{Invitations: handlertest.TestInvitations})
		ck := newAPIChecker(t, env, doc)
		anon := env.NewClient()
		big := `{"processId":"1","step":1,"people":[{"id":1,"answer":"` + strings.Repeat("x", 70<<10) + `"}]}`
		crossSite := []string{"Sec-Fetch-Site", "cross-site"}

		// The document itself, public.
		res := ck.Conforming(anon, http.MethodGet, "/api/openapi.json", nil)
		if res.Status != http.StatusOK || !bytes.Equal(res.Body, server.OpenAPIDocument) {
			t.Fatalf("GET /api/openapi.json: %d, body equal to the embedded document: %v", res.Status, bytes.Equal(res.Body, server.OpenAPIDocument))
		}

		// Login.
		login := "/api/auth/external-login"
		c := env.NewClient()
		loginBody := map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}
		loggedIn := ck.Conforming(c, http.MethodPost, login, loginBody)
		handlertest.WantStatus(t, loggedIn, http.StatusOK)
		handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, login, map[string]string{"userKey": "demo", "hash": "00000000000000000000000000000000"}), http.StatusUnauthorized)
		handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, login, `{"userKey":`), http.StatusBadRequest)
		handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, login, "userKey=demo", "Content-Type", "application/x-www-form-urlencoded"), http.StatusUnsupportedMediaType)
		handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, login, map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}, crossSite...), http.StatusForbidden)
		handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, login, big), http.StatusRequestEntityTooLarge)
		// 429: a user key's budget of failed sign-ins (ten) is spent; then even its right hash is refused.
		for range 10 {
			handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, login, map[string]string{"userKey": "guesser", "hash": "00000000000000000000000000000000"}), http.StatusUnauthorized)
		}
		handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, login, map[string]string{"userKey": "guesser", "hash": hashlink.Sign(handlertest.HashSecret, "guesser")}), http.StatusTooManyRequests)

		// Load: 201 creates, 200 finds it again.
		load := "/api/forms/membership/1?userKey=demo"
		handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, load, nil), http.StatusUnauthorized)
		f := handlertest.DecodeForm(t, ck.Conforming(c, http.MethodGet, load, nil), http.StatusCreated)
		if f.ProcessState != "INIT" || f.Step != 0 {
			t.Fatalf("new form: %+v", f)
		}
		pid := f.ProcessID
		if g := handlertest.DecodeForm(t, ck.Conforming(c, http.MethodGet, load+"&organisationId=1", nil), http.StatusOK); g.ProcessID != pid {
			t.Fatalf("second load found process %s, want %s", g.ProcessID, pid)
		}
		handlertest.WantStatus(t, ck.Do(c, http.MethodGet, "/api/forms/membership/x?userKey=demo", nil), http.StatusBadRequest)
		handlertest.WantStatus(t, ck.Do(c, http.MethodGet, "/api/forms/membership/1", nil), http.StatusUnauthorized)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodGet, "/api/forms/membership/1?userKey=demo-1", nil), http.StatusUnauthorized)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodGet, "/api/forms/membership/77?userKey=demo", nil), http.StatusNotFound)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodGet, "/api/forms/membership/2?userKey=demo", nil), http.StatusConflict)

		// The process endpoints before any step: back has no step before selection,
		// resume returns the INIT form unchanged.
		proc := func(id, op string) string { return "/api/forms/processes/" + id + "/" + op }
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{}), http.StatusConflict)
		if g := handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, proc(pid, "resume"), map[string]any{}), http.StatusOK); g.ProcessState != "INIT" || g.Step != 0 {
			t.Fatalf("resume of a new process: %+v", g)
		}

		// Next: the request errors.
		next := "/api/forms/next"
		nextBody := func(step int, people []map[string]any) map[string]any {
			return map[string]any{"processId": pid, "step": step, "people": people}
		}
		handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}})), http.StatusUnauthorized)
		handlertest.WantStatus(t, ck.Do(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}}), crossSite...), http.StatusForbidden)
		handlertest.WantStatus(t, ck.Do(c, http.MethodPost, next, big), http.StatusRequestEntityTooLarge)
		handlertest.WantStatus(t, ck.Do(c, http.MethodPost, next, nil, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType)
		handlertest.WantStatus(t, ck.Do(c, http.MethodPost, next, `{"processId":"1","step":0}`), http.StatusBadRequest)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, map[string]any{"processId": "999999", "step": 0, "people": []any{}}), http.StatusNotFound)
		// 422: person 4 is already registered; and nobody selected.
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 4}})), http.StatusUnprocessableEntity)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{})), http.StatusUnprocessableEntity)

		// Selection, then the questions; the step-1 submission sends back whole FormPersonDTOs.
		res = ck.Conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}, {"id": 2, "selected": false}}))
		f = handlertest.DecodeForm(t, res, http.StatusOK)
		if f.ProcessState != "RUNNING" || f.Step != 1 {
			t.Fatalf("after selection: %+v", f)
		}
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, nextBody(1, []map[string]any{{"id": 1, "answer": "12345"}, {"id": 3, "answer": "0687654321"}})), http.StatusUnprocessableEntity)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, nextBody(3, handlertest.DemoAnswers[3])), http.StatusConflict)
		handlertest.WantStatus(t, ck.Do(c, http.MethodPost, next, nextBody(1, []map[string]any{{"id": 2, "answer": "0612345678"}})), http.StatusBadRequest)
		var received struct {
			People []map[string]any `json:"people"`
		}
		res.JSON(t, &received)
		for _, p := range received.People {
			p["answer"] = map[float64]string{1: "0612345678", 3: "0687654321"}[p["id"].(float64)]
		}
		f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, next, nextBody(1, received.People)), http.StatusOK)
		f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, next, nextBody(2, handlertest.DemoAnswers[2])), http.StatusOK)
		if f.Step != 3 {
			t.Fatalf("after step 2: %+v", f)
		}

		// Back (extension): a stale step, a bad body, then back twice and forward again.
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{"step": 5}), http.StatusConflict)
		handlertest.WantStatus(t, ck.Do(c, http.MethodPost, proc(pid, "back"), `{"step":"three"}`), http.StatusBadRequest)
		f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{"step": 3}), http.StatusOK)
		if f.Step != 2 || f.ProcessState != "RUNNING" || f.People[0].Answer == nil {
			t.Fatalf("back to step 2: %+v", f)
		}
		f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, proc(pid, "back"), nil, "Content-Type", "application/json"), http.StatusOK)
		if f.Step != 1 {
			t.Fatalf("back to step 1: %+v", f)
		}
		f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, proc(pid, "resume"), map[string]any{}), http.StatusOK)
		if f.Step != 1 || f.ProcessState != "RUNNING" {
			t.Fatalf("resume: %+v", f)
		}
		for _, step := range handlertest.DemoPath {
			f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, next, nextBody(step, handlertest.DemoAnswers[step])), http.StatusOK)
		}
		if f.ProcessState != "DONE" || f.Step != handlertest.DemoLast+1 || f.PaymentURL == nil {
			t.Fatalf("after the last step: %+v", f)
		}

		// Committed: next and back are refused, resume shows the payment state, reset undoes it.
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, nextBody(handlertest.DemoLast+1, []map[string]any{})), http.StatusConflict)
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, proc(pid, "back"), map[string]any{}), http.StatusConflict)
		if g := handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, proc(pid, "resume"), map[string]any{}), http.StatusOK); g.ProcessState != "DONE" || g.PaymentURL == nil {
			t.Fatalf("resume of a committed registration: %+v", g)
		}
		if g := handlertest.DecodeForm(t, ck.Conforming(c, http.MethodGet, load, nil), http.StatusOK); g.ProcessState != "DONE" {
			t.Fatalf("load of a committed registration: %+v", g)
		}
		f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, proc(pid, "reset"), map[string]any{}), http.StatusOK)
		if f.ProcessState != "INIT" || f.Step != 0 {
			t.Fatalf("reset: %+v", f)
		}

		// The process endpoints' request errors.
		other := env.NewClient()
		env.Login(other, "demo-1")
		for _, op := range []string{"reset", "resume", "back"} {
			handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, proc(pid, op), map[string]any{}), http.StatusUnauthorized)
			handlertest.WantStatus(t, ck.Do(c, http.MethodPost, proc(pid, op), map[string]any{}, crossSite...), http.StatusForbidden)
			handlertest.WantStatus(t, ck.Do(c, http.MethodPost, proc(pid, op), big), http.StatusRequestEntityTooLarge)
			handlertest.WantStatus(t, ck.Do(c, http.MethodPost, proc(pid, op), nil), http.StatusUnsupportedMediaType)
			handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, proc("999999", op), map[string]any{}), http.StatusNotFound)
			handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, proc("abc", op), map[string]any{}), http.StatusNotFound)
			handlertest.WantStatus(t, ck.Conforming(other, http.MethodPost, proc(pid, op), map[string]any{}), http.StatusNotFound)
		}

		// Commit again and pay: a completed registration is refused everywhere.
		handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, next, nextBody(0, []map[string]any{{"id": 1}, {"id": 3}})), http.StatusOK)
		for _, step := range handlertest.DemoPath {
			f = handlertest.DecodeForm(t, ck.Conforming(c, http.MethodPost, next, nextBody(step, handlertest.DemoAnswers[step])), http.StatusOK)
		}
		if f.PaymentURL == nil {
			t.Fatalf("no payment url: %+v", f)
		}
		handlertest.PayDTO(t, env, c, *f.PaymentURL)
		for _, op := range []string{"reset", "resume", "back"} {
			handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, proc(pid, op), map[string]any{}), http.StatusConflict)
		}
		handlertest.WantStatus(t, ck.Conforming(c, http.MethodPost, next, nextBody(handlertest.DemoLast+1, []map[string]any{})), http.StatusConflict)
		if g := handlertest.DecodeForm(t, ck.Conforming(c, http.MethodGet, load, nil), http.StatusCreated); g.ProcessID == pid || g.ProcessState != "INIT" {
			t.Fatalf("load after payment: %+v", g)
		}

		// The checker is not vacuous: a FormDTO without a field, with an extra
		// member or with an unknown state, and an undocumented status, all fail.
		req := ck.Request(http.MethodGet, load, nil)
		good := ck.Env.Do(c, http.MethodGet, load, nil)
		if err := ck.Check(req, good); err != nil {
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
			good.JSON(t, &m)
			mutate(m)
			raw, _ := json.Marshal(m)
			if err := ck.Check(req, handlertest.Response{Status: good.Status, Header: good.Header, Body: raw}); err == nil {
				t.Errorf("checker accepted a FormDTO with a %s: %s", name, raw)
			}
		}
		if err := ck.Check(req, handlertest.Response{Status: http.StatusAccepted, Header: good.Header, Body: good.Body}); err == nil {
			t.Errorf("checker accepted an undocumented status")
		}
		noCookie := loggedIn.Header.Clone()
		noCookie.Del("Set-Cookie")
		if err := ck.Check(ck.Request(http.MethodPost, login, loginBody), handlertest.Response{Status: http.StatusOK, Header: noCookie}); err == nil {
			t.Errorf("checker accepted a login without Set-Cookie")
		}

		// The admin API's payments, while organisation 1 is the only one.
		handlertest.CheckAdminPaymentResponses(t, ck, env, anon, crossSite)
		handlertest.CheckAdminDebitResponses(t, ck, env, anon, crossSite)

		// The admin API, last: it adds a second organisation (without
		// hostnames, which leaves the pages and form API above unresolvable).
		checkAdminResponses(t, ck, env, anon, crossSite)

		// Every documented response was produced, except the server faults.
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				for code := range op.Responses.Map() {
					key := method + " " + path + " " + code
					if code != "500" && code != "503" && !ck.Seen[key] {
						t.Errorf("documented response %s was never produced", key)
					}
				}
			}
		}
	})
}

// checkAdminResponses produces every documented response of the admin API.
func checkAdminResponses(t *testing.T, ck *handlertest.APIChecker, env *handlertest.Env, anon *http.Client, crossSite []string) {
	t.Helper()
	if _, err := env.DB.NewInsert().Model(&engine.Organisation{ID: 2, Name: "Hillside Hockey Club", Slug: "hillside", DefaultLanguage: "en"}).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	write, _ := env.ApiKey(1, organisation.ScopeWrite)
	read, _ := env.ApiKey(1, organisation.ScopeRead)
	bearer := func(key string, more ...string) []string {
		return append([]string{"Authorization", "Bearer " + key}, more...)
	}
	org := "/api/admin/organisation"
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, org, nil, bearer(read)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, org, nil), http.StatusUnauthorized)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, org, nil, bearer(read, crossSite...)...), http.StatusOK) // a GET is not cross-origin checked
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, org, nil, bearer("ptl_unknown")...), http.StatusUnauthorized)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPatch, org, map[string]any{"contactEmail": "office@riverside.example"}, bearer(write)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, org, map[string]any{"name": "X"}, bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, org, `{"name":`, bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, org, "name=x", bearer(write, "Content-Type", "application/x-www-form-urlencoded")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPatch, org, map[string]any{"slug": "hillside"}, bearer(write)...), http.StatusConflict)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPatch, org, map[string]any{"accentColour": "red"}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, org, nil, bearer(read, crossSite...)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, org, map[string]any{"name": "X"}, bearer(write, crossSite...)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, org, map[string]any{"name": "X"}), http.StatusUnauthorized)

	imp := "/api/admin/persons/import"
	csv := "externalId,firstName,lastName,dateOfBirth,email,userKeys\nM-1,Kim,Keller,1979-03-08,,family-1\n"
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, imp, csv, bearer(write, "Content-Type", "text/csv")...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, imp, map[string]any{"persons": []map[string]any{{"externalId": "J-1", "firstName": "Jo", "lastName": "Json", "dateOfBirth": "2001-02-03"}}}, bearer(write)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, imp, map[string]any{"persons": []map[string]any{{"externalId": "J-2", "firstName": "", "lastName": "Json", "dateOfBirth": "2001-02-03"}}}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, imp, "externalId\n", bearer(write, "Content-Type", "text/csv")...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, imp, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, imp, csv, bearer(read, "Content-Type", "text/csv")...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, imp, csv, "Content-Type", "text/csv"), http.StatusUnauthorized)
	huge := "externalId,firstName,lastName,dateOfBirth\n\"" + strings.Repeat("a", adminapi.MaxImportBytes+1)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, imp, huge, bearer(write, "Content-Type", "text/csv")...), http.StatusRequestEntityTooLarge)

	types := "/api/admin/membership-types"
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, types, nil, bearer(read)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, types, nil), http.StatusUnauthorized)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, types, map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 60}, bearer(write)...), http.StatusCreated)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, types, map[string]any{"code": "SENIOR", "name": "Again"}, bearer(write)...), http.StatusConflict)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, types, map[string]any{"code": "senior", "name": ""}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, types, `{"code":`, bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, types, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, types, map[string]any{}, bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, types, map[string]any{}), http.StatusUnauthorized)

	defs := "/api/admin/definitions"
	def := "key: extra\nname: Extra\ncategory: MEMBERSHIP\norganisationId: 9\nsteps:\n  - name: terms\n    questionText: I accept\n    questionType: ITC\n    required: true\n"
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, def, bearer(write, "Content-Type", "application/yaml")...), http.StatusCreated)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, def, bearer(write, "Content-Type", "application/yaml")...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, "key: [", bearer(write, "Content-Type", "application/yaml")...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, def, bearer(read, "Content-Type", "application/yaml")...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, def, "Content-Type", "application/yaml"), http.StatusUnauthorized)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, defs, strings.Repeat("#", 70<<10), bearer(write, "Content-Type", "application/yaml")...), http.StatusRequestEntityTooLarge)

	periods := "/api/admin/periods"
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, periods, nil, bearer(read)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, periods, nil), http.StatusUnauthorized)
	newPeriod := map[string]any{"name": "Next season", "startDate": "2030-01-01", "endDate": "2030-12-31", "currency": "EUR", "definitionKey": "membership"}
	created := ck.Conforming(anon, http.MethodPost, periods, newPeriod, bearer(write)...)
	handlertest.WantStatus(t, created, http.StatusCreated)
	var period struct{ ID int64 }
	created.JSON(t, &period)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, periods, map[string]any{"name": "X"}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, periods, `{"name":`, bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, periods, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, periods, newPeriod, bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, periods, newPeriod), http.StatusUnauthorized)
	one := fmt.Sprintf("/api/admin/periods/%d", period.ID)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, map[string]any{"status": "open"}, bearer(write)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, one, map[string]any{"status": "ajar"}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPatch, "/api/admin/periods/999", map[string]any{"status": "open"}, bearer(write)...), http.StatusNotFound)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, one, `{"status":`, bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, one, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, one, map[string]any{}, bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPatch, one, map[string]any{}), http.StatusUnauthorized)

	rules := one + "/price-rules"
	fee := map[string]any{"rules": []map[string]any{{"code": "adult-fee", "kind": "MEMBERSHIP_FEE", "label": "Adult", "membershipTypeId": 1, "amountMinor": 5000},
		{"code": "eb", "kind": "EARLY_BIRD", "label": "Early", "validUntil": "2030-02-01T00:00:00Z", "percentBp": -1000}}}
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPut, rules, fee, bearer(write)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, rules, nil, bearer(read)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/periods/999/price-rules", nil, bearer(read)...), http.StatusNotFound)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodGet, rules, nil), http.StatusUnauthorized)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPut, "/api/admin/periods/999/price-rules", fee, bearer(write)...), http.StatusNotFound)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPut, rules, map[string]any{"rules": []map[string]any{{"code": "x", "kind": "NONE", "label": "x", "amountMinor": 1}}}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPut, rules, `{"rules":`, bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPut, rules, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPut, rules, fee, bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPut, rules, fee), http.StatusUnauthorized)

	unlink := "/api/admin/persons/unlink"
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, unlink, map[string]any{"links": []map[string]string{{"externalId": "M-1", "userKey": "family-1"}}}, bearer(write)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, unlink, map[string]any{"links": []map[string]string{{"externalId": "nobody", "userKey": "family-1"}}}, bearer(write)...), http.StatusUnprocessableEntity)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, unlink, map[string]any{"links": []any{}}, bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, unlink, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, unlink, `{"links":["`+strings.Repeat("x", adminapi.MaxBulkBytes)+`"]}`, bearer(write)...), http.StatusRequestEntityTooLarge)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, unlink, map[string]any{"links": []any{}}, bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, unlink, map[string]any{"links": []any{}}), http.StatusUnauthorized)

	handlertest.CheckInvitationResponses(t, ck, anon, write, read, crossSite)     // adminapi/invitations_test.go
	handlertest.CheckMembershipTypeResponses(t, ck, anon, write, read, crossSite) // adminapi/types_test.go
	handlertest.CheckDefinitionResponses(t, ck, anon, write, read, crossSite)     // adminapi/definitions_test.go
	handlertest.CheckExportResponses(t, ck, anon, read)                           // adminapi/export_test.go
	handlertest.CheckWebhookResponses(t, ck, anon, write, read)                   // adminapi/webhooks_test.go
	checkPersonalDataResponses(t, ck, anon, write, read)                          // personal_data_test.go
}

// TestIDFormsAgreeWithTheDocument: each id of a next body takes exactly the
// forms docs/FORM-API.md and the OpenAPI description name (processId a string or
// a JSON number; step and people[].id JSON numbers only, as the spec's
// FormPersonDTO has them): the server accepts a form exactly when the
// document's request validation does.
func TestIDFormsAgreeWithTheDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{})
		ck := newAPIChecker(t, env, doc)
		c := env.NewClient()
		handlertest.WantStatus(t, env.Do(c, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}), http.StatusOK)
		f := handlertest.DecodeForm(t, env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil), http.StatusCreated)
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
				req := ck.Request(http.MethodPost, "/api/forms/next", tc.body)
				route, params, err := ck.Router.FindRoute(req)
				if err != nil {
					t.Fatal(err)
				}
				docErr := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: ck.Opts})
				if (docErr == nil) != tc.accept {
					t.Errorf("the document accepts it: %v (%v), want %v", docErr == nil, docErr, tc.accept)
				}
				res := ck.Do(c, http.MethodPost, "/api/forms/next", tc.body)
				if accepted := res.Status != http.StatusBadRequest; accepted != tc.accept {
					t.Errorf("the server answers %d %s, want accepted %v", res.Status, res.Body, tc.accept)
				}
				if tc.accept {
					// Back to person selection for the next case.
					handlertest.WantStatus(t, env.Do(c, http.MethodPost, "/api/forms/processes/"+f.ProcessID+"/reset", map[string]any{}), http.StatusOK)
				}
			})
		}
	})
}
