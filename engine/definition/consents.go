package definition

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Consent questions at the commit: the steps of a definition that ask for a
// consent, on the path the member took, are recorded in the language the
// member registered in (consents.go keeps the records).

// RecordConsents records, in the commit's transaction, every consent
// given on the registration's path: per consent step and person answered
// "1", the step's text in the registration's language, at the time the
// answer was saved.
func RecordConsents(ctx context.Context, tx bun.IDB, inst *engine.ProcessInstance, def *Definition, selected []engine.Person, answers map[int64]map[int64]string, now time.Time) error {
	var steps []*engine.ProcessStep
	for i := range def.Steps {
		if _, ok := engine.ConsentKindOf(&def.Steps[i]); ok {
			steps = append(steps, &def.Steps[i])
		}
	}
	if len(steps) == 0 {
		return nil
	}
	lang, err := registrationLanguage(ctx, tx, inst)
	if err != nil {
		return err
	}
	onPath := def.RouteFor(selected, inst.Period.StartDate, answers).Answered(def, answers)
	ids := make([]int64, len(steps))
	for i, s := range steps {
		ids[i] = s.ID
	}
	var saved []engine.ProcessData
	if err := tx.NewSelect().Model(&saved).Column("step_id", "person_id", "created_at").
		Where("instance_id = ? AND data_key = ? AND step_id IN (?)", inst.ID, engine.DataAnswer, bun.List(ids)).Scan(ctx); err != nil {
		return fmt.Errorf("load consent answers: %w", err)
	}
	answeredAt := map[[2]int64]time.Time{}
	for _, d := range saved {
		if d.StepID != nil && d.PersonID != nil {
			answeredAt[[2]int64{*d.StepID, *d.PersonID}] = d.CreatedAt
		}
	}
	for _, s := range steps {
		kind, _ := engine.ConsentKindOf(s)
		text, err := stepQuestionIn(s, lang)
		if err != nil {
			return err
		}
		for _, p := range selected {
			if onPath[s.ID][p.ID] != "1" {
				continue
			}
			at, ok := answeredAt[[2]int64{s.ID, p.ID}]
			if !ok {
				at = now
			}
			if err := engine.RecordConsent(ctx, tx, engine.ConsentGiven{OrganisationID: inst.OrganisationID, PersonID: p.ID, InstanceID: &inst.ID,
				StepID: &s.ID, Source: def.Key + "/" + s.Name, Kind: kind, Language: lang, Text: text, GivenAt: at}); err != nil {
				return err
			}
		}
	}
	return nil
}

// registrationLanguage is the language a registration's member sees: the
// request's, else the registration's, else its organisation's default.
func registrationLanguage(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance) (string, error) {
	for _, l := range []string{engine.LanguageOf(ctx), inst.Language} {
		if l != "" {
			return l, nil
		}
	}
	org, err := engine.LoadOrganisation(ctx, db, inst.OrganisationID)
	if err != nil {
		return "", err
	}
	l, _, _ := strings.Cut(org.DefaultLanguage, "-")
	return l, nil
}

// stepQuestionIn is a step's question in lang as the member saw it: its
// text in that language, else the step's own (the default language's,
// or a plain text).
func stepQuestionIn(s *engine.ProcessStep, lang string) (string, error) {
	t, err := ParseTexts(s.Texts)
	if err != nil {
		return "", fmt.Errorf("step %s: stored texts do not parse: %w", s.Name, err)
	}
	if q := t.Question[lang]; q != "" {
		return q, nil
	}
	return s.QuestionText, nil
}
