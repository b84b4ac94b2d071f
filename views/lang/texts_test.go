package lang

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/text/language"
)

type pageTexts struct {
	Title, Save string
	Reasons     map[string]string
}

// TestTextsFallBackToEnglish: a text a language lacks shows in English,
// a map of texts merges key by key, and English itself is not changed by
// filling a translation in.
func TestTextsFallBackToEnglish(t *testing.T) {
	fsys := fstest.MapFS{
		"locales/page.en.json": {Data: []byte(`{"page": {"Title": "Members", "Save": "Save", "Reasons": {"a": "one", "b": "two"}}}`)},
		"locales/page.de.json": {Data: []byte(`{"page": {"Title": "Mitglieder", "Reasons": {"a": "eins"}}}`)},
	}
	groups, err := readGroups(fsys)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := loadTexts[pageTexts](groups, "page")
	if err != nil {
		t.Fatal(err)
	}
	de := texts.For("de")
	if de.Title != "Mitglieder" || de.Save != "Save" || de.Reasons["a"] != "eins" || de.Reasons["b"] != "two" {
		t.Fatalf("German: %+v", de)
	}
	en := texts.In(context.Background())
	if en.Title != "Members" || en.Reasons["a"] != "one" {
		t.Fatalf("English changed by the German: %+v", en)
	}
	if fr := texts.In(With(context.Background(), New("fr", language.Und))); fr.Title != "Members" {
		t.Fatalf("a language without the group is not English: %+v", fr)
	}
	if texts.For("xx") != en {
		t.Fatal("an unknown language is not English")
	}
}

// TestTextsRefuseWhatDoesNotFit: a key with no field (a renamed field, a
// typo), an empty text and a group twice are refused, naming the group.
func TestTextsRefuseWhatDoesNotFit(t *testing.T) {
	for name, tc := range map[string]struct{ en, de, want string }{
		"unknown key": {`{"page": {"Title": "T", "Save": "S", "Sav": "x"}}`, `{}`, `unknown field "Sav"`},
		"empty text":  {`{"page": {"Title": "T", "Save": "S"}}`, `{"page": {"Title": ""}}`, `in de has no text for Title`},
		"no english":  {`{"other": {}}`, `{}`, `no text group "page"`},
		"map empty":   {`{"page": {"Title": "T", "Save": "S", "Reasons": {"a": ""}}}`, `{}`, `in en has no text for Reasons.a`},
	} {
		groups, err := readGroups(fstest.MapFS{
			"locales/page.en.json": {Data: []byte(tc.en)},
			"locales/page.de.json": {Data: []byte(tc.de)},
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = loadTexts[pageTexts](groups, "page")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	_, err := readGroups(fstest.MapFS{
		"locales/a.en.json": {Data: []byte(`{"page": {}}`)},
		"locales/b.en.json": {Data: []byte(`{"page": {}}`)},
	})
	if err == nil || !strings.Contains(err.Error(), `"page" twice`) {
		t.Errorf("a group twice: %v", err)
	}
}
