package members_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/handlers/handlertest"
)

// everyTypeDefinition is a new version of the demo club's membership form
// with every question type, required and optional, each step answered by
// Alex (1) and Robin (3).
const everyTypeDefinition = `key: membership
name: Every question type
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: txt_req, questionText: Nickname, questionType: TXT, required: true}
  - {name: txt_opt, questionText: Notes, questionType: TXT}
  - {name: num_req, questionText: Height, questionType: NUM, required: true}
  - {name: num_opt, questionText: Shoe size, questionType: NUM}
  - {name: drp_opt, questionText: Team, questionType: DRP, options: [{value: a}, {value: b}]}
  - {name: rdo_opt, questionText: Day, questionType: RDO, options: [{value: mon}, {value: tue}]}
  - {name: sel_req, questionText: Sessions, questionType: SEL, required: true, options: [{value: 1x}, {value: 2x}, {value: 4+}]}
  - {name: sel_opt, questionText: Extras, questionType: SEL, options: [{value: x}, {value: y}]}
  - {name: bcb, questionText: Newsletter, questionType: BCB}
  - {name: one_req, questionText: Main contact, questionType: ONE, required: true}
  - {name: terms, questionText: Terms, questionType: ITC, required: true}
`

// importEveryType makes everyTypeDefinition the active form of the demo's period.
func importEveryType(t *testing.T, db *bun.DB) {
	t.Helper()
	spec, err := definition.ParseDefinition([]byte(everyTypeDefinition))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := definition.ImportDefinition(context.Background(), db, spec); err != nil {
		t.Fatal(err)
	}
}

// TestAnswersComeBackAsSent walks a form of every question type through
// the JSON API. Each answer comes back exactly as sent on back, resume and
// a reload (GET): text untrimmed, a TXT of spaces only accepted as an
// answer (the spec: "not null and not empty"), numbers and SEL lists as
// written; a missing answer of an optional step reads null (the spec's
// "send null for absent values"), a missing 0/1 answer "0". A refused
// answer stores nothing.
func TestAnswersComeBackAsSent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		importEveryType(t, db)
		c := env.NewClient()
		f := env.StartDemo(c)
		pid := f.ProcessID
		res, f := env.Next(c, pid, 0, []map[string]any{{"id": 1}, {"id": 3}})
		if res.Status != http.StatusOK || f.Step != 1 || f.QuestionType == nil || *f.QuestionType != "TXT" {
			t.Fatalf("select: %d %s", res.Status, res.Body)
		}
		none := (*string)(nil)
		steps := []struct {
			name   string
			sent   []map[string]any
			want   map[int64]*string // what every read returns
			refuse []any             // Alex's answers refused (422), each with the others of sent
		}{
			{name: "txt_req", sent: []map[string]any{{"id": 1, "answer": "  padded  "}, {"id": 3, "answer": "   "}},
				want: map[int64]*string{1: new("  padded  "), 3: new("   ")}},
			{name: "txt_opt", sent: []map[string]any{{"id": 3, "answer": ""}},
				want: map[int64]*string{1: none, 3: none}},
			{name: "num_req", sent: []map[string]any{{"id": 1, "answer": "1e3"}, {"id": 3, "answer": -0.5}},
				want:   map[int64]*string{1: new("1e3"), 3: new("-0.5")},
				refuse: []any{" 5", "1,5", "+5", ".5", "1_000", "0x10", "NaN", "Infinity"}},
			{name: "num_opt", sent: []map[string]any{{"id": 3, "answer": nil}},
				want: map[int64]*string{1: none, 3: none}},
			{name: "drp_opt", sent: []map[string]any{{"id": 1, "answer": "b"}, {"id": 3, "answer": ""}},
				want:   map[int64]*string{1: new("b"), 3: none},
				refuse: []any{" b", "B"}},
			{name: "rdo_opt", sent: []map[string]any{{"id": 1, "answer": ""}},
				want: map[int64]*string{1: none, 3: none}},
			{name: "sel_req", sent: []map[string]any{{"id": 1, "answer": "2x,4+"}, {"id": 3, "answer": "4+,1x"}},
				want:   map[int64]*string{1: new("2x,4+"), 3: new("4+,1x")},
				refuse: []any{`["2x","4+"]`, "1x, 2x", "1x,1x", "2x,"}},
			{name: "sel_opt", sent: []map[string]any{{"id": 1}, {"id": 3, "answer": ""}},
				want:   map[int64]*string{1: none, 3: none},
				refuse: []any{"x,x", "[]"}},
			{name: "bcb", sent: []map[string]any{{"id": 3, "answer": "1"}},
				want: map[int64]*string{1: new("0"), 3: new("1")}},
			{name: "one_req", sent: []map[string]any{{"id": 1, "answer": 1}},
				want: map[int64]*string{1: new("1"), 3: new("0")}},
		}
		answersOf := func(f handlertest.Form) map[int64]*string {
			out := map[int64]*string{}
			for _, p := range f.People {
				out[p.ID] = p.Answer
			}
			return out
		}
		same := func(got, want map[int64]*string) bool {
			for id, w := range want {
				g, ok := got[id]
				if !ok || (g == nil) != (w == nil) || (g != nil && *g != *w) {
					return false
				}
			}
			return len(got) == len(want)
		}
		show := func(m map[int64]*string) map[int64]any {
			out := map[int64]any{}
			for id, v := range m {
				out[id] = nil
				if v != nil {
					out[id] = *v
				}
			}
			return out
		}
		for i, s := range steps {
			step := i + 1
			for _, bad := range s.refuse {
				people := []map[string]any{{"id": 1, "answer": bad}}
				for _, p := range s.sent {
					if p["id"] != 1 {
						people = append(people, p)
					}
				}
				res, _ := env.Next(c, pid, step, people)
				var e handlertest.ProcessError
				if res.Status == http.StatusUnprocessableEntity {
					res.JSON(t, &e)
				}
				if res.Status != http.StatusUnprocessableEntity || len(e.Errors.People) != 1 || e.Errors.People[0].ID != 1 {
					t.Fatalf("%s: Alex's answer %q: %d %s, want 422 naming Alex alone", s.name, bad, res.Status, res.Body)
				}
				g := handlertest.DecodeForm(t, env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/resume", map[string]any{}), http.StatusOK)
				if g.Step != step || !same(answersOf(g), map[int64]*string{1: none, 3: none}) {
					t.Fatalf("%s: after a refusal, step %d answers %v: something was stored", s.name, g.Step, show(answersOf(g)))
				}
			}
			if res, f = env.Next(c, pid, step, s.sent); res.Status != http.StatusOK || f.Step != step+1 {
				t.Fatalf("%s: %v: %d %s", s.name, s.sent, res.Status, res.Body)
			}
			reads := []struct {
				how  string
				form handlertest.Form
			}{
				{"back", handlertest.DecodeForm(t, env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/back", map[string]any{"step": step + 1}), http.StatusOK)},
				{"resume", handlertest.DecodeForm(t, env.Do(c, http.MethodPost, "/api/forms/processes/"+pid+"/resume", map[string]any{}), http.StatusOK)},
				{"reload", handlertest.DecodeForm(t, env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil), http.StatusOK)},
			}
			for _, r := range reads {
				if r.form.Step != step {
					t.Fatalf("%s: %s is at step %d, want %d", s.name, r.how, r.form.Step, step)
				}
				if got := answersOf(r.form); !same(got, s.want) {
					t.Errorf("%s: %s returns %v, want %v (sent %v)", s.name, r.how, show(got), show(s.want), s.sent)
				}
			}
			// On again with the same answers.
			if res, f = env.Next(c, pid, step, s.sent); res.Status != http.StatusOK || f.Step != step+1 {
				t.Fatalf("%s again: %d %s", s.name, res.Status, res.Body)
			}
		}
	})
}
