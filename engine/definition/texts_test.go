package definition_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"gopkg.in/yaml.v3"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// translatedYAML carries its texts in English and German only.
const translatedYAML = `
key: translated
name: Translated
category: MEMBERSHIP
organisationId: 1
steps:
  - name: size
    questionText: {en: Shirt size, de: Shirtgrösse}
    questionType: DRP
    required: true
    options:
      - {value: S, label: {en: Small, de: Klein}}
      - {value: M, label: Medium}
  - name: phone
    questionText: Phone
    questionType: TXT
    format: {pattern: "^[0-9]+$", message: {en: Digits only, de: Nur Ziffern}}
    price: {code: p, label: {en: Phone fee, de: Telefongebühr}, answer: "1", amountMinor: 100}
`

// TestDefinitionTextsPerLanguage: texts per language import when every
// language the organisation offers is there, are refused with the
// missing ones named otherwise, and export as they were given.
func TestDefinitionTextsPerLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		enginetest.Seeded(t, db)
		spec, err := definition.ParseDefinition([]byte(translatedYAML))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		// The demo club offers en, de and fr: French is missing.
		_, err = definition.ImportDefinition(ctx, db, spec)
		e, ok := engine.AsError(err)
		if !ok || e.Code != engine.CodeInvalid {
			t.Fatalf("import with fr missing = %v, want invalid", err)
		}
		for _, want := range []string{"steps[0] (size).questionText has no text in fr", "steps[0] (size).options[0].label has no text in fr",
			"steps[1] (phone).format.message has no text in fr", "steps[1] (phone).price.label has no text in fr"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("message %q lacks %q", e.Message, want)
			}
		}
		if strings.Contains(e.Message, "options[1]") || strings.Contains(e.Message, "(phone).questionText") {
			t.Errorf("a plain text counts as every language's: %q", e.Message)
		}
		if n, _ := db.NewSelect().Model((*engine.ProcessDefinition)(nil)).Where("key = 'translated'").Count(ctx); n != 0 {
			t.Fatalf("a refused import stored %d definitions", n)
		}

		// Offering English and German only, the same definition imports.
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("enabled_languages = 'en,de'").Where("id = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := definition.ImportDefinition(ctx, db, spec); err != nil {
			t.Fatalf("import: %v", err)
		}
		out, err := definition.ExportDefinition(ctx, db, 1, "translated", 0)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := yaml.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"de: Shirtgrösse", "de: Klein", "label: Medium", "de: Nur Ziffern", "de: Telefongebühr", "questionText: Phone\n"} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("export lacks %q:\n%s", want, raw)
			}
		}
		again, err := definition.ParseDefinition(raw)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := definition.ImportDefinition(ctx, db, again); err != nil || !res.Unchanged {
			t.Fatalf("re-import of the export = %+v, %v; want unchanged", res, err)
		}
	})
}

// TestDemoFormInGerman: the member's language (engine.WithLanguage) picks
// the definition's texts; validation uses the definition's format message
// in that language.
func TestDemoFormInGerman(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		f.Ctx = engine.WithLanguage(f.Ctx, "de")
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		if q := r.Form.Question; q == nil || q.Text != "Telefonnummer für Notfälle" {
			t.Fatalf("question 1 in German = %+v", q)
		}
		_, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 1,
			People: []registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.PtrTo("12")}, {ID: enginetest.Robin, Answer: enginetest.PtrTo("0612345678")}}})
		e := enginetest.WantCode(t, err, engine.CodeValidation)
		if len(e.People) != 1 || e.People[0].Message != "Die Telefonnummer muss aus 10 Ziffern bestehen" {
			t.Fatalf("format message = %+v", e.People)
		}
		r.AdvanceTo(2)
		if q := r.Form.Question; q.Text != "Grösse des Vereinsshirts" || q.Options[2].Label != "Mittel" {
			t.Fatalf("question 2 in German = %q, %+v", q.Text, q.Options)
		}
		if inst := f.Instance(r.ID); inst.Language != "de" {
			t.Fatalf("the registration's language = %q, want de", inst.Language)
		}
		// English is the definition as stored.
		en := engine.WithLanguage(f.Ctx, "en")
		form, _, err := registration.Of(f.Svc).LoadMembershipForm(en, engine.DemoUserKey, 1, nil)
		if err != nil || form.Question.Text != "Club shirt size" {
			t.Fatalf("English = %+v, %v", form.Question, err)
		}
	})
}
