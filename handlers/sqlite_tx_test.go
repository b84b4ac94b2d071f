package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// answersAtOnce is how long a request on the form's registration may take:
// a request that waited for SQLite's one connection held by its own
// transaction never answered at all (issue 24), and the database guard
// (dbtest.PoolWait) cancels such a wait only after two seconds.
const answersAtOnce = time.Second

// TestEveryRegistrationStateAnswersAtOnce resumes, reloads, pays and
// re-opens a committed (unpaid), a paid, a suspended and a cancelled
// registration: each request answers within a second, and the server stays
// ready. Resuming a committed registration built its pay link on the
// organisation's address read through the pool inside Resume's
// transaction: on SQLite it never answered, and every request after it
// waited behind it.
func TestEveryRegistrationStateAnswersAtOnce(t *testing.T) {
	cases := []struct {
		name string
		// to brings the demo registration into the state and returns its
		// process id and pay link ("" when it has none).
		to func(t *testing.T, env *handlertest.Env, c *http.Client, db *bun.DB) (pid, payLink string)
	}{
		{"committed", func(t *testing.T, env *handlertest.Env, c *http.Client, db *bun.DB) (string, string) {
			f := env.CompleteDemo(c)
			if f.ProcessState != "DONE" || f.PaymentURL == nil {
				t.Fatalf("committed form %+v", f)
			}
			return f.ProcessID, *f.PaymentURL
		}},
		{"paid", func(t *testing.T, env *handlertest.Env, c *http.Client, db *bun.DB) (string, string) {
			f := env.CompleteDemo(c)
			pay, err := url.Parse(*f.PaymentURL)
			if err != nil {
				t.Fatal(err)
			}
			env.FollowPayment(c, pay, "success")
			return f.ProcessID, *f.PaymentURL
		}},
		{"suspended", func(t *testing.T, env *handlertest.Env, c *http.Client, db *bun.DB) (string, string) {
			f := env.StartDemo(c)
			env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}})
			// What the hourly suspension job leaves behind.
			if _, err := db.NewUpdate().Table("process_instances").Set("status = ?", engine.StateSuspended).
				Where("id = ?", f.ProcessID).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
			return f.ProcessID, ""
		}},
		{"cancelled", func(t *testing.T, env *handlertest.Env, c *http.Client, db *bun.DB) (string, string) {
			f := env.CompleteDemo(c)
			id, err := strconv.ParseInt(f.ProcessID, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if err := staff.Of(env.Engine).CancelRegistration(t.Context(), engine.CommandLine, 1, id); err != nil {
				t.Fatal(err)
			}
			return f.ProcessID, *f.PaymentURL
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				env := handlertest.NewEnv(t, db)
				c := env.NewClient()
				pid, payLink := tc.to(t, env, c, db)
				requests := []struct{ method, path string }{
					{http.MethodPost, "/api/forms/processes/" + pid + "/resume"},
					{http.MethodGet, "/api/forms/membership/1?userKey=demo"},
					{http.MethodPost, "/api/forms/processes/" + pid + "/resume"},
					{http.MethodGet, "/membership/register/1"},
				}
				if payLink != "" {
					requests = append(requests, struct{ method, path string }{http.MethodGet, payLink})
				}
				requests = append(requests, struct{ method, path string }{http.MethodGet, "/readyz"})
				for _, r := range requests {
					ctx, cancel := context.WithTimeout(t.Context(), answersAtOnce)
					start := time.Now()
					status, err := answer(env, ctx, c, r.method, r.path)
					cancel()
					if err != nil {
						t.Fatalf("%s %s did not answer within %s: %v", r.method, r.path, answersAtOnce, err)
					}
					if status >= 500 {
						t.Fatalf("%s %s answered %d after %s", r.method, r.path, status, time.Since(start))
					}
				}
			})
		})
	}
}

// answer sends one request of the form API or the pages with ctx and
// returns its status once the whole answer is read.
func answer(env *handlertest.Env, ctx context.Context, c *http.Client, method, path string) (int, error) {
	var req *http.Request
	var err error
	if !strings.HasPrefix(path, "http") {
		path = env.Server.URL + path
	}
	if method == http.MethodPost {
		req, err = http.NewRequestWithContext(ctx, method, path, strings.NewReader("{}"))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, method, path, nil)
	}
	if err != nil {
		return 0, err
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return 0, err
	}
	return res.StatusCode, nil
}
