package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

// formStatus is one status a form operation's handler answers, and when.
type formStatus struct {
	op     string // "POST /api/forms/next", as the document's paths name it
	status int
	// when is how the document's description of this status names the
	// condition; no other status of the operation may name it.
	when string
	// tiedTo, when set, are words that tie the condition to a status
	// anywhere else: in the descriptions the operation reaches (its
	// parameters, its request and response schemas, the API's own
	// description) and in docs/FORM-API.md, every sentence with these
	// words and a status code names this status and no other.
	tiedTo string
	field  string // a 400: the field errors names
	// produce makes the handler answer the status; nil for the faults
	// made in another test (elsewhere).
	produce   func() handlertest.Response
	elsewhere string
}

// TestFormStatusesAgreeWithTheDocument holds the form operations'
// statuses, one table of what the handlers answer and when, to both API
// documents: per operation the table's statuses are exactly the ones the
// OpenAPI description lists; each row's condition is described under its
// status and under no other, and no other description, nor
// docs/FORM-API.md, ties it to another status; and each row is produced
// by the running server, in the spec's error shapes (the 500 included,
// with no internal text; the 503 by TestDatabaseOutageIsUnavailable).
func TestFormStatusesAgreeWithTheDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "FORM-API.md"))
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c, anon := env.NewClient(), env.NewClient()
		env.Login(c, "demo")
		const (
			load  = "GET /api/forms/membership/{periodid}"
			next  = "POST /api/forms/next"
			reset = "POST /api/forms/processes/{processid}/reset"
			resum = "POST /api/forms/processes/{processid}/resume"
			back  = "POST /api/forms/processes/{processid}/back"
		)
		var pid string
		get := func(cl *http.Client, query string) func() handlertest.Response {
			return func() handlertest.Response { return env.Do(cl, http.MethodGet, "/api/forms/membership/"+query, nil) }
		}
		post := func(cl *http.Client, path string, body any, headers ...string) func() handlertest.Response {
			return func() handlertest.Response { return env.Do(cl, http.MethodPost, path, body, headers...) }
		}
		proc := func(op string) string { return "/api/forms/processes/" + pid + "/" + op }
		body := func(step int, people ...map[string]any) map[string]any {
			return map[string]any{"processId": pid, "step": step, "people": append([]map[string]any{}, people...)}
		}
		nextTo := func(step int, people ...map[string]any) func() handlertest.Response {
			return func() handlertest.Response {
				return env.Do(c, http.MethodPost, "/api/forms/next", body(step, people...))
			}
		}
		onProcess := func(op string, cl *http.Client, b any, headers ...string) func() handlertest.Response {
			return func() handlertest.Response { return env.Do(cl, http.MethodPost, proc(op), b, headers...) }
		}
		big := `{"processId":"1","step":1,"people":[{"id":1,"answer":"` + strings.Repeat("x", 70<<10) + `"}]}`
		crossSite := []string{"Sec-Fetch-Site", "cross-site"}
		// walk answers the demo's questions up to its last, which it leaves open.
		walk := func() {
			for _, step := range handlertest.DemoPath[:len(handlertest.DemoPath)-1] {
				if res, _ := env.Next(c, pid, step, handlertest.DemoAnswers[step]); res.Status != http.StatusOK {
					t.Fatalf("step %d: %d %s", step, res.Status, res.Body)
				}
			}
		}
		// unoffered is a payment method of the document's list the club does not offer.
		unoffered := func() string {
			res := env.Do(c, http.MethodPost, proc("resume"), map[string]any{})
			var f struct{ PaymentMethods []string }
			res.JSON(t, &f)
			for _, m := range doc.Components.Schemas["NextRequest"].Value.Properties["paymentMethod"].Value.Enum {
				if !slices.Contains(f.PaymentMethods, m.(string)) {
					return m.(string)
				}
			}
			t.Fatalf("the club offers every payment method: %v", f.PaymentMethods)
			return ""
		}
		brokenDatabase := func() {
			if res, _ := env.Next(c, pid, 0, []map[string]any{{"id": 2}}); res.Status != http.StatusOK {
				t.Fatalf("select: %d %s", res.Status, res.Body)
			}
			if _, err := db.ExecContext(t.Context(), "DROP TABLE process_data"); err != nil {
				t.Fatal(err)
			}
		}
		var method string
		table := []formStatus{
			{op: load, status: 401, when: "no JSESSIONID cookie", produce: get(anon, "1?userKey=demo")},
			{op: load, status: 201, when: "this call created a new process instance", produce: func() handlertest.Response {
				res := get(c, "1?userKey=demo")()
				var f handlertest.Form
				res.JSON(t, &f)
				pid = f.ProcessID
				return res
			}},
			{op: load, status: 200, when: "already has an unfinished registration", produce: get(c, "1?userKey=demo")},
			{op: load, status: 400, when: "periodid is not a positive whole number", field: "periodid", produce: get(c, "x?userKey=demo")},
			{op: load, status: 400, when: "organisationId is given but is not a positive whole number", field: "organisationId", produce: get(c, "1?userKey=demo&organisationId=z")},
			{op: load, status: 401, when: "userKey is missing or empty", tiedTo: "missing or empty userKey", produce: get(c, "1?organisationId=1")},
			{op: load, status: 401, when: "is not the user key the session was signed in with", produce: get(c, "1?userKey=demo-1")},
			{op: load, status: 404, when: "No membership period has this id", produce: get(c, "77?userKey=demo")},
			{op: load, status: 404, when: "organisationId is given and is not the period's organisation", produce: get(c, "1?userKey=demo&organisationId=2")},
			{op: load, status: 409, when: "Registration for the period is closed", produce: get(c, "2?userKey=demo")},

			{op: back, status: 409, when: "the process is at person selection", produce: onProcess("back", c, map[string]any{})},
			{op: resum, status: 200, when: "The current step with its saved answers", produce: onProcess("resume", c, map[string]any{})},

			{op: next, status: 401, when: "no JSESSIONID cookie", produce: post(anon, "/api/forms/next", map[string]any{"processId": "1", "step": 0, "people": []any{}})},
			{op: next, status: 403, when: "cross-origin browser request", produce: post(c, "/api/forms/next", map[string]any{"processId": "1", "step": 0, "people": []any{}}, crossSite...)},
			{op: next, status: 413, when: "larger than 64 KiB", produce: post(c, "/api/forms/next", big)},
			{op: next, status: 415, when: "does not have Content-Type application/json", produce: post(c, "/api/forms/next", nil, "Content-Type", "text/plain")},
			{op: next, status: 400, when: "people missing, null or not an array", field: "people", produce: func() handlertest.Response {
				return env.Do(c, http.MethodPost, "/api/forms/next", `{"processId":"`+pid+`","step":0,"people":{}}`)
			}},
			{op: next, status: 400, when: "a person given twice", tiedTo: "person given twice", field: "people[1].id", produce: nextTo(0, map[string]any{"id": 1}, map[string]any{"id": 1})},
			{op: next, status: 404, when: "names no process instance of the signed-in user key", produce: post(c, "/api/forms/next", map[string]any{"processId": "999999", "step": 0, "people": []any{}})},
			{op: next, status: 422, when: "breaks a rule", produce: nextTo(0, map[string]any{"id": 4})},
			{op: next, status: 200, when: "the process moved on", produce: nextTo(0, map[string]any{"id": 1}, map[string]any{"id": 3})},
			{op: next, status: 409, when: "The step is not the current step", produce: nextTo(3)},
			{op: next, status: 400, when: "a paymentMethod the club does not offer", tiedTo: "does not offer", field: "paymentMethod", produce: func() handlertest.Response {
				walk()
				method = unoffered()
				b := body(handlertest.DemoLast, handlertest.DemoAnswers[handlertest.DemoLast]...)
				b["paymentMethod"] = method
				res := env.Do(c, http.MethodPost, "/api/forms/next", b)
				if f := handlertest.DecodeForm(t, env.Do(c, http.MethodPost, proc("resume"), map[string]any{}), http.StatusOK); f.Step != handlertest.DemoLast || f.ProcessState != "RUNNING" {
					t.Errorf("after paymentMethod %q: step %d %s, want nothing committed", method, f.Step, f.ProcessState)
				}
				return res
			}},

			{op: back, status: 400, when: "step is not a whole number", field: "step", produce: onProcess("back", c, `{"step":"three"}`)},
			{op: back, status: 409, when: "step is given and is not the current step", produce: onProcess("back", c, map[string]any{"step": 5})},
			{op: back, status: 200, when: "The process moved one step back", produce: onProcess("back", c, map[string]any{"step": handlertest.DemoLast})},
		}
		for _, op := range []string{reset, resum, back} {
			name := op[strings.LastIndex(op, "/")+1:]
			table = append(table,
				formStatus{op: op, status: 401, when: "no JSESSIONID cookie", produce: onProcess(name, anon, map[string]any{})},
				formStatus{op: op, status: 403, when: "cross-origin browser request", produce: onProcess(name, c, map[string]any{}, crossSite...)},
				formStatus{op: op, status: 413, when: "larger than 64 KiB", produce: onProcess(name, c, big)},
				formStatus{op: op, status: 415, when: "does not have Content-Type application/json", produce: onProcess(name, c, nil)},
				formStatus{op: op, status: 404, when: "names no process instance of the signed-in user key", produce: post(c, "/api/forms/processes/999999/"+name, map[string]any{})},
			)
		}
		table = append(table,
			formStatus{op: reset, status: 200, when: "back at person selection", produce: func() handlertest.Response {
				res := onProcess("reset", c, map[string]any{})()
				// Committed and paid for what follows.
				if r, _ := env.Next(c, pid, 0, []map[string]any{{"id": 1}, {"id": 3}}); r.Status != http.StatusOK {
					t.Fatalf("select: %d %s", r.Status, r.Body)
				}
				walk()
				r, f := env.Next(c, pid, handlertest.DemoLast, handlertest.DemoAnswers[handlertest.DemoLast])
				if r.Status != http.StatusOK || f.PaymentURL == nil {
					t.Fatalf("commit: %d %s", r.Status, r.Body)
				}
				handlertest.PayDTO(t, env, c, *f.PaymentURL)
				return res
			}},
			formStatus{op: reset, status: 409, when: "already finished", produce: onProcess("reset", c, map[string]any{})},
			formStatus{op: resum, status: 409, when: "already finished", produce: onProcess("resume", c, map[string]any{})},
			formStatus{op: back, status: 409, when: "already committed (DONE) or finished", produce: onProcess("back", c, map[string]any{})},
			formStatus{op: next, status: 409, when: "finished (COMPLETED, CANCELLED, FAILED)", produce: nextTo(handlertest.DemoLast + 1)},
		)
		// The server faults: a statement that fails (here on a dropped
		// table) is a 500 whose message carries a request id and no
		// internal text; a database out of reach is a 503.
		faults := map[string]func() handlertest.Response{
			load:  get(c, "1?userKey=demo"),
			next:  nextTo(1, map[string]any{"id": 2, "answer": "0612345678"}),
			reset: onProcess("reset", c, map[string]any{}),
			resum: onProcess("resume", c, map[string]any{}),
			back:  onProcess("back", c, map[string]any{"step": 1}),
		}
		for i, op := range []string{load, next, reset, resum, back} {
			produce := faults[op]
			if i == 0 {
				produce = func() handlertest.Response {
					if g := handlertest.DecodeForm(t, get(c, "1?userKey=demo")(), http.StatusCreated); g.ProcessID == pid {
						t.Fatalf("the load after payment kept process %s", pid)
					} else {
						pid = g.ProcessID
					}
					brokenDatabase()
					return faults[load]()
				}
			}
			table = append(table,
				formStatus{op: op, status: 500, when: "A server fault", produce: produce},
				formStatus{op: op, status: 503, when: "temporarily unavailable", elsewhere: "TestDatabaseOutageIsUnavailable"})
		}

		// The table against the document.
		described := descriptionsOf(doc, "/api/forms/")
		for _, op := range []string{load, next, reset, resum, back} {
			method, path, _ := strings.Cut(op, " ")
			operation := doc.Paths.Value(path).GetOperation(method)
			var documented, tabled []int
			for code := range operation.Responses.Map() {
				n, _ := strconv.Atoi(code)
				documented = append(documented, n)
			}
			for _, row := range table {
				if row.op == op && !slices.Contains(tabled, row.status) {
					tabled = append(tabled, row.status)
				}
			}
			slices.Sort(documented)
			slices.Sort(tabled)
			if !slices.Equal(documented, tabled) {
				t.Errorf("%s: the document lists %v, the handlers answer %v", op, documented, tabled)
			}
		}
		for _, row := range table {
			method, path, _ := strings.Cut(row.op, " ")
			operation := doc.Paths.Value(path).GetOperation(method)
			for code, resp := range operation.Responses.Map() {
				names := strings.Contains(plain(*resp.Value.Description), plain(row.when))
				if mine := code == strconv.Itoa(row.status); names != mine {
					t.Errorf("%s %s: the description %s %q: %q", row.op, code, map[bool]string{true: "names", false: "does not name"}[names], row.when, *resp.Value.Description)
				}
			}
			if row.tiedTo == "" {
				continue
			}
			for _, where := range []struct {
				name  string
				texts []string
			}{{"the OpenAPI description", described}, {"docs/FORM-API.md", markdownSentences(string(guide))}} {
				for _, text := range where.texts {
					for _, sentence := range sentences(text) {
						if !strings.Contains(plain(sentence), plain(row.tiedTo)) {
							continue
						}
						for _, code := range statusCodes.FindAllString(sentence, -1) {
							if code != strconv.Itoa(row.status) {
								t.Errorf("%s ties %q to %s, the handler answers %d: %q", where.name, row.tiedTo, code, row.status, sentence)
							}
						}
					}
				}
			}
		}

		// The table against the server, in order.
		for _, row := range table {
			if row.produce == nil {
				continue
			}
			res := row.produce()
			if res.Status != row.status {
				t.Fatalf("%s, %s: %d %s, want %d", row.op, row.when, res.Status, res.Body, row.status)
			}
			switch {
			case row.status == http.StatusUnprocessableEntity:
				var e handlertest.ProcessError
				res.JSON(t, &e)
				if e.ProcessState != "ERROR" || e.ProcessID != pid || e.Message == "" {
					t.Errorf("%s, %s: not the spec's process error: %s", row.op, row.when, res.Body)
				}
			case row.status >= 400:
				var e handlertest.HTTPError
				res.JSON(t, &e)
				if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil || e.Status != row.status || e.Error != http.StatusText(row.status) ||
					e.Message == "" || !strings.HasPrefix(e.Path, "/api/forms/") || e.Errors == nil {
					t.Errorf("%s, %s: not the spec's HTTP error: %s", row.op, row.when, res.Body)
				}
				fields := make([]string, len(e.Errors))
				for i, f := range e.Errors {
					fields[i] = f.Field
				}
				if row.field != "" && !slices.Contains(fields, row.field) {
					t.Errorf("%s, %s: errors name %v, want %s", row.op, row.when, fields, row.field)
				}
				if row.status == http.StatusInternalServerError && (!strings.Contains(e.Message, "request id") || strings.Contains(strings.ToLower(string(res.Body)), "process_data")) {
					t.Errorf("%s: a fault's body must carry a request id and no internal text: %s", row.op, res.Body)
				}
			}
		}
	})
}

// statusCodes are the statuses the form operations document.
var statusCodes = regexp.MustCompile(`\b(?:200|201|400|401|403|404|409|413|415|422|500|503)\b`)

// plain is text for comparison: lower case, without Markdown's backticks
// and with single spaces.
func plain(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(s, "`", ""))), " ")
}

// sentences splits a text at the ends of its sentences and lines.
func sentences(text string) []string {
	return regexp.MustCompile(`[.;!?]\s+|\n`).Split(text, -1)
}

// markdownSentences are a Markdown document's table rows and paragraphs
// (list items apart), each one text.
func markdownSentences(md string) []string {
	var out []string
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, strings.Join(para, " "))
			para = nil
		}
	}
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "|"):
			flush()
			out = append(out, trimmed)
		case strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "#"):
			flush()
			para = append(para, trimmed)
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return out
}

// descriptionsOf collects the descriptions the operations under prefix
// reach, besides their responses' own: the API's description, the
// operations', their parameters' and request bodies', and those of every
// schema their requests and responses reach.
func descriptionsOf(doc *openapi3.T, prefix string) []string {
	out := []string{doc.Info.Description}
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		out = append(out, s.Description)
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		for _, list := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf} {
			for _, r := range list {
				walk(r)
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		for _, op := range item.Operations() {
			out = append(out, op.Summary, op.Description)
			for _, p := range op.Parameters {
				out = append(out, p.Value.Description)
				walk(p.Value.Schema)
			}
			if rb := op.RequestBody; rb != nil {
				out = append(out, rb.Value.Description)
				for _, media := range rb.Value.Content {
					walk(media.Schema)
				}
			}
			for _, resp := range op.Responses.Map() {
				for _, media := range resp.Value.Content {
					walk(media.Schema)
				}
			}
		}
	}
	return out
}
