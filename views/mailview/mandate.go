package mailview

import (
	"context"
	"text/template"

	"portal/views"
	"portal/views/lang"
)

// MandateModel is the mandate e-mail (issue 29): the mandate given,
// kept for a registration or its account changed, and the debit's
// pre-notification: amount, due date, mandate reference, creditor and
// its identifier, the account (masked).
type MandateModel struct {
	Club, Subject string
	// Event is what the member did: "given", "kept" or "amended".
	Event   string
	Persons []string
	Period  string
	Total   string // the amount collected, as members read money
	Due     string // the collection date, as members read dates
	// Creditor and CreditorID are the club as creditor.
	Creditor, CreditorID string
	Reference            string // the mandate reference
	Account              string // the masked IBAN
	Link                 string // the registration's pay link
}

func (m MandateModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Persons": views.JoinNames(l, m.Persons), "Period": m.Period, "Total": m.Total, "Due": m.Due,
		"Creditor": m.Creditor, "Account": m.Account}
}

// IntroKey is the opening sentence's message for what the member did.
func (m MandateModel) IntroKey() string {
	switch m.Event {
	case "kept":
		return "mail_mandate_kept"
	case "amended":
		return "mail_mandate_amended"
	}
	return "mail_mandate_given"
}

// MandateFields are the pre-notification's data, label and value, as
// both parts print them.
func (m MandateModel) MandateFields(ctx context.Context) [][2]string {
	return [][2]string{{tr(ctx, "mail_mandate_amount"), m.Total}, {tr(ctx, "mail_mandate_due"), m.Due},
		{tr(ctx, "mail_mandate_creditor"), m.Creditor}, {tr(ctx, "mail_mandate_creditor_id"), m.CreditorID},
		{tr(ctx, "mail_mandate_reference"), m.Reference}, {tr(ctx, "mail_mandate_account"), m.Account}}
}

// mandateText's fields are MandateFields in the message's language,
// bound by MandateText.
var mandateText = template.Must(template.New("mandate").Funcs(textFuncs).
	Funcs(template.FuncMap{"fields": func(MandateModel) [][2]string { return nil }}).Parse(`{{t "mail_hello" .}}

{{t .IntroKey .}}
{{t "mail_mandate_prenotice" .}}

{{range fields .}}  {{index . 0}}: {{index . 1}}
{{end}}
{{t "mail_mandate_attached" .}}
{{t "mail_mandate_refund" .}}

{{t "mail_mandate_manage" .}}
{{.Link}}

{{.Club}}
`))

// MandateText is the text/plain part of the mandate e-mail, in the
// language of ctx.
func MandateText(ctx context.Context, m MandateModel) (string, error) {
	t, err := mandateText.Clone()
	if err != nil {
		return "", err
	}
	t.Funcs(template.FuncMap{"fields": func(m MandateModel) [][2]string { return m.MandateFields(ctx) }})
	return execTextIn(ctx, t, m)
}
