package views

import (
	"context"

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

// SelectPersonsHeading is the heading and title of the person-selection
// page, which the handler puts into the StepModel like a question's text.
func SelectPersonsHeading(ctx context.Context) string { return tr(ctx, "step_select_heading") }

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
