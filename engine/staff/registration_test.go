package staff_test

import (
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
	"portal/engine/registration"
	"portal/engine/staff"
)

// TestRegistrationDetailAnswersAsShown: a registration's steps come with
// their choices, so that staff see an answer as the member saw it, in
// the page's language (a choice by its label, a yes/no question as Yes or
// No); the archive says how many answers of how many persons it took.
func TestRegistrationDetailAnswersAsShown(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start("demo", 1)
		paymentURL := r.Commit().PaymentURL
		d, err := staff.Of(f.Svc).RegistrationDetail(f.Ctx, 1, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		shown := map[string]string{}
		for _, as := range d.Steps {
			for _, lang := range []string{"en", "de", "fr"} {
				step, err := definition.StepInLanguage(as.Step, lang)
				if err != nil {
					t.Fatalf("%s in %s: %v", as.Step.Name, lang, err)
				}
				for _, a := range as.Answers {
					shown[as.Step.Name+"/"+lang] = step.QuestionText + ": " + registration.DisplayAnswer(&step, a.Value)
				}
			}
		}
		for key, want := range map[string]string{
			"shirt_size/en": "Club shirt size: Medium",
			"shirt_size/de": "Grösse des Vereinsshirts: Mittel",
			"shirt_size/fr": "Taille du maillot du club: Moyenne",
			"insurance/en":  "Add accident insurance (EUR 15.00 per person)?: Yes",
			"insurance/de":  "Unfallversicherung hinzufügen (EUR 15.00 pro Person)?: Yes",
		} {
			if shown[key] != want {
				t.Errorf("%s: %q, want %q", key, shown[key], want)
			}
		}

		// Archived: the answers leave, the archive counts them.
		f.Pay(f.AttemptOf(paymentURL), engine.OutcomeSuccess)
		if _, err := registration.ArchiveFinished(f.Ctx, db, clock.Now().Add(registration.ArchiveAfter+48*time.Hour), registration.ArchiveRemove); err != nil {
			t.Fatal(err)
		}
		d, err = staff.Of(f.Svc).RegistrationDetail(f.Ctx, 1, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Archive == nil || d.Archive.Kept() || d.Archive.Persons() != 1 || d.Archive.Answers == 0 {
			t.Fatalf("archive %+v: persons %d", d.Archive, d.Archive.Persons())
		}
	})
}
