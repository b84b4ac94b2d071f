package views

import (
	"context"
	"strings"
	"text/template"

	"portal/views/lang"
)

// E-mail view models. The HTML part of a message is a templ component
// (mail_*.templ) with inlined styles, since mail clients drop style sheets;
// the text part is a text/template below, since templ escapes HTML.

// MailMemberModel is one member in a message.
type MailMemberModel struct {
	Name string
	Type string // membership type name
}

// ConfirmationMailModel is the confirmation after payment.
type ConfirmationMailModel struct {
	Club      string
	Subject   string
	Reference string
	Order     string // the order number
	Period    string // name and dates
	Members   []MailMemberModel
	Lines     []OrderLineModel
	Total     string
	// CardsAttached says a membership card per member is attached.
	CardsAttached bool
	PortalURL     string
}

// The confirmation's texts are the mail_* messages of views/lang, in the
// member's language (t, bound per message by execTextIn).
var confirmationText = template.Must(template.New("confirmation").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{t "mail_confirmation_intro" .}}

{{t "mail_reference" .}}: {{.Reference}}
{{t "mail_order" .}}: {{.Order}}
{{t "mail_period" .}}: {{.Period}}

{{t "mail_members" .}}
{{range .Members}}  - {{.Name}}: {{.Type}}
{{end}}
{{t "mail_order" .}}
{{range .Lines}}  {{.Description}}: {{.Amount}}
{{end}}  {{t "mail_total_paid" .}}: {{.Total}}

{{t "mail_next" .}}
{{if .CardsAttached}}  - {{t "mail_cards_attached" .}}
{{end}}  - {{t "mail_nothing_else" .}} {{.PortalURL}}

{{.Club}}
`))

// ConfirmationText is the text/plain part of the confirmation, in the
// language of ctx.
func ConfirmationText(ctx context.Context, m ConfirmationMailModel) (string, error) {
	return execTextIn(ctx, confirmationText, m)
}

// ResumeMailModel is the e-mail with the link back to a suspended registration.
type ResumeMailModel struct {
	Club    string
	Subject string
	Persons []string
	Link    string
}

var resumeText = template.Must(template.New("resume").Funcs(template.FuncMap{"names": joinNames}).Parse(`Hello,

your registration with {{.Club}}{{if .Persons}} for {{names .Persons}}{{end}} is not finished yet.
Your answers are saved: this link takes you back to where you left off.

{{.Link}}

If you no longer want to register, you can ignore this message.

{{.Club}}
`))

// ResumeText is the text/plain part of the resume-link e-mail.
func ResumeText(m ResumeMailModel) (string, error) { return execText(resumeText, m) }

// UnpaidReminderMailModel is the reminder of an order still unpaid.
type UnpaidReminderMailModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	Total   string
	Days    int // since the registration was committed
	Link    string
}

var unpaidText = template.Must(template.New("unpaid").Funcs(template.FuncMap{"names": joinNames}).Parse(`Hello,

{{.Days}} days ago you registered {{names .Persons}} with {{.Club}} for {{.Period}}.
The payment of {{.Total}} has not arrived yet. This link takes you to your registration and its payment:

{{.Link}}

If you have paid in the meantime, thank you: please ignore this message.

{{.Club}}
`))

// UnpaidReminderText is the text/plain part of the unpaid reminder.
func UnpaidReminderText(m UnpaidReminderMailModel) (string, error) { return execText(unpaidText, m) }

// joinNames lists names for a sentence: "A", "A and B", "A, B and C".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// PaymentLinkMailModel is the payment link of a registration whose payment
// could not be created at commit.
type PaymentLinkMailModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	Total   string
	Link    string
}

var paymentLinkText = template.Must(template.New("paylink").Funcs(template.FuncMap{"names": joinNames}).Parse(`Hello,

your registration of {{names .Persons}} with {{.Club}} for {{.Period}} is saved.
When you registered, the payment could not be prepared; it is ready now.
Please pay {{.Total}} to finish your registration:

{{.Link}}

The link stays valid until the registration is paid.

{{.Club}}
`))

// PaymentLinkText is the text/plain part of the payment-link e-mail.
func PaymentLinkText(m PaymentLinkMailModel) (string, error) { return execText(paymentLinkText, m) }

// MemberMailModel is a message about one person's membership: the welcome
// and the expiry reminder.
type MemberMailModel struct {
	Club    string
	Subject string
	Name    string // the member's first name
	Type    string // membership type name
	Period  string
	Ends    string // the period's last day, e.g. 31 December 2026
	Contact string // the club's contact address, may be empty
}

var welcomeText = template.Must(template.New("welcome").Parse(`Hello {{.Name}},

welcome to {{.Club}}! Your membership ({{.Type}}, {{.Period}}) is active.
{{if .Contact}}
Questions? Write to {{.Contact}}.
{{end}}
{{.Club}}
`))

// WelcomeText is the text/plain part of the welcome message.
func WelcomeText(m MemberMailModel) (string, error) { return execText(welcomeText, m) }

var expiryText = template.Must(template.New("expiry").Parse(`Hello {{.Name}},

your membership with {{.Club}} ({{.Type}}, {{.Period}}) ends on {{.Ends}}.
When registration for the next season opens, you will receive a link to renew.
{{if .Contact}}
Questions? Write to {{.Contact}}.
{{end}}
{{.Club}}
`))

// ExpiryText is the text/plain part of the expiry reminder.
func ExpiryText(m MemberMailModel) (string, error) { return execText(expiryText, m) }

// execText runs a text part's template.
// textFuncs are the functions of the text parts' templates; t stands in
// until execTextIn binds it to a language.
var textFuncs = template.FuncMap{"t": func(id string, _ any) string { return id }}

// execTextIn runs a text part whose texts are messages ({{t "id" .}},
// filled from the model) in the language of ctx.
func execTextIn(ctx context.Context, t *template.Template, data any) (string, error) {
	l := lang.Of(ctx)
	bound, err := t.Clone()
	if err != nil {
		return "", err
	}
	bound.Funcs(template.FuncMap{"t": func(id string, m any) string { return l.T(id, modelData(m)) }})
	return execText(bound, data)
}

// modelData is a view model as a message's placeholder data.
func modelData(m any) map[string]any {
	switch v := m.(type) {
	case ConfirmationMailModel:
		return map[string]any{"Club": v.Club, "Period": v.Period}
	}
	return nil
}

func execText(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// InvitationMailModel is the e-mail inviting a household to register for a period.
type InvitationMailModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	Link    string
	Expires string // the last day the link works, as a date
}

var invitationText = template.Must(template.New("invitation").Funcs(template.FuncMap{"names": joinNames}).Parse(`Hello,

{{.Club}} invites you to register{{if .Persons}} {{names .Persons}}{{end}} for {{.Period}}.
This personal link signs you in and takes you to the registration:

{{.Link}}

The link works until {{.Expires}}. Please do not forward it: it opens your household's registration.

{{.Club}}
`))

// InvitationText is the text/plain part of the invitation e-mail.
func InvitationText(m InvitationMailModel) (string, error) { return execText(invitationText, m) }
