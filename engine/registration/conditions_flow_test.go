package registration_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/uptrace/bun"
	"gopkg.in/yaml.v3"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// The demo's branch step.
const (
	transferStep     = 4
	transferClubStep = 5
	consentStep      = 6
)

// TestTransferBranch walks the demo's branch through the service: a yes to
// transfer asks "Which club?" of that person only; Back follows the path;
// a changed answer takes the step off the path again, keeping its answer
// until the commit, which leaves only the answers on the path.
func TestTransferBranch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.AdvanceTo(transferStep)
		form := r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("1")}, {ID: enginetest.Robin}})
		if form.Step != transferClubStep || form.Question.Name != "transfer_club" || form.Position != 5 || form.PathLength != 8 {
			t.Fatalf("after a yes: step %d %v, question %d of %d; want transfer_club, 5 of 8", form.Step, form.Question, form.Position, form.PathLength)
		}
		if hide := hiddenPersons(form); !slices.Equal(hide, []int64{enginetest.Robin}) {
			t.Fatalf("Which club? hides %v, want Robin only", hide)
		}
		// Robin's answer is ignored (hidden); Alex's is required.
		_, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: transferClubStep,
			People: []registration.PersonInput{{ID: enginetest.Robin, Answer: enginetest.Str("Some Club")}}})
		if e := enginetest.WantCode(t, err, engine.CodeValidation); len(e.People) != 1 || e.People[0].PersonID != enginetest.Alex {
			t.Fatalf("errors %+v, want Alex's missing answer only", e.People)
		}
		form = r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("Old Club")}, {ID: enginetest.Robin, Answer: enginetest.Str("Some Club")}})
		if form.Step != consentStep {
			t.Fatalf("after Which club?: step %d, want %d", form.Step, consentStep)
		}
		// Back follows the path: to Which club?, with Alex's answer.
		form, err = registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, nil)
		if err != nil || form.Step != transferClubStep || enginetest.FormAnswers(form)[enginetest.Alex] != "Old Club" {
			t.Fatalf("back: %v step %d answers %v", err, form.Step, enginetest.FormAnswers(form))
		}
		if a := enginetest.FormAnswers(form)[enginetest.Robin]; a != "<nil>" {
			t.Fatalf("Robin's ignored answer was stored: %q", a)
		}
		r.Form = form
		r.Form, err = registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, nil)
		if err != nil || r.Form.Step != transferStep {
			t.Fatalf("back again: %v step %d", err, r.Form.Step)
		}
		// No after all: Which club? leaves the path, its answer stays stored.
		form = r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("0")}, {ID: enginetest.Robin}})
		if form.Step != consentStep || form.Position != 5 || form.PathLength != 7 {
			t.Fatalf("after a no: step %d question %d of %d, want %d, 5 of 7", form.Step, form.Position, form.PathLength, consentStep)
		}
		clubID := stepID(t, f, "transfer_club")
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND step_id = ?", r.ID, clubID); n != 1 {
			t.Fatalf("%d stored answers of Which club?, want Alex's kept", n)
		}
		back, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, nil)
		if err != nil || back.Step != transferStep {
			t.Fatalf("back from %d: %v step %d, want %d (Which club? is off the path)", consentStep, err, back.Step, transferStep)
		}
		r.Form = back
		r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("0")}, {ID: enginetest.Robin}})
		// Change cannot open a step off the path.
		if _, err := registration.Of(f.Svc).ReturnTo(f.Ctx, r.UserKey, r.PID, transferClubStep); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("ReturnTo an off-path step: %v, want a conflict", err)
		}
		r.AdvanceTo(enginetest.DemoSteps)
		review, err := registration.Of(f.Svc).Review(f.Ctx, r.UserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range review.Persons {
			for _, a := range p.Answers {
				if a.Step == transferClubStep {
					t.Fatalf("the review shows the off-path answer %+v", a)
				}
			}
		}
		r.Commit()
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND step_id = ?", r.ID, clubID); n != 0 {
			t.Fatalf("after the commit %d answers of the off-path Which club? remain", n)
		}
		for _, m := range f.Memberships(r.ID) {
			if m.MemberType == engine.MemberTransfer {
				t.Fatalf("membership %+v is a transfer, but the final answer was no", m)
			}
		}
	})
}

// pricedBranch has a priced step that only persons wanting extras see.
const pricedBranch = `
key: membership
name: Membership with extras
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: extras, questionText: Extras, questionType: BCB}
  - name: insurance
    questionText: Insurance
    questionType: BCB
    price: {code: insurance, label: Insurance, answer: "1", amountMinor: 1500}
    conditions: [{action: skip, step: extras, equals: "0"}]
  - {name: terms, questionText: Terms, questionType: ITC, required: true}
`

// TestSkippedPricedStepAddsNothing: an answer that would cost money adds
// nothing once its step is off the path, in the quote and the order.
func TestSkippedPricedStepAddsNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		importDefinition(t, f, pricedBranch)
		r := f.Start(engine.DemoUserKey, enginetest.Alex)
		r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("1")}})
		r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("1")}})
		if !slices.ContainsFunc(f.Quote(r).Lines, isInsurance) {
			t.Fatalf("the insurance chosen on the path is not priced")
		}
		form, err := registration.Of(f.Svc).ReturnTo(f.Ctx, r.UserKey, r.PID, 1)
		if err != nil {
			t.Fatal(err)
		}
		r.Form = form
		if next := r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("0")}}); next.Step != 3 {
			t.Fatalf("without extras: step %d, want 3", next.Step)
		}
		if slices.ContainsFunc(f.Quote(r).Lines, isInsurance) {
			t.Fatalf("the off-path insurance answer is priced")
		}
		r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("1")}})
		orders := f.Orders(r.ID)
		if len(orders) != 1 || slices.ContainsFunc(orders[0].Lines, func(l engine.OrderLine) bool { return l.Code == "insurance" }) {
			t.Fatalf("order %+v: want one order without insurance", orders)
		}
	})
}

func isInsurance(l registration.QuoteLine) bool { return l.Code == "insurance" }

// TestDefinitionExportRoundTrip: the exported demo (conditions included)
// imports again unchanged, as YAML and as JSON; a changed import adds a
// version and leaves the one in use as it was.
func TestDefinitionExportRoundTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		spec, err := definition.ExportDefinition(f.Ctx, db, 1, "membership", 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(spec.Steps, func(s definition.StepSpec) bool { return s.Name == "transfer_club" })
		if i < 0 || len(spec.Steps[i].Conditions) != 1 || spec.Steps[i].Conditions[0].Step != "transfer" ||
			spec.Steps[i].Conditions[0].Action != "skip" || enginetest.Deref(spec.Steps[i].Conditions[0].Equals) != "0" {
			t.Fatalf("exported transfer_club: %+v", spec.Steps)
		}
		asYAML, err := yaml.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		asJSON, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"yaml": asYAML, "json": asJSON} {
			again, err := definition.ParseDefinition(data)
			if err != nil {
				t.Fatalf("%s: the export does not parse: %v\n%s", name, err, data)
			}
			res, err := definition.ImportDefinition(f.Ctx, db, again)
			if err != nil || !res.Unchanged || res.Version != 1 {
				t.Fatalf("%s: import of the export = %+v, %v; want version 1 unchanged", name, res, err)
			}
		}
		r := f.Start(engine.DemoUserKey, enginetest.Alex)
		options := f.Count((*engine.ProcessStepOption)(nil), "step_id IN (?)",
			db.NewSelect().Model((*engine.ProcessStep)(nil)).Column("id").Where("definition_id = ?", definitionOf(t, f, r)))
		importDefinition(t, f, pricedBranch)
		after := f.Count((*engine.ProcessStepOption)(nil), "step_id IN (?)",
			db.NewSelect().Model((*engine.ProcessStep)(nil)).Column("id").Where("definition_id = ?", definitionOf(t, f, r)))
		if options == 0 || after != options {
			t.Fatalf("the version in use had %d option rows, %d after another import", options, after)
		}
		if r.AdvanceTo(2).Question.Name != "shirt_size" {
			t.Fatalf("the running registration left its version")
		}
	})
}

func definitionOf(t *testing.T, f *enginetest.Fixture, r *enginetest.Run) int64 {
	t.Helper()
	return f.Instance(r.ID).DefinitionID
}

func importDefinition(t *testing.T, f *enginetest.Fixture, text string) {
	t.Helper()
	spec, err := definition.ParseDefinition([]byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if _, err := definition.ImportDefinition(f.Ctx, f.DB, spec); err != nil {
		t.Fatalf("import: %v", err)
	}
}

func hiddenPersons(form *registration.Form) []int64 {
	var out []int64
	for _, p := range form.People {
		if p.Hide {
			out = append(out, p.ID)
		}
	}
	return out
}

// stepID finds a step of the demo definition's first version by name.
func stepID(t *testing.T, f *enginetest.Fixture, name string) int64 {
	t.Helper()
	var id int64
	err := f.DB.NewSelect().Model((*engine.ProcessStep)(nil)).Column("id").
		Where("name = ? AND definition_id = (SELECT min(id) FROM process_definitions)", name).Scan(f.Ctx, &id)
	if err != nil {
		t.Fatalf("step %s: %v", name, err)
	}
	return id
}
