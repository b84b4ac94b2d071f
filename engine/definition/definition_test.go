package definition_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
)

// validYAML is a small definition with one step of each rule kind.
const validYAML = `
key: volunteer
name: Volunteer sign-up
category: MEMBERSHIP
organisationId: 1
steps:
  - name: phone
    questionText: Phone number
    questionType: TXT
    required: true
    format: {pattern: "^[0-9]{10}$", message: Phone number must be 10 digits}
  - name: hours
    questionText: Hours per month
    questionType: NUM
    range: {min: 1, max: 40}
  - name: role
    questionText: Role
    questionType: DRP
    required: true
    options:
      - {value: coach, label: Coach}
      - {value: driver}
  - name: juniors
    questionText: Junior helper consent
    questionType: ITC
    required: true
    persons: {maxAge: 17}
    price: {code: kit, label: Kit, answer: "1", amountMinor: 500}
`

const validJSON = `{
  "key": "volunteer",
  "name": "Volunteer sign-up",
  "category": "MEMBERSHIP",
  "organisationId": 1,
  "steps": [
    {"name": "phone", "questionText": "Phone number", "questionType": "TXT", "required": true,
     "format": {"pattern": "^[0-9]{10}$", "message": "Phone number must be 10 digits"}},
    {"name": "hours", "questionText": "Hours per month", "questionType": "NUM", "range": {"min": 1, "max": 40}},
    {"name": "role", "questionText": "Role", "questionType": "DRP", "required": true,
     "options": [{"value": "coach", "label": "Coach"}, {"value": "driver"}]},
    {"name": "juniors", "questionText": "Junior helper consent", "questionType": "ITC", "required": true,
     "persons": {"maxAge": 17}, "price": {"code": "kit", "label": "Kit", "answer": "1", "amountMinor": 500}}
  ]
}`

func TestParseDefinition(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{name: "YAML", data: validYAML},
		{name: "JSON", data: validJSON},
		{name: "JSON with surrounding whitespace", data: "\n\t " + validJSON + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := definition.ParseDefinition([]byte(tc.data))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if spec.Key != "volunteer" || spec.Name != "Volunteer sign-up" || spec.Category != "MEMBERSHIP" || spec.OrganisationID != 1 {
				t.Errorf("header = %q %q %q %d", spec.Key, spec.Name, spec.Category, spec.OrganisationID)
			}
			var steps []string
			for _, s := range spec.Steps {
				steps = append(steps, s.Name+":"+string(s.Type))
			}
			if want := []string{"phone:TXT", "hours:NUM", "role:DRP", "juniors:ITC"}; !slices.Equal(steps, want) {
				t.Fatalf("steps = %v, want %v", steps, want)
			}
			for i, s := range spec.Steps {
				if s.OrderIndex != i+1 {
					t.Errorf("step %s orderIndex = %d, want %d (its position)", s.Name, s.OrderIndex, i+1)
				}
			}
			phone, hours, role, juniors := spec.Steps[0], spec.Steps[1], spec.Steps[2], spec.Steps[3]
			if !phone.Required || phone.Format == nil || phone.Format.Pattern != "^[0-9]{10}$" || phone.Format.Message.In("en", "") != "Phone number must be 10 digits" {
				t.Errorf("phone = %+v, format %+v", phone, phone.Format)
			}
			if hours.Range == nil || *hours.Range.Min != 1 || *hours.Range.Max != 40 {
				t.Errorf("hours range = %+v", hours.Range)
			}
			// An option without a label is labelled with its value.
			if want := []definition.OptionSpec{{Value: "coach", Label: definition.Plain("Coach")}, {Value: "driver", Label: definition.Plain("driver")}}; !reflect.DeepEqual(role.Options, want) {
				t.Errorf("role options = %+v, want %+v", role.Options, want)
			}
			if juniors.Persons == nil || juniors.Persons.MaxAge == nil || *juniors.Persons.MaxAge != 17 || juniors.Persons.MinAge != nil {
				t.Errorf("juniors persons = %+v", juniors.Persons)
			}
			if juniors.Price == nil || !reflect.DeepEqual(*juniors.Price, definition.PriceSpec{Code: "kit", Label: definition.Plain("Kit"), Answer: "1", AmountMinor: 500}) {
				t.Errorf("juniors price = %+v", juniors.Price)
			}
		})
	}
}

// TestParseDefinitionOrdersSteps: explicit orderIndex values decide the order.
func TestParseDefinitionOrdersSteps(t *testing.T) {
	spec, err := definition.ParseDefinition([]byte(`
key: ordered
name: Ordered
category: MEMBERSHIP
organisationId: 1
steps:
  - {orderIndex: 20, name: second, questionText: Two, questionType: BCB}
  - {orderIndex: 10, name: first, questionText: One, questionType: BCB}
`))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if got := []string{spec.Steps[0].Name, spec.Steps[1].Name}; !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("steps = %v, want [first second]", got)
	}
}

// TestParseDefinitionRejects: each definition breaks one rule; the error is
// invalid input and names the problem.
func TestParseDefinitionRejects(t *testing.T) {
	// definition wraps one step (YAML, indented as a list item) in a valid header.
	specOf := func(steps string) string {
		return "key: broken\nname: Broken\ncategory: MEMBERSHIP\norganisationId: 1\nsteps:\n" + steps
	}
	tests := []struct {
		name string
		data string
		want string // part of the message
	}{
		{name: "unknown question type",
			data: specOf("  - {name: a, questionText: A, questionType: XYZ}\n"),
			want: `questionType "XYZ" is not one of`},
		{name: "lower-case question type",
			data: specOf("  - {name: a, questionText: A, questionType: txt}\n"),
			want: `questionType "txt" is not one of`},
		{name: "DRP without options",
			data: specOf("  - {name: a, questionText: A, questionType: DRP}\n"),
			want: "a DRP step needs options"},
		{name: "RDO without options",
			data: specOf("  - {name: a, questionText: A, questionType: RDO}\n"),
			want: "a RDO step needs options"},
		{name: "SEL without options",
			data: specOf("  - {name: a, questionText: A, questionType: SEL}\n"),
			want: "a SEL step needs options"},
		{name: "options on TXT",
			data: specOf("  - {name: a, questionText: A, questionType: TXT, options: [{value: x}]}\n"),
			want: "a TXT step takes no options"},
		{name: "duplicate option values",
			data: specOf("  - {name: a, questionText: A, questionType: DRP, options: [{value: x}, {value: x}]}\n"),
			want: `value "x" must be unique`},
		{name: "option value with a comma",
			data: specOf("  - {name: a, questionText: A, questionType: SEL, options: [{value: 'x,y'}]}\n"),
			want: "without commas"},
		{name: "bad regex",
			data: specOf("  - {name: a, questionText: A, questionType: TXT, format: {pattern: '[0-9', message: M}}\n"),
			want: "does not compile"},
		{name: "format without message",
			data: specOf("  - {name: a, questionText: A, questionType: TXT, format: {pattern: '^x$'}}\n"),
			want: "format needs a message"},
		{name: "duplicate step names",
			data: specOf("  - {name: a, questionText: A, questionType: TXT}\n  - {name: a, questionText: B, questionType: TXT}\n"),
			want: `name "a" must be a unique lower-case key`},
		{name: "step name with capitals",
			data: specOf("  - {name: Phone, questionText: A, questionType: TXT}\n"),
			want: `name "Phone" must be a unique lower-case key`},
		{name: "duplicate orderIndex",
			data: specOf("  - {orderIndex: 1, name: a, questionText: A, questionType: TXT}\n  - {orderIndex: 1, name: b, questionText: B, questionType: TXT}\n"),
			want: "orderIndex 1 must be positive and unique"},
		{name: "missing question text",
			data: specOf("  - {name: a, questionType: TXT}\n"),
			want: "questionText is required"},
		{name: "range on TXT",
			data: specOf("  - {name: a, questionText: A, questionType: TXT, range: {min: 1}}\n"),
			want: "range only applies to NUM steps"},
		{name: "range min above max",
			data: specOf("  - {name: a, questionText: A, questionType: NUM, range: {min: 5, max: 1}}\n"),
			want: "range min is above max"},
		{name: "persons minAge above maxAge",
			data: specOf("  - {name: a, questionText: A, questionType: BCB, persons: {minAge: 18, maxAge: 17}}\n"),
			want: "persons minAge is above maxAge"},
		{name: "price without code",
			data: specOf("  - {name: a, questionText: A, questionType: BCB, price: {label: L, answer: '1', amountMinor: 100}}\n"),
			want: "price needs code, label and answer"},
		{name: "negative price",
			data: specOf("  - {name: a, questionText: A, questionType: BCB, price: {code: c, label: L, answer: '1', amountMinor: -100}}\n"),
			want: "price amountMinor must not be negative"},
		{name: "no steps",
			data: "key: broken\nname: Broken\ncategory: MEMBERSHIP\norganisationId: 1\nsteps: []\n",
			want: "at least one step is required"},
		{name: "bad key",
			data: "key: Bad Key\nname: Broken\ncategory: MEMBERSHIP\norganisationId: 1\nsteps: [{name: a, questionText: A, questionType: TXT}]\n",
			want: `key "Bad Key" must be lower case`},
		{name: "missing organisation",
			data: "key: broken\nname: Broken\ncategory: MEMBERSHIP\nsteps: [{name: a, questionText: A, questionType: TXT}]\n",
			want: "organisationId is required"},
		{name: "JSON with a bad type",
			data: `{"key": "broken", "name": "Broken", "category": "MEMBERSHIP", "organisationId": 1,
				"steps": [{"name": "a", "questionText": "A", "questionType": "XYZ"}]}`,
			want: `questionType "XYZ" is not one of`},
		{name: "JSON with options on TXT",
			data: `{"key": "broken", "name": "Broken", "category": "MEMBERSHIP", "organisationId": 1,
				"steps": [{"name": "a", "questionText": "A", "questionType": "TXT", "options": [{"value": "x"}]}]}`,
			want: "a TXT step takes no options"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := definition.ParseDefinition([]byte(tc.data))
			if err == nil {
				t.Fatalf("parsed %+v, want an error", spec)
			}
			enginetest.WantCode(t, err, engine.CodeInvalid)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseDefinitionRejectsMalformedFiles: a file that does not decode is
// bad input like any other invalid definition, so it must carry CodeInvalid
// (a 400 with the reason), not fall through to an internal error.
func TestParseDefinitionRejectsMalformedFiles(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{name: "YAML with an unknown field", data: "key: broken\nname: Broken\ncategory: MEMBERSHIP\norganisationId: 1\ncolour: red\nsteps: [{name: a, questionText: A, questionType: TXT}]\n"},
		{name: "JSON with an unknown field", data: `{"key": "broken", "name": "Broken", "category": "MEMBERSHIP", "organisationId": 1, "colour": "red",
			"steps": [{"name": "a", "questionText": "A", "questionType": "TXT"}]}`},
		{name: "truncated JSON", data: `{"key": "broken", "steps": [`},
		{name: "YAML of the wrong shape", data: "key: [1, 2]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := definition.ParseDefinition([]byte(tc.data))
			if err == nil {
				t.Fatal("parsed, want an error")
			}
			enginetest.WantCode(t, err, engine.CodeInvalid)
		})
	}
}

// TestImportDefinitionVersions: importing the same content is a no-op, changed
// content is a new version.
func TestImportDefinitionVersions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		enginetest.Seeded(t, db) // the organisation
		parse := func(data string) *definition.Spec {
			t.Helper()
			spec, err := definition.ParseDefinition([]byte(data))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			return spec
		}
		v1 := validYAML
		v2 := strings.Replace(validYAML, "Hours per month", "Hours per week", 1)
		steps := []struct {
			name          string
			data          string
			wantVersion   int
			wantUnchanged bool
			wantSameAs    int // index of an earlier step whose definition id this one repeats, or -1
		}{
			{name: "first import", data: v1, wantVersion: 1, wantSameAs: -1},
			{name: "same content again", data: v1, wantVersion: 1, wantUnchanged: true, wantSameAs: 0},
			{name: "same content as JSON", data: validJSON, wantVersion: 1, wantUnchanged: true, wantSameAs: 0},
			{name: "changed content", data: v2, wantVersion: 2, wantSameAs: -1},
			{name: "changed content again", data: v2, wantVersion: 2, wantUnchanged: true, wantSameAs: 3},
			{name: "the first content once more is a new version", data: v1, wantVersion: 3, wantSameAs: -1},
		}
		ids := make([]int64, len(steps))
		for i, s := range steps {
			res, err := definition.ImportDefinition(ctx, db, parse(s.data))
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			ids[i] = res.DefinitionID
			if res.Version != s.wantVersion || res.Unchanged != s.wantUnchanged {
				t.Errorf("%s: version %d unchanged %v, want version %d unchanged %v", s.name, res.Version, res.Unchanged, s.wantVersion, s.wantUnchanged)
			}
			if s.wantSameAs >= 0 && ids[i] != ids[s.wantSameAs] {
				t.Errorf("%s: definition %d, want the existing %d", s.name, ids[i], ids[s.wantSameAs])
			}
			if s.wantSameAs < 0 && slices.Contains(ids[:i], ids[i]) {
				t.Errorf("%s: definition %d reused, want a new one", s.name, ids[i])
			}
		}
		var versions []engine.ProcessDefinition
		if err := db.NewSelect().Model(&versions).Relation("Steps").Where("key = ?", "volunteer").Order("version ASC").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(versions) != 3 {
			t.Fatalf("%d stored versions, want 3", len(versions))
		}
		for _, v := range versions {
			if len(v.Steps) != 4 || !v.Active {
				t.Errorf("version %d: %d steps, active %v, want 4 steps, active", v.Version, len(v.Steps), v.Active)
			}
		}

		before := len(versions)
		bad := parse(v1)
		bad.Steps[0].Type = "XYZ"
		_, err := definition.ImportDefinition(ctx, db, bad)
		enginetest.WantCode(t, err, engine.CodeInvalid)
		if n, _ := db.NewSelect().Model((*engine.ProcessDefinition)(nil)).Where("key = ?", "volunteer").Count(ctx); int(n) != before {
			t.Errorf("an invalid import stored a version: %d versions, want %d", n, before)
		}
	})
}

// TestInstanceKeepsItsDefinitionVersion: a registration started on version 1
// keeps version 1's steps after version 2 is imported; new registrations get version 2.
func TestInstanceKeepsItsDefinitionVersion(t *testing.T) {
	t.Parallel()
	const v2 = `
key: membership
name: Membership registration
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: nickname, questionText: "What should we call you?", questionType: TXT, required: true}
  - {name: terms, questionText: I accept the club rules, questionType: ITC, required: true}
`
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.AdvanceTo(2)

		spec, err := definition.ParseDefinition([]byte(v2))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		res, err := definition.ImportDefinition(f.Ctx, db, spec)
		if err != nil || res.Version != 2 {
			t.Fatalf("import = %+v, %v; want version 2", res, err)
		}

		// A fresh service has no cached definitions: what it shows comes from the database.
		f.Svc = engine.NewService(db, f.GW)
		form, created := f.Load(engine.DemoUserKey)
		if created || form.ProcessID != r.ID || form.TotalSteps != enginetest.DemoSteps || form.Step != 2 || form.Question.Name != "shirt_size" {
			t.Fatalf("old run = created %v process %d step %d of %d %q, want process %d at step 2 of %d shirt_size",
				created, form.ProcessID, form.Step, form.TotalSteps, form.Question.Name, r.ID, enginetest.DemoSteps)
		}
		r.Form = form
		if done := r.Commit(); done.TotalSteps != enginetest.DemoSteps {
			t.Errorf("old run committed with %d steps, want %d", done.TotalSteps, enginetest.DemoSteps)
		}
		if inst := f.Instance(r.ID); inst.DefinitionID == res.DefinitionID {
			t.Errorf("old run moved to definition %d (version 2)", inst.DefinitionID)
		}

		first, _ := f.Load("demo-1")
		fresh := f.Start("demo-1", enginetest.PersonIDs(first)...)
		if q := fresh.Form.Question; fresh.Form.TotalSteps != 2 || q == nil || q.Name != "nickname" {
			t.Errorf("new run = %d steps, question %+v, want version 2's 2 steps starting with nickname", fresh.Form.TotalSteps, q)
		}
		if inst := f.Instance(fresh.ID); inst.DefinitionID != res.DefinitionID {
			t.Errorf("new run on definition %d, want version 2's %d", inst.DefinitionID, res.DefinitionID)
		}
	})
}
