package organisation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/registration"
)

// TestClubTextsInMemberLanguage: the price rules' labels, the types' and
// the period's names are the member's language on the review (Quote,
// Review) and in the order lines the commit writes; the stored default
// stays English.
func TestClubTextsInMemberLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		f.Ctx = engine.WithLanguage(f.Ctx, "de")
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.AdvanceTo(4)
		q, err := registration.Of(f.Svc).Quote(f.Ctx, engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		descs := lineDescriptions(q.Lines)
		for _, want := range []string{"Mitgliedschaft Erwachsene – Alex Morgan", "Mitgliedschaft Jugend – Robin Morgan", "Bearbeitungsgebühr"} {
			if !strings.Contains(descs, want) {
				t.Errorf("German quote lacks %q:\n%s", want, descs)
			}
		}
		if strings.Contains(descs, "Adult membership") || strings.Contains(descs, "Administration fee") {
			t.Errorf("German quote has English labels:\n%s", descs)
		}
		rev, err := registration.Of(f.Svc).Review(f.Ctx, engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(rev.Period, "Saison ") {
			t.Errorf("German review's period = %q", rev.Period)
		}

		// The member goes on in French: the commit writes French lines.
		f.Ctx = engine.WithLanguage(context.Background(), "fr")
		r.Commit()
		orders := f.Orders(r.ID)
		if len(orders) != 1 {
			t.Fatalf("orders = %d", len(orders))
		}
		var lines []registration.QuoteLine
		for _, l := range orders[0].Lines {
			lines = append(lines, registration.QuoteLine{Description: l.Description})
		}
		descs = lineDescriptions(lines)
		for _, want := range []string{"Cotisation adulte – Alex Morgan", "Cotisation junior – Robin Morgan", "Droit d'entrée (nouveau membre) – Robin Morgan", "Frais administratifs"} {
			if !strings.Contains(descs, want) {
				t.Errorf("French order lines lack %q:\n%s", want, descs)
			}
		}
		// Done: the frozen lines, whatever language asks.
		q, err = registration.Of(f.Svc).Quote(engine.WithLanguage(context.Background(), "de"), engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		if got := lineDescriptions(q.Lines); got != descs {
			t.Errorf("the committed lines changed with the language:\n%s\nwant\n%s", got, descs)
		}
		// English (the default) is what the rows hold.
		rules, err := organisation.Of(f.Svc).PriceRules(context.Background(), 1, engine.DemoPeriodID)
		if err != nil || rules[0].Label != "Adult membership" {
			t.Fatalf("stored label = %q, %v", rules[0].Label, err)
		}
	})
}

func lineDescriptions(lines []registration.QuoteLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Description + "\n")
	}
	return b.String()
}

// TestClubTextsCompleteness: a text given per language must be given in
// every language the organisation offers; the refusal names the field
// and the language, and changes nothing. A single text stays valid (one
// for every language), as before texts per language.
func TestClubTextsCompleteness(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		svc := enginetest.Seeded(t, db)
		before, err := organisation.Of(svc).PriceRules(ctx, 1, engine.DemoPeriodID)
		if err != nil {
			t.Fatal(err)
		}
		rules := append([]engine.PriceRule(nil), before...)
		rules[0].LabelTexts = engine.Texts{"en": "Adult membership", "de": "Mitgliedschaft Erwachsene"}
		_, err = organisation.Of(svc).ReplacePriceRules(ctx, 1, engine.DemoPeriodID, rules)
		wantField(t, err, "[0].labelTexts.fr", "has no text in fr")
		after, _ := organisation.Of(svc).PriceRules(ctx, 1, engine.DemoPeriodID)
		if after[0].LabelTexts["de"] != "Mitgliedschaft Erwachsene" || after[0].LabelTexts["fr"] != "Cotisation adulte" {
			t.Fatalf("a refused change changed the rules: %+v", after[0])
		}
		rules[0].LabelTexts["fr"] = "Cotisation adulte (tarif plein)"
		rules[1].LabelTexts = nil // one label for every language
		out, err := organisation.Of(svc).ReplacePriceRules(ctx, 1, engine.DemoPeriodID, rules)
		if err != nil {
			t.Fatalf("complete texts: %v", err)
		}
		if out[0].LabelTexts["fr"] != "Cotisation adulte (tarif plein)" || len(out[1].LabelTexts) != 0 {
			t.Fatalf("stored = %+v / %+v", out[0].LabelTexts, out[1].LabelTexts)
		}
		rules[2].LabelTexts = engine.Texts{"en": "Joining fee", "de": "Eintritt", "fr": "Entrée", "it": "Iscrizione"}
		_, err = organisation.Of(svc).ReplacePriceRules(ctx, 1, engine.DemoPeriodID, rules)
		wantField(t, err, "[2].labelTexts.it", "is not a language")

		_, err = organisation.Of(svc).CreateMembershipType(ctx, engine.MembershipType{OrganisationID: 1, Code: "SENIOR", Name: "Senior",
			NameTexts: engine.Texts{"fr": "Senior"}, MinAge: enginetest.PtrTo(65)})
		wantField(t, err, "nameTexts.de", "has no text in de")
		typ, err := organisation.Of(svc).CreateMembershipType(ctx, engine.MembershipType{OrganisationID: 1, Code: "SENIOR",
			NameTexts: engine.Texts{"en": "Senior", "de": "Senioren", "fr": "Seniors"}, MinAge: enginetest.PtrTo(65)})
		if err != nil || typ.Name != "Senior" {
			t.Fatalf("type from its texts = %+v, %v", typ, err)
		}
		_, err = organisation.Of(svc).UpdateMembershipType(ctx, 1, typ.ID, organisation.MembershipTypeChange{NameTexts: &engine.Texts{"en": "Senior", "de": "Senioren"}})
		wantField(t, err, "nameTexts.fr", "has no text in fr")

		_, err = organisation.Of(svc).UpdatePeriod(ctx, 1, engine.DemoPeriodID, organisation.PeriodInput{NameTexts: &engine.Texts{"de": "Saison"}})
		wantField(t, err, "nameTexts.fr", "has no text in fr")
		p, err := organisation.Of(svc).UpdatePeriod(ctx, 1, engine.DemoPeriodID, organisation.PeriodInput{Name: enginetest.PtrTo("Season 1"),
			NameTexts: &engine.Texts{"de": "Saison 1", "fr": "Saison un"}})
		if err != nil || p.Name != "Season 1" || p.NameTexts["fr"] != "Saison un" {
			t.Fatalf("period = %+v, %v", p, err)
		}

		// Offering English and German only, French is not needed.
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("enabled_languages = 'en,de'").Where("id = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := organisation.Of(svc).UpdateMembershipType(ctx, 1, typ.ID, organisation.MembershipTypeChange{NameTexts: &engine.Texts{"en": "Senior", "de": "Senioren"}}); err != nil {
			t.Fatalf("en and de offered: %v", err)
		}
	})
}

func wantField(t *testing.T, err error, field, msg string) {
	t.Helper()
	e, ok := engine.AsError(err)
	if !ok || e.Code != engine.CodeValidation {
		t.Fatalf("err = %v, want a validation error", err)
	}
	for _, f := range e.Fields {
		if f.Field == field && strings.Contains(f.Message, msg) {
			return
		}
	}
	t.Fatalf("fields %+v lack %s: %q", e.Fields, field, msg)
}
