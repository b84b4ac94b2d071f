package views

import (
	"context"
	"reflect"

	"portal/views/lang"
)

// The staff pages' texts per language: StaffText and StaffOpsText are the
// English ones, the *_de.go and *_fr.go files their translations. A text
// a translation leaves empty (a field added in English only) shows in
// English rather than as nothing.
var (
	staffTexts = map[string]*StaffTexts{"en": &StaffText,
		"de": withEnglish(staffTextDE, StaffText), "fr": withEnglish(staffTextFR, StaffText)}
	staffOpsTexts = map[string]*StaffOpsTexts{"en": &StaffOpsText,
		"de": withEnglish(staffOpsTextDE, StaffOpsText), "fr": withEnglish(staffOpsTextFR, StaffOpsText)}
)

// StaffTextIn is the staff pages' texts in the language of ctx.
func StaffTextIn(ctx context.Context) *StaffTexts {
	if t, ok := staffTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffText
}

// StaffOpsTextIn is the operations pages' texts in the language of ctx.
func StaffOpsTextIn(ctx context.Context) *StaffOpsTexts {
	if t, ok := staffOpsTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffOpsText
}

// withEnglish is a translation of a struct of texts with each empty text
// filled in from english.
func withEnglish[T any](translated, english T) *T {
	out := translated
	v, en := reflect.ValueOf(&out).Elem(), reflect.ValueOf(english)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String && f.String() == "" {
			f.SetString(en.Field(i).String())
		}
	}
	return &out
}
