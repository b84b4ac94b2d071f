package members_test

import (
	"net/http"
	"strings"
	"testing"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

// FuzzNextBody posts arbitrary bodies to POST /api/forms/next: whatever
// arrives, the answer is a client error or success, never a 500 or a panic.
// `go test` runs the seeds; `go test -fuzz FuzzNextBody ./handlers/` explores.
func FuzzNextBody(f *testing.F) {
	seeds := []string{
		`{"processId":"1","step":0,"people":[{"id":1},{"id":3,"selected":true}]}`,
		`{"processId":"1","step":1,"people":[{"id":1,"answer":"0612345678"}]}`,
		`{"processId":1,"step":1,"people":[{"id":1,"answer":1}]}`,
		`{"processId":"1","step":1e300,"people":[]}`,
		`{"processId":"99999999999999999999","step":1,"people":[]}`,
		`{"processId":"1","step":1,"people":[{"id":-1},{"id":0},{"id":9223372036854775807}]}`,
		`{"processId":"1","step":1,"people":[{"id":1,"answer":"` + strings.Repeat("é", 1200) + `"}]}`,
		`{"processId":"1","step":2,"people":[{"id":1,"answer":"[\"M\",\"L\"]"}]}`,
		`{"processId":null,"step":null,"people":null}`,
		`[1,2,3]`, `"x"`, `null`, ``, `{`, `{"people":[null,1,"a",{}]}`,
		"{\"processId\":\"1\\u0000\",\"step\":0,\"people\":[]}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	env := handlertest.NewEnv(f, dbtest.SQLite(f))
	c := env.NewClient()
	env.StartDemo(c) // process 1, at person selection
	f.Fuzz(func(t *testing.T, body string) {
		env.TB = t
		res := env.Do(c, http.MethodPost, "/api/forms/next", body)
		if res.Status >= 500 {
			t.Fatalf("body %q: status %d %s", body, res.Status, res.Body)
		}
	})
}
