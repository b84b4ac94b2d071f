package views

import (
	"context"
	"strings"

	"portal/views/lang"
)

// The page texts live in the message files of views/lang (locales/en.json,
// de.json, fr.json), one key per text, named after the page that shows it:
// layout_*, overview_*, step_*, review_*, done_*, reset_*, payment_*,
// pay_by_transfer_*, bank_transfer_*. Dynamic texts (names, amounts) come
// from the view models.

// tr is a page text in the request's language.
func tr(ctx context.Context, id string, data ...map[string]any) string {
	return lang.T(ctx, id, data...)
}

// LanguageLink is one entry of the language switcher.
type LanguageLink struct {
	Code    string // en, de, fr: the link's hreflang and lang
	Name    string // the language's own name
	Href    string // the current page, in that language
	Current bool
}

type switcherKey struct{}

// WithLanguageLinks returns ctx carrying the language switcher of the page:
// the organisation's languages, each linking to the current page.
func WithLanguageLinks(ctx context.Context, links []LanguageLink) context.Context {
	return context.WithValue(ctx, switcherKey{}, links)
}

// languageLinks is the switcher of ctx; none with fewer than two languages.
func languageLinks(ctx context.Context) []LanguageLink {
	links, _ := ctx.Value(switcherKey{}).([]LanguageLink)
	if len(links) < 2 {
		return nil
	}
	return links
}

// JoinNames lists names for a sentence in l: "A", "A and B", "A, B and C"
// ("A, B und C", "A, B et C").
func JoinNames(l lang.Language, names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + l.T("mail_and") + " " + names[len(names)-1]
}
