package engine

import (
	"context"
	"slices"
	"strings"
)

// Languages are the languages the portal ships texts in (views/lang has
// the same list: a test keeps them equal). An organisation enables some
// of them; its process definitions must carry their texts in each.
var Languages = []string{"en", "de", "fr"}

// EnabledLanguageList is the organisation's languages, in the order stored.
func (o *Organisation) EnabledLanguageList() []string {
	return splitLanguages(o.EnabledLanguages)
}

func splitLanguages(s string) []string {
	var out []string
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return slices.Clone(Languages)
	}
	return out
}

// CheckLanguages validates an organisation's enabled languages: one or
// more of Languages, each once. It returns the problem, "" when valid.
func CheckLanguages(codes []string) string {
	if len(codes) == 0 {
		return "must name at least one language"
	}
	for i, c := range codes {
		if !slices.Contains(Languages, c) {
			return "must be languages out of " + strings.Join(Languages, ", ")
		}
		if slices.Contains(codes[:i], c) {
			return "names " + c + " twice"
		}
	}
	return ""
}

type languageKey struct{}

// WithLanguage returns ctx carrying the language the member uses (en, de,
// fr): a registration started or moved on with it remembers it, and the
// member's e-mails and cards are written in it.
func WithLanguage(ctx context.Context, code string) context.Context {
	return context.WithValue(ctx, languageKey{}, code)
}

// LanguageOf is the member's language in ctx, "" when none was set.
func LanguageOf(ctx context.Context) string {
	l, _ := ctx.Value(languageKey{}).(string)
	return l
}
