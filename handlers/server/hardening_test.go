package server_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
)

// freeTextPhone drops the demo phone question's pattern so that it takes any
// text, and the answer reaches the database as the member sent it.
func freeTextPhone(t testing.TB, db *bun.DB) {
	t.Helper()
	if _, err := db.NewUpdate().Model((*engine.ProcessStep)(nil)).Set("format_pattern = NULL").
		Where("name = ?", "emergency_phone").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func answerCount(t testing.TB, db *bun.DB) int64 {
	t.Helper()
	n, err := db.NewSelect().Model((*engine.ProcessData)(nil)).Where("data_key = ?", engine.DataAnswer).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A NUL (or another control character) is a 422 in an answer and a 400 in
// an identifier, never a 500, on SQLite and on PostgreSQL.
func TestControlCharactersAreRefused(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		freeTextPhone(t, db)
		t.Run("answer over the API", func(t *testing.T) {
			c := env.NewClient()
			f := env.StartDemo(c)
			res, f := env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3}})
			if res.Status != http.StatusOK {
				t.Fatalf("select: %d %s", res.Status, res.Body)
			}
			res, _ = env.Next(c, f.ProcessID, 1, []map[string]any{{"id": 1, "answer": "0612345678"}, {"id": 3, "answer": "06\x0012"}})
			if res.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", res.Status, res.Body)
			}
			var e handlertest.ProcessError
			res.JSON(t, &e)
			if e.ProcessState != string(engine.StateError) || e.ProcessID != f.ProcessID || e.Step != 1 || len(e.Errors.People) != 1 || e.Errors.People[0].ID != 3 {
				t.Fatalf("body %s is not the process error for person 3", res.Body)
			}
			if n := answerCount(t, db); n != 0 {
				t.Fatalf("%d answers stored", n)
			}
			res = env.Do(c, http.MethodPost, "/api/forms/next", map[string]any{"processId": f.ProcessID + "\x00", "step": 1, "people": []any{}})
			handlertest.ExpectHTTPError(t, res, http.StatusBadRequest, "/api/forms/next")
			res = env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo%00", nil)
			handlertest.ExpectHTTPError(t, res, http.StatusBadRequest, "/api/forms/membership/1")
			res = env.Do(c, http.MethodPost, "/api/forms/processes/1%00/reset", map[string]any{})
			handlertest.ExpectHTTPError(t, res, http.StatusBadRequest, "/api/forms/processes/1\x00/reset")
		})
		c := env.BrowserLogin("demo")
		t.Run("answer on the question page", func(t *testing.T) {
			// The API subtest left demo's registration at step 1 with persons 1 and 3.
			p := env.Post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"06\x0012"}})
			if p.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.Status)
			}
			if n := answerCount(t, db); n != 0 {
				t.Fatalf("%d answers stored", n)
			}
		})
		for _, tc := range []struct{ name, method, path string }{
			{"test gateway page", http.MethodGet, "/dev/pay/PAY-%00x"},
			{"test gateway decision", http.MethodPost, "/dev/pay/PAY-%00x"},
			{"payment return", http.MethodGet, "/membership/payment-return?reference=PAY-%00x&status=success&transactionId=TX-1&signature=x"},
			{"payment return, escape", http.MethodGet, "/membership/payment-return?reference=PAY-%1Bx&status=success"},
			{"hash link", http.MethodGet, "/membership/register/1?u=demo%00&h=" + hashlink.Sign(handlertest.HashSecret, "demo\x00")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var p handlertest.Page
				if tc.method == http.MethodPost {
					p = env.Post(c, tc.path, url.Values{"status": {"success"}})
				} else {
					p = env.Get(c, tc.path)
				}
				if p.Status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400", p.Status)
				}
			})
		}
		t.Run("payment retry", func(t *testing.T) {
			p := env.Post(c, "/membership/payment-retry", url.Values{"reference": {"PAY-\x00x"}})
			if p.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", p.Status)
			}
		})
		t.Run("payment retry, multipart", func(t *testing.T) {
			var body bytes.Buffer
			w := multipart.NewWriter(&body)
			w.WriteField("reference", "PAY-\x00x")
			w.Close()
			res := env.Do(c, http.MethodPost, "/membership/payment-retry", body.Bytes(), "Content-Type", w.FormDataContentType())
			if res.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", res.Status)
			}
		})
	})
}

// forwarder is a TCP proxy to PostgreSQL that a test can cut and restore,
// to take the database away from a running server.
type forwarder struct {
	t      testing.TB
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

func newForwarder(t testing.TB, target string) *forwarder {
	t.Helper()
	fw := &forwarder{t: t, target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fw.addr = ln.Addr().String()
	fw.serve(ln)
	t.Cleanup(fw.cut)
	return fw
}

func (fw *forwarder) serve(ln net.Listener) {
	fw.mu.Lock()
	fw.ln = ln
	fw.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", fw.target)
			if err != nil {
				in.Close()
				continue
			}
			fw.mu.Lock()
			fw.conns[in], fw.conns[out] = struct{}{}, struct{}{}
			fw.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(in, out)
			go pipe(out, in)
		}
	}()
}

// cut closes the listener and every live connection: new connections are refused.
func (fw *forwarder) cut() {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.ln != nil {
		fw.ln.Close()
		fw.ln = nil
	}
	for c := range fw.conns {
		c.Close()
		delete(fw.conns, c)
	}
}

// restore listens again on the same address.
func (fw *forwarder) restore() {
	fw.t.Helper()
	ln, err := net.Listen("tcp", fw.addr)
	if err != nil {
		fw.t.Fatalf("listen again on %s: %v", fw.addr, err)
	}
	fw.serve(ln)
}

// A database outage is a calm 503 with Retry-After on the hash link, the
// pages and the API, logged as a warning; when the database is back the
// same requests succeed without a restart.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	dbtest.SkipWithoutPostgres(t)
	base, err := url.Parse(os.Getenv(dbtest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	fw := newForwarder(t, base.Host)
	db := dbtest.PostgresVia(t, fw.addr)
	var logs handlertest.LogBuffer
	env := handlertest.NewEnvWith(t, db, handlertest.Options{SessionDB: dbtest.Postgres(t), Log: &logs})
	page := env.BrowserLogin("demo")
	api := env.NewClient()
	pid := env.StartDemo(api).ProcessID
	link := "/membership/register/1?u=demo&h=" + hashlink.Sign(handlertest.HashSecret, "demo")

	fw.cut()
	logs.Take()
	// Every form operation documents the 503 (TestFormStatusesAgreeWithTheDocument).
	for _, tc := range []struct {
		name   string
		client *http.Client
		method string
		path   string
		body   any
	}{
		{"hash link", env.NewClient(), http.MethodGet, link, nil},
		{"page load", page, http.MethodGet, "/membership/register/1", nil},
		{"api", api, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil},
		{"api next", api, http.MethodPost, "/api/forms/next", map[string]any{"processId": pid, "step": 0, "people": []map[string]any{{"id": 1}}}},
		{"api reset", api, http.MethodPost, "/api/forms/processes/" + pid + "/reset", map[string]any{}},
		{"api resume", api, http.MethodPost, "/api/forms/processes/" + pid + "/resume", map[string]any{}},
		{"api back", api, http.MethodPost, "/api/forms/processes/" + pid + "/back", map[string]any{}},
	} {
		t.Run("down/"+tc.name, func(t *testing.T) {
			res := env.Do(tc.client, tc.method, tc.path, tc.body)
			if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
				t.Fatalf("got %d Retry-After %q, want 503 with Retry-After: %s", res.Status, res.Header.Get("Retry-After"), res.Body)
			}
			u, _ := url.Parse(tc.path)
			if strings.HasPrefix(tc.path, "/api/") {
				e := handlertest.ExpectHTTPError(t, res, http.StatusServiceUnavailable, u.Path)
				if !strings.Contains(e.Message, "temporarily unavailable") {
					t.Fatalf("message %q", e.Message)
				}
			} else {
				p := env.Parse(res)
				msg := p.TestID("error-message").Text()
				if !strings.Contains(msg, "temporarily unavailable") || strings.Contains(msg, "request id") {
					t.Fatalf("page message %q", msg)
				}
			}
			out := logs.Take()
			if strings.Contains(out, "level=ERROR") || !strings.Contains(out, "level=WARN") {
				t.Fatalf("logs should warn, not error:\n%s", out)
			}
		})
	}

	fw.restore()
	deadline := clock.Now().Add(10 * time.Second)
	for env.Do(env.NewClient(), http.MethodGet, link, nil).Status != http.StatusSeeOther {
		if clock.Now().After(deadline) {
			t.Fatal("the hash link did not recover within 10s of the database's return")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p := env.Get(page, "/membership/register/1"); p.Status != http.StatusOK {
		t.Fatalf("page after recovery: %d", p.Status)
	}
	if res := env.Do(api, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil); res.Status != http.StatusOK {
		t.Fatalf("api after recovery: %d %s", res.Status, res.Body)
	}
}

// Periods of other organisations answer exactly as unknown periods, on the
// API and on the hash link; one's own closed period may say so by name.
func TestOtherOrganisationsPeriodsDoNotLeak(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		now := clock.Now().UTC()
		for _, row := range []any{
			&engine.Organisation{ID: 2, Name: "Hillside Hockey Club", Slug: "hillside", DefaultLanguage: "en"},
			// With two organisations each needs its hostname; the test server is 127.0.0.1.
			&engine.OrganisationHost{Hostname: "127.0.0.1", OrganisationID: 1},
			&engine.OrganisationHost{Hostname: "hillside.example", OrganisationID: 2},
			&engine.MembershipPeriod{ID: 10, OrganisationID: 2, Name: "Hillside Open Season", StartDate: now.AddDate(0, -1, 0),
				EndDate: now.AddDate(0, 6, 0), Status: engine.PeriodOpen, Currency: "EUR", DefinitionKey: "membership"},
			&engine.MembershipPeriod{ID: 11, OrganisationID: 2, Name: "Hillside Closed Season", StartDate: now.AddDate(-1, -1, 0),
				EndDate: now.AddDate(0, -1, 0), Status: engine.PeriodClosed, Currency: "EUR", DefinitionKey: "membership"},
		} {
			if _, err := db.NewInsert().Model(row).Exec(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		c := env.NewClient()
		env.Login(c, "demo")
		hash := hashlink.Sign(handlertest.HashSecret, "demo")
		unknown := env.Do(c, http.MethodGet, "/api/forms/membership/99?userKey=demo", nil)
		want := handlertest.ExpectHTTPError(t, unknown, http.StatusNotFound, "/api/forms/membership/99")
		unknownLink := env.Get(env.NewClient(), "/membership/register/99?u=demo&h="+hash).Header.Get("Location")
		for _, id := range []string{"10", "11"} {
			t.Run("period "+id, func(t *testing.T) {
				path := "/api/forms/membership/" + id
				got := handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, path+"?userKey=demo", nil), http.StatusNotFound, path)
				if got.Message != want.Message {
					t.Fatalf("message %q, want the unknown period's %q", got.Message, want.Message)
				}
				got = handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, path+"?userKey=demo&organisationId=2", nil), http.StatusNotFound, path)
				if got.Message != want.Message {
					t.Fatalf("with organisationId: message %q, want %q", got.Message, want.Message)
				}
				p := env.Get(env.NewClient(), "/membership/register/"+id+"?u=demo&h="+hash)
				if loc := strings.Replace(p.Header.Get("Location"), "/"+id+"?", "/99?", 1); p.Status != http.StatusSeeOther || loc != unknownLink {
					t.Fatalf("hash link: %d to %q, want the unknown period's %q", p.Status, p.Header.Get("Location"), unknownLink)
				}
			})
		}
		t.Run("own closed period", func(t *testing.T) {
			e := handlertest.ExpectHTTPError(t, env.Do(c, http.MethodGet, "/api/forms/membership/2?userKey=demo", nil), http.StatusConflict, "/api/forms/membership/2")
			if !strings.Contains(e.Message, "closed") {
				t.Fatalf("message %q", e.Message)
			}
		})
	})
}

// unlinkRobin removes demo's link to person 3 (Robin Morgan), as the
// organisation might while the member answers the questions.
func unlinkRobin(t testing.TB, db *bun.DB) {
	t.Helper()
	if _, err := db.NewDelete().Model((*engine.UserPerson)(nil)).Where("user_key = ? AND person_id = ?", "demo", 3).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// expectNothingCommitted checks that no membership or order was written for the demo period.
func expectNothingCommitted(t testing.TB, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	ms, err := db.NewSelect().Model((*engine.Membership)(nil)).Where("period_id = ? AND process_instance_id IS NOT NULL", 1).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := db.NewSelect().Model((*engine.Order)(nil)).Count(ctx)
	if err != nil || ms != 0 || orders != 0 {
		t.Fatalf("%d memberships and %d orders written (%v), want none", ms, orders, err)
	}
}

// A person unlinked after selection stops the commit with a 422 naming them,
// over the API (the spec's process error body) and on the review page.
func TestCommitRechecksPersonLinksOverHTTP(t *testing.T) {
	t.Run("api", func(t *testing.T) {
		dbtest.Each(t, func(t *testing.T, db *bun.DB) {
			env := handlertest.NewEnv(t, db)
			c := env.NewClient()
			f := env.StartDemo(c)
			res, f := env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3}})
			for _, step := range handlertest.DemoPath[:len(handlertest.DemoPath)-1] {
				if res.Status != http.StatusOK {
					break
				}
				res, f = env.Next(c, f.ProcessID, step, handlertest.DemoAnswers[step])
			}
			if res.Status != http.StatusOK || f.Step != handlertest.DemoLast {
				t.Fatalf("at step %d: %d %s", f.Step, res.Status, res.Body)
			}
			unlinkRobin(t, db)
			res, _ = env.Next(c, f.ProcessID, handlertest.DemoLast, handlertest.DemoAnswers[handlertest.DemoLast])
			if res.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", res.Status, res.Body)
			}
			var e handlertest.ProcessError
			res.JSON(t, &e)
			if e.ProcessState != string(engine.StateError) || len(e.Errors.People) != 1 || e.Errors.People[0].ID != 3 ||
				!strings.Contains(e.Errors.People[0].Error, "Robin Morgan") {
				t.Fatalf("body %s does not name Robin Morgan", res.Body)
			}
			expectNothingCommitted(t, db)
		})
	})
	t.Run("review page", func(t *testing.T) {
		dbtest.Each(t, func(t *testing.T, db *bun.DB) {
			env := handlertest.NewEnv(t, db)
			c := env.BrowserLogin("demo")
			handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")
			for i, form := range []url.Values{
				{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}}, {"answer-1": {"M"}, "answer-3": {"S"}},
				{"answer-1": {"1"}}, {}, {"answer-3": {"1"}}, {"one": {"1"}},
			} {
				if p := env.Post(c, "/membership/register/1/step/"+strconv.Itoa(handlertest.DemoPath[i]), form); p.Status != http.StatusSeeOther {
					t.Fatalf("step %d: %d", handlertest.DemoPath[i], p.Status)
				}
			}
			handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/8", url.Values{"answer-1": {"1"}, "answer-3": {"1"}}), "/membership/register/1/review")
			version := env.Get(c, "/membership/register/1/review").Doc.Find(`input[name="version"]`).AttrOr("value", "")
			unlinkRobin(t, db)
			p := env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}})
			if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.TestID("notice").Text(), "Robin Morgan") {
				t.Fatalf("confirm: %d notice %q", p.Status, p.TestID("notice").Text())
			}
			expectNothingCommitted(t, db)
		})
	})
}

// The relay forwards requests as they came: control characters in its
// paths, queries and forms are the backend's to judge, not refused here.
func TestRelayForwardsControlCharacters(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{})
	res := env.Request(env.Client, http.MethodPost, handlertest.GatewayPrefix+"/echo/x?q=a%00b", strings.NewReader("f=c%00d"),
		"Accept", "application/json", "Content-Type", "application/x-www-form-urlencoded")
	var e handlertest.Echoed
	if res.Status == http.StatusOK {
		res.JSON(t, &e)
	}
	if res.Status != http.StatusOK || e.RawQuery != "q=a%00b" || e.Body != "f=c%00d" {
		t.Fatalf("relay: %d %+v, want the request forwarded unchanged", res.Status, e)
	}
}
