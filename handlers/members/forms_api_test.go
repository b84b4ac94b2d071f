package members_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
)

func TestExternalLogin(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		path := "/api/auth/external-login"
		t.Run("valid hash starts a session", func(t *testing.T) {
			c := env.NewClient()
			res := env.Do(c, http.MethodPost, path, map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")})
			if res.Status != http.StatusOK || len(res.Body) != 0 {
				t.Fatalf("got %d %q, want 200 and an empty body", res.Status, res.Body)
			}
			cookie := res.Header.Get("Set-Cookie")
			for _, want := range []string{"JSESSIONID=", "HttpOnly", "SameSite=Strict", "Path=/"} {
				if !strings.Contains(cookie, want) {
					t.Errorf("cookie %q lacks %s", cookie, want)
				}
			}
			first := cookieValue(cookie)
			res = env.Do(c, http.MethodPost, path, map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")})
			if second := cookieValue(res.Header.Get("Set-Cookie")); second == "" || second == first {
				t.Errorf("a second login must issue a new session id")
			}
		})
		cases := []struct {
			name   string
			body   string
			ctype  string
			status int
		}{
			{"wrong hash", `{"userKey":"demo","hash":"00000000000000000000000000000000"}`, "application/json", 401},
			{"hash of another key", fmt.Sprintf(`{"userKey":"demo","hash":%q}`, hashlink.Sign(handlertest.HashSecret, "demo-1")), "application/json", 401},
			{"missing hash", `{"userKey":"demo"}`, "application/json", 401},
			{"missing user key", `{"hash":"abc"}`, "application/json", 401},
			{"malformed JSON", `{"userKey":`, "application/json", 400},
			{"form post", `userKey=demo`, "application/x-www-form-urlencoded", 415},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := env.NewClient()
				req, _ := http.NewRequest(http.MethodPost, env.Server.URL+path, strings.NewReader(tc.body))
				req.Header.Set("Content-Type", tc.ctype)
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
				}
				if res.Header.Get("Set-Cookie") != "" {
					t.Fatalf("a rejected login must not set a cookie")
				}
			})
		}
	})
}

func cookieValue(setCookie string) string {
	v, _, _ := strings.Cut(strings.TrimPrefix(setCookie, "JSESSIONID="), ";")
	return v
}

func TestAPIRequiresSession(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		for _, tc := range []struct{ method, path string }{
			{http.MethodGet, "/api/forms/membership/1"},
			{http.MethodPost, "/api/forms/next"},
			{http.MethodPost, "/api/forms/processes/1/reset"},
			{http.MethodPost, "/api/forms/processes/1/resume"},
			{http.MethodPost, "/api/forms/processes/1/back"},
			{http.MethodGet, "/api/anything/else"},
		} {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				var body any
				if tc.method == http.MethodPost {
					body = map[string]any{}
				}
				handlertest.ExpectHTTPError(t, env.Do(c, tc.method, tc.path, body), http.StatusUnauthorized, tc.path)
			})
		}
		t.Run("openapi is public", func(t *testing.T) {
			if res := env.Do(c, http.MethodGet, "/api/openapi.json", nil); res.Status != http.StatusOK {
				t.Fatalf("status %d", res.Status)
			}
		})
	})
}

func TestFormFlowOverHTTP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		f := env.StartDemo(c)
		if f.ProcessState != "INIT" || f.Step != 0 || f.Question != nil || f.QuestionType != nil || f.Required != nil || f.Options != nil || f.PaymentURL != nil {
			t.Fatalf("initial form %+v", f)
		}
		statuses := map[int64]string{}
		for _, p := range f.People {
			statuses[p.ID] = p.Status
		}
		if statuses[4] != "Registered" || statuses[1] != "Available" {
			t.Fatalf("statuses %v", statuses)
		}
		again := env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo&organisationId=1", nil)
		var g handlertest.Form
		again.JSON(t, &g)
		if again.Status != http.StatusOK || g.ProcessID != f.ProcessID {
			t.Fatalf("second load: %d %s", again.Status, again.Body)
		}
		res, f := env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 2}})
		if res.Status != http.StatusOK || f.ProcessState != "RUNNING" || f.Step != 1 || *f.QuestionType != "TXT" {
			t.Fatalf("select: %d %s", res.Status, res.Body)
		}
		res, f = env.Next(c, f.ProcessID, 1, []map[string]any{{"id": 2, "answer": "0611111111"}})
		if res.Status != http.StatusOK || f.Step != 2 || len(f.Options) != 5 {
			t.Fatalf("step 1: %d %s", res.Status, res.Body)
		}
	})
}

func TestCommitAndPayOverHTTP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		f := env.CompleteDemo(c)
		if f.ProcessState != "DONE" || f.PaymentURL == nil || f.Step != handlertest.DemoLast+1 {
			t.Fatalf("done form %+v", f)
		}
		for _, p := range f.People {
			if p.Status != "Pending Payment" || p.PaymentURL == nil || *p.PaymentURL != *f.PaymentURL {
				t.Fatalf("person %+v", p)
			}
		}
		payURL, err := url.Parse(*f.PaymentURL)
		if err != nil || payURL.Query().Get("reference") == "" || payURL.Query().Get("amount") == "" {
			t.Fatalf("payment url %q", *f.PaymentURL)
		}
		if !strings.HasPrefix(payURL.Path, "/pay/") || payURL.Query().Get("amount") != "184.50" {
			t.Fatalf("payment url %q, want the stable pay link with amount 184.50", *f.PaymentURL)
		}
		payURL = env.Checkout(c, *f.PaymentURL)
		page := env.Do(c, http.MethodGet, payURL.RequestURI(), nil)
		if page.Status != http.StatusOK || !strings.Contains(string(page.Body), "Total") {
			t.Fatalf("pay page %d", page.Status)
		}
		req, _ := http.NewRequest(http.MethodPost, env.Server.URL+payURL.Path, strings.NewReader("status=success"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "/membership/payment-return?") {
			t.Fatalf("gateway answered %d %q", resp.StatusCode, loc)
		}
		ret, _ := url.Parse(loc)
		page = env.Do(c, http.MethodGet, ret.RequestURI(), nil)
		if page.Status != http.StatusOK || !strings.Contains(string(page.Body), "registration complete") {
			t.Fatalf("return page %d %s", page.Status, page.Body)
		}
		// Forged: flip the status of a settled return.
		q := ret.Query()
		q.Set("status", "failed")
		forged := env.Do(c, http.MethodGet, "/membership/payment-return?"+q.Encode(), nil)
		if forged.Status != http.StatusBadRequest {
			t.Fatalf("forged return: %d", forged.Status)
		}
		// The next load starts afresh, and the persons are registered.
		res := env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil)
		var g handlertest.Form
		res.JSON(t, &g)
		if res.Status != http.StatusCreated || g.ProcessState != "INIT" || g.ProcessID == f.ProcessID {
			t.Fatalf("after payment: %d %s", res.Status, res.Body)
		}
		for _, p := range g.People {
			if (p.ID == 1 || p.ID == 3) && (p.Status != "Registered" || p.CanSelect) {
				t.Fatalf("person %d after payment: %+v", p.ID, p)
			}
		}
	})
}

func TestFormErrors(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		f := env.StartDemo(c)
		pid := f.ProcessID
		if res, _ := env.Next(c, pid, 0, []map[string]any{{"id": 1}}); res.Status != http.StatusOK {
			t.Fatalf("select: %d", res.Status)
		}
		t.Run("422 process error for a bad phone number", func(t *testing.T) {
			res, _ := env.Next(c, pid, 1, []map[string]any{{"id": 1, "answer": "12345"}})
			if res.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d %s", res.Status, res.Body)
			}
			var body handlertest.ProcessError
			res.JSON(t, &body)
			if body.ProcessID != pid || body.Step != 1 || body.ProcessState != "ERROR" || body.Message == "" ||
				len(body.Errors.People) != 1 || body.Errors.People[0].ID != 1 || body.Errors.People[0].Error != "Phone number must be 10 digits" {
				t.Fatalf("body %s", res.Body)
			}
		})
		t.Run("409 stale step", func(t *testing.T) {
			res, _ := env.Next(c, pid, 3, []map[string]any{{"id": 1, "answer": "1"}})
			handlertest.ExpectHTTPError(t, res, http.StatusConflict, "/api/forms/next")
		})
		t.Run("404 unknown and malformed process ids", func(t *testing.T) {
			for _, id := range []string{"999999", "abc", "-1", "1e3"} {
				res, _ := env.Next(c, id, 1, []map[string]any{})
				handlertest.ExpectHTTPError(t, res, http.StatusNotFound, "/api/forms/next")
				handlertest.ExpectHTTPError(t, env.Do(c, http.MethodPost, "/api/forms/processes/"+url.PathEscape(id)+"/reset", map[string]any{}),
					http.StatusNotFound, "/api/forms/processes/"+url.PathEscape(id)+"/reset")
			}
		})
		t.Run("404 for another user's process", func(t *testing.T) {
			other := env.NewClient()
			env.Login(other, "demo-1")
			res, _ := env.Next(other, pid, 1, []map[string]any{{"id": 1, "answer": "0612345678"}})
			handlertest.ExpectHTTPError(t, res, http.StatusNotFound, "/api/forms/next")
			handlertest.ExpectHTTPError(t, env.Do(other, http.MethodPost, "/api/forms/processes/"+pid+"/resume", map[string]any{}), http.StatusNotFound, "/api/forms/processes/"+pid+"/resume")
		})
		t.Run("401 userKey of someone else", func(t *testing.T) {
			handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo-1", nil), http.StatusUnauthorized, "/api/forms/membership/1")
		})
		// The spec's status table: 401 for a "missing or invalid userKey".
		t.Run("401 missing or empty userKey", func(t *testing.T) {
			for _, query := range []string{"", "?userKey=", "?organisationId=1", "?userKey=&organisationId=1"} {
				handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/1"+query, nil), http.StatusUnauthorized, "/api/forms/membership/1")
			}
		})
		t.Run("400 bad parameters", func(t *testing.T) {
			handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/x?userKey=demo", nil), http.StatusBadRequest, "/api/forms/membership/x")
			handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo&organisationId=z", nil), http.StatusBadRequest, "/api/forms/membership/1")
		})
		t.Run("404 unknown period and organisation mismatch", func(t *testing.T) {
			handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/77?userKey=demo", nil), http.StatusNotFound, "/api/forms/membership/77")
			handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo&organisationId=2", nil), http.StatusNotFound, "/api/forms/membership/1")
		})
		bad := []struct{ name, body, field string }{
			{"not JSON", `{`, "body"},
			{"array", `[]`, "body"},
			{"missing processId", `{"step":1,"people":[]}`, "processId"},
			{"missing step", `{"processId":"1","people":[]}`, "step"},
			{"negative step", `{"processId":"1","step":-1,"people":[]}`, "step"},
			{"fractional step", `{"processId":"1","step":1.5,"people":[]}`, "step"},
			{"missing people", `{"processId":"1","step":1}`, "people"},
			{"people null", `{"processId":"1","step":1,"people":null}`, "people"},
			{"people an object", `{"processId":"1","step":1,"people":{}}`, "people"},
			{"people a string", `{"processId":"1","step":1,"people":"1,3"}`, "people"},
			{"person without id", `{"processId":"1","step":1,"people":[{"answer":"x"}]}`, "people[0].id"},
			{"answer object", `{"processId":"1","step":1,"people":[{"id":1,"answer":{}}]}`, "people[0].answer"},
			{"selected string", `{"processId":"1","step":0,"people":[{"id":1,"selected":"yes"}]}`, "people[0].selected"},
			{"two objects", `{"processId":"1","step":1,"people":[]} {}`, ""},
		}
		for _, tc := range bad {
			t.Run("400 "+tc.name, func(t *testing.T) {
				e := handlertest.ExpectHTTPError(t, env.Do(c, http.MethodPost, "/api/forms/next", tc.body), http.StatusBadRequest, "/api/forms/next")
				if tc.field != "" && (len(e.Errors) == 0 || e.Errors[0].Field != tc.field) {
					t.Fatalf("errors %+v, want field %s", e.Errors, tc.field)
				}
			})
		}
		t.Run("413 body over 64 KiB", func(t *testing.T) {
			big := `{"processId":"1","step":1,"people":[{"id":1,"answer":"` + strings.Repeat("x", 70<<10) + `"}]}`
			handlertest.ExpectHTTPError(t, env.Do(c, http.MethodPost, "/api/forms/next", big), http.StatusRequestEntityTooLarge, "/api/forms/next")
		})
		t.Run("415 without JSON content type", func(t *testing.T) {
			res := env.Do(c, http.MethodPost, "/api/forms/next", nil, "Content-Type", "text/plain")
			handlertest.ExpectHTTPError(t, res, http.StatusUnsupportedMediaType, "/api/forms/next")
		})
		t.Run("403 cross-site browser request", func(t *testing.T) {
			res := env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/reset", map[string]any{}, "Sec-Fetch-Site", "cross-site")
			handlertest.ExpectHTTPError(t, res, http.StatusForbidden, "/api/forms/processes/"+pid+"/reset")
			res = env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/reset", map[string]any{}, "Origin", "https://evil.example")
			handlertest.ExpectHTTPError(t, res, http.StatusForbidden, "/api/forms/processes/"+pid+"/reset")
		})
		t.Run("nothing changed by the rejected requests", func(t *testing.T) {
			res := env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/resume", map[string]any{})
			var f handlertest.Form
			res.JSON(t, &f)
			if res.Status != http.StatusOK || f.Step != 1 || f.ProcessState != "RUNNING" || f.People[0].Answer != nil {
				t.Fatalf("resume after rejected requests: %d %s", res.Status, res.Body)
			}
		})
	})
}

// TestPersonNamedTwice: a person named twice in one submission is a
// malformed request (400 naming the later entry) at person selection as on
// a question step, whatever the entries' selected say, and changes nothing.
func TestPersonNamedTwice(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		pid := env.StartDemo(c).ProcessID
		resume := func() handlertest.Form {
			return handlertest.DecodeForm(t, env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/resume", map[string]any{}), http.StatusOK)
		}
		tests := []struct {
			name   string
			step   int
			people []map[string]any
			field  string
		}{
			{"selection, the same id twice", 0, []map[string]any{{"id": 1}, {"id": 1}}, "people[1].id"},
			{"selection, selected twice among others", 0, []map[string]any{{"id": 1}, {"id": 3}, {"id": 1, "selected": true}}, "people[2].id"},
			{"selection, selected and not", 0, []map[string]any{{"id": 3}, {"id": 3, "selected": false}}, "people[1].id"},
			{"question step, the same id twice", 1, []map[string]any{{"id": 1, "answer": "0612345678"}, {"id": 3, "answer": "0687654321"}, {"id": 1, "answer": "0612345678"}}, "people[2].id"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if tc.step == 1 && resume().Step == 0 {
					if res, _ := env.Next(c, pid, 0, []map[string]any{{"id": 1}, {"id": 3}}); res.Status != http.StatusOK {
						t.Fatalf("select: %d %s", res.Status, res.Body)
					}
				}
				res, _ := env.Next(c, pid, tc.step, tc.people)
				e := handlertest.ExpectHTTPError(t, res, http.StatusBadRequest, "/api/forms/next")
				if len(e.Errors) != 1 || e.Errors[0].Field != tc.field {
					t.Fatalf("errors %+v, want one naming %s", e.Errors, tc.field)
				}
				f := resume()
				if f.Step != tc.step {
					t.Fatalf("after the refusal the registration is at step %d, want %d", f.Step, tc.step)
				}
				for _, p := range f.People {
					if (tc.step == 0 && p.Selected) || p.Answer != nil {
						t.Fatalf("after the refusal person %d is selected %v with answer %v: something was stored", p.ID, p.Selected, p.Answer)
					}
				}
			})
		}
	})
}

func TestResetBackResumeOverHTTP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		f := env.StartDemo(c)
		pid := f.ProcessID
		env.Next(c, pid, 0, []map[string]any{{"id": 1}, {"id": 3}})
		env.Next(c, pid, 1, handlertest.DemoAnswers[1])
		res := env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/back", map[string]any{"step": 2})
		var back handlertest.Form
		res.JSON(t, &back)
		if res.Status != http.StatusOK || back.Step != 1 || back.People[0].Answer == nil || *back.People[0].Answer != "0612345678" {
			t.Fatalf("back: %d %s", res.Status, res.Body)
		}
		res = env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/back", "", "Content-Type", "application/json")
		res.JSON(t, &back)
		if res.Status != http.StatusOK || back.Step != 0 || back.ProcessState != "RUNNING" {
			t.Fatalf("back to selection: %d %s", res.Status, res.Body)
		}
		res = env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/reset", nil, "Content-Type", "application/json")
		var reset handlertest.Form
		res.JSON(t, &reset)
		if res.Status != http.StatusOK || reset.ProcessState != "INIT" || reset.Step != 0 || len(reset.People) != 4 {
			t.Fatalf("reset: %d %s", res.Status, res.Body)
		}
		var rows int
		if err := db.NewRaw("SELECT count(*) FROM process_data WHERE instance_id = ?", pid).Scan(t.Context(), &rows); err != nil || rows != 0 {
			t.Fatalf("process data after reset: %d %v", rows, err)
		}
	})
}

// TestConcurrentSubmissionsOverHTTP races 50 submissions of the last step:
// one wins, the others get 409, and exactly one order exists.
func TestConcurrentSubmissionsOverHTTP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		f := env.StartDemo(c)
		env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3}})
		for _, step := range handlertest.DemoPath[:len(handlertest.DemoPath)-1] {
			env.Next(c, f.ProcessID, step, handlertest.DemoAnswers[step])
		}
		const n = 50
		statuses := make([]int, n)
		handlertest.Together(n, func(i int) {
			req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/api/forms/next",
				strings.NewReader(fmt.Sprintf(`{"processId":%q,"step":8,"people":[{"id":1,"answer":"1"},{"id":3,"answer":"1"}]}`, f.ProcessID)))
			req.Header.Set("Content-Type", "application/json")
			res, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		})
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[200] != 1 || count[409] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 409", count, n-1)
		}
		var orders, memberships int
		ctx := t.Context()
		if err := db.NewRaw("SELECT count(*) FROM orders WHERE process_instance_id = ?", f.ProcessID).Scan(ctx, &orders); err != nil {
			t.Fatal(err)
		}
		if err := db.NewRaw("SELECT count(*) FROM memberships WHERE process_instance_id = ?", f.ProcessID).Scan(ctx, &memberships); err != nil {
			t.Fatal(err)
		}
		if orders != 1 || memberships != 2 {
			t.Fatalf("orders %d memberships %d, want 1 and 2", orders, memberships)
		}
	})
}

// TestChunkedBodyOverLimit checks that a body over 64 KiB without a
// Content-Length is still a 413, not a JSON syntax error.
func TestChunkedBodyOverLimit(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	c := env.NewClient()
	env.Login(c, "demo")
	for _, path := range []string{"/api/auth/external-login", "/api/forms/next", "/api/forms/processes/1/back"} {
		t.Run(path, func(t *testing.T) {
			body := io.MultiReader(strings.NewReader(`{"userKey":"`), strings.NewReader(strings.Repeat("x", 70<<10)), strings.NewReader(`"}`))
			req, _ := http.NewRequest(http.MethodPost, env.Server.URL+path, body)
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = -1
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", res.StatusCode)
			}
		})
	}
}

// TestRelayErrorsAreJSON: the relay is an API: even the gateway's own
// refusals there answer the spec's JSON error body, not a page.
func TestRelayErrorsAreJSON(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	c := env.NewClient()
	path := "/services/admin-service/api/events"
	handlertest.ExpectHTTPError(t, env.Do(c, http.MethodPost, path, map[string]any{}, "Origin", "https://evil.example"), http.StatusForbidden, path)
	handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, path, nil), http.StatusServiceUnavailable, path)
}
