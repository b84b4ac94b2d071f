package members_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

// serverTimingCounts reads the statement counts of a Server-Timing header
// (handlers/timing.go): the session lookup's, the handler's and BEGIN/COMMIT.
func serverTimingCounts(t testing.TB, r handlertest.Response) (session, handler, tx int) {
	t.Helper()
	m := regexp.MustCompile(`^db-session;desc="(\d+)", db;desc="(\d+)", db-tx;desc="(\d+)"$`).FindStringSubmatch(r.Header.Get("Server-Timing"))
	if m == nil {
		t.Fatalf("Server-Timing %q", r.Header.Get("Server-Timing"))
	}
	n := make([]int, 3)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return n[0], n[1], n[2]
}

// TestStepPageStatements: the person selection page, a question page and
// the API's form load of an open registration are each one statement
// besides the session lookup (PostgreSQL serves it from its cache, SQLite
// reads it), and no transaction: nothing else of the page or its
// middleware goes to the database.
func TestStepPageStatements(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{ServerTiming: true})
		expect := func(what string, r handlertest.Response, status int) {
			t.Helper()
			if r.Status != status {
				t.Fatalf("%s: status %d, want %d", what, r.Status, status)
			}
			session, handler, tx := serverTimingCounts(t, r)
			if handler != 1 || tx != 0 || session > 1 {
				t.Errorf("%s: %d statements, %d BEGIN/COMMIT and %d for the session, want 1, 0 and at most 1", what, handler, tx, session)
			}
		}
		c := env.BrowserLogin("demo")
		if p := env.Get(c, "/membership/register/1/persons"); p.Status != http.StatusOK { // starts the registration
			t.Fatalf("first selection page: %d", p.Status)
		}
		expect("selection page", env.Get(c, "/membership/register/1/persons").Response, http.StatusOK)
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")
		step := env.Get(c, "/membership/register/1/step/1")
		expect("question page", step.Response, http.StatusOK)
		if step.Doc.Find("#answer-1").Length() != 1 || step.Doc.Find("#answer-3").Length() != 1 {
			t.Errorf("question page without the selected persons' fields:\n%s", step.Body)
		}

		env.Login(c, "demo")
		expect("API form load", env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil), http.StatusOK)
	})
}
