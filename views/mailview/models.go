package mailview

import (
	"context"
	"strings"
	"text/template"

	"portal/views"
	"portal/views/lang"
)

// E-mail view models. The HTML part of a message is a templ component
// (mail_*.templ) with inlined styles, since mail clients drop style sheets;
// the text part is a text/template below, since templ escapes HTML.

// Member is one member in a message.
type Member struct {
	Name string
	Type string // membership type name
}

// ConfirmationModel is the confirmation after payment.
type ConfirmationModel struct {
	Club      string
	Subject   string
	Reference string
	Order     string // the order number
	Period    string // name and dates
	Members   []Member
	Lines     []views.OrderLineModel
	Total     string
	// CardsAttached says a membership card per member is attached.
	CardsAttached bool
	PortalURL     string
	// CollectedOn is the date a direct debit is collected on, as members
	// read it, when the order is paid by one: the confirmation then says
	// the club collects the total that day, not that a payment arrived.
	CollectedOn string
}

// The confirmation's texts are the mail_* messages of views/lang, in the
// member's language (t, bound per message by execTextIn).
var confirmationText = template.Must(template.New("confirmation").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{if .CollectedOn}}{{t "mail_confirmation_intro_debit" .}}{{else}}{{t "mail_confirmation_intro" .}}{{end}}

{{t "mail_reference" .}}: {{.Reference}}
{{t "mail_order" .}}: {{.Order}}
{{t "mail_period" .}}: {{.Period}}

{{t "mail_members" .}}
{{range .Members}}  - {{.Name}}: {{.Type}}
{{end}}
{{t "mail_order" .}}
{{range .Lines}}  {{.Description}}: {{.Amount}}
{{end}}  {{if .CollectedOn}}{{t "mail_total_debit" .}}{{else}}{{t "mail_total_paid" .}}{{end}}: {{.Total}}

{{t "mail_next" .}}
{{if .CardsAttached}}  - {{t "mail_cards_attached" .}}
{{end}}  - {{t "mail_nothing_else" .}} {{.PortalURL}}

{{.Club}}
`))

func (m ConfirmationModel) messageData(lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Period": m.Period, "Total": m.Total, "Date": m.CollectedOn}
}

// ConfirmationText is the text/plain part of the confirmation, in the
// language of ctx.
func ConfirmationText(ctx context.Context, m ConfirmationModel) (string, error) {
	return execTextIn(ctx, confirmationText, m)
}

// ResumeModel is the e-mail with the link back to a suspended registration.
type ResumeModel struct {
	Club    string
	Subject string
	Persons []string
	Link    string
}

func (m ResumeModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Persons": views.JoinNames(l, m.Persons)}
}

var resumeText = template.Must(template.New("resume").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{if .Persons}}{{t "mail_resume_intro_persons" .}}{{else}}{{t "mail_resume_intro" .}}{{end}}
{{t "mail_resume_saved" .}}

{{.Link}}

{{t "mail_resume_ignore" .}}

{{.Club}}
`))

// ResumeText is the text/plain part of the resume-link e-mail, in the
// language of ctx.
func ResumeText(ctx context.Context, m ResumeModel) (string, error) {
	return execTextIn(ctx, resumeText, m)
}

// UnpaidReminderModel is the reminder of an order still unpaid.
type UnpaidReminderModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	Total   string
	Days    int // since the registration was committed
	Link    string
	// Transfer, when the order is paid by bank transfer, is the transfer
	// still owed, printed in the message.
	Transfer *views.BankTransferModel
}

func (m UnpaidReminderModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Period": m.Period, "Persons": views.JoinNames(l, m.Persons), "Total": m.Total}
}

var unpaidText = template.Must(template.New("unpaid").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{tn "mail_unpaid_intro" .Days .}}
{{t "mail_unpaid_open" .}}{{if .Transfer}}

{{transfer .Transfer}}
{{else}} {{end}}{{t "mail_unpaid_link" .}}

{{.Link}}

{{t "mail_unpaid_paid" .}}

{{.Club}}
`))

// UnpaidReminderText is the text/plain part of the unpaid reminder, in the
// language of ctx.
func UnpaidReminderText(ctx context.Context, m UnpaidReminderModel) (string, error) {
	return execTextIn(ctx, unpaidText, m)
}

// PaymentLinkModel is the payment link of a registration whose payment
// could not be created at commit.
type PaymentLinkModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	Total   string
	Link    string
	// Transfer, when the order is paid by bank transfer, is the transfer
	// still owed, printed in the message.
	Transfer *views.BankTransferModel
}

func (m PaymentLinkModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Period": m.Period, "Persons": views.JoinNames(l, m.Persons), "Total": m.Total}
}

var paymentLinkText = template.Must(template.New("paylink").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{t "mail_paylink_saved" .}}
{{t "mail_paylink_ready" .}}
{{if .Transfer}}
{{transfer .Transfer}}{{end}}
{{.Link}}

{{t "mail_paylink_valid" .}}

{{.Club}}
`))

// PaymentLinkText is the text/plain part of the payment-link e-mail, in
// the language of ctx.
func PaymentLinkText(ctx context.Context, m PaymentLinkModel) (string, error) {
	return execTextIn(ctx, paymentLinkText, m)
}

// TransferRequestModel asks for the bank transfer of a registration
// just committed.
type TransferRequestModel struct {
	Club     string
	Subject  string
	Period   string
	Persons  []string
	Total    string // the order's total, as members read money
	Link     string // the pay link, which shows the transfer again
	Transfer views.BankTransferModel
}

func (m TransferRequestModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Period": m.Period, "Persons": views.JoinNames(l, m.Persons), "Total": m.Total}
}

var transferRequestText = template.Must(template.New("transfer").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{t "mail_transfer_saved" .}}
{{t "mail_transfer_active" .}}

{{transfer .Transfer}}
{{t "mail_transfer_link" .}}

{{.Link}}

{{.Club}}
`))

// TransferRequestText is the text/plain part of the transfer request, in
// the language of ctx.
func TransferRequestText(ctx context.Context, m TransferRequestModel) (string, error) {
	return execTextIn(ctx, transferRequestText, m)
}

// transferText lists a bank transfer's fields for a text part, one per
// line, with the instructions around them: what a member types into a
// banking app when the mail client shows no image.
func transferText(ctx context.Context, m views.BankTransferModel) string {
	var b strings.Builder
	b.WriteString(tr(ctx, "bank_transfer_heading") + "\n" + tr(ctx, "bank_transfer_intro") + "\n")
	if m.PartlyPaid {
		b.WriteString(tr(ctx, "bank_transfer_partly_paid") + "\n")
	}
	b.WriteString("\n")
	for _, f := range m.Fields(ctx) {
		b.WriteString("  " + f.Label + ": " + f.Shown + "\n")
	}
	b.WriteString("\n" + tr(ctx, "bank_transfer_reference_hint") + "\n")
	return b.String()
}

// MemberModel is a message about one person's membership: the welcome
// and the expiry reminder.
type MemberModel struct {
	Club    string
	Subject string
	Name    string // the member's first name
	Type    string // membership type name
	Period  string
	Ends    string // the period's last day, e.g. 31 December 2026
	Contact string // the club's contact address, may be empty
}

func (m MemberModel) messageData(lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Name": m.Name, "Type": m.Type, "Period": m.Period, "Ends": m.Ends}
}

var welcomeText = template.Must(template.New("welcome").Funcs(textFuncs).Parse(`{{t "mail_hello_name" .}}

{{t "mail_welcome_intro" .}} {{t "mail_welcome_active" .}}
{{if .Contact}}
{{t "mail_questions" .}} {{.Contact}}.
{{end}}
{{.Club}}
`))

// WelcomeText is the text/plain part of the welcome message, in the
// language of ctx.
func WelcomeText(ctx context.Context, m MemberModel) (string, error) {
	return execTextIn(ctx, welcomeText, m)
}

var expiryText = template.Must(template.New("expiry").Funcs(textFuncs).Parse(`{{t "mail_hello_name" .}}

{{t "mail_expiry_intro" .}}
{{t "mail_expiry_next" .}}
{{if .Contact}}
{{t "mail_questions" .}} {{.Contact}}.
{{end}}
{{.Club}}
`))

// ExpiryText is the text/plain part of the expiry reminder, in the
// language of ctx.
func ExpiryText(ctx context.Context, m MemberModel) (string, error) {
	return execTextIn(ctx, expiryText, m)
}

// textFuncs are the functions of the text parts' templates; t and tn
// stand in until execTextIn binds them to a language.
var textFuncs = template.FuncMap{
	"t":  func(id string, _ any) string { return id },
	"tn": func(id string, _ int, _ any) string { return id },
	// transfer prints a bank transfer's fields (transferText).
	"transfer": func(any) string { return "" },
}

// mailModel is a message's view model, which fills the placeholders of
// its texts ({{.Club}}, {{.Persons}}) in a language.
type mailModel interface {
	messageData(l lang.Language) map[string]any
}

// execTextIn runs a text part whose texts are messages ({{t "id" .}},
// {{tn "id" count .}} for a plural, filled from the model) in the
// language of ctx.
func execTextIn(ctx context.Context, t *template.Template, m mailModel) (string, error) {
	l := lang.Of(ctx)
	bound, err := t.Clone()
	if err != nil {
		return "", err
	}
	bound.Funcs(template.FuncMap{
		"t":  func(id string, m mailModel) string { return l.T(id, m.messageData(l)) },
		"tn": func(id string, n int, m mailModel) string { return l.Plural(id, n, m.messageData(l)) },
		"transfer": func(t any) string {
			switch t := t.(type) {
			case views.BankTransferModel:
				return transferText(ctx, t)
			case *views.BankTransferModel:
				return transferText(ctx, *t)
			}
			return ""
		},
	})
	return execText(bound, m)
}

// mailText is a message's text in the language of ctx, its placeholders
// filled from the model, for the HTML parts.
func mailText(ctx context.Context, id string, m mailModel) string {
	l := lang.Of(ctx)
	return l.T(id, m.messageData(l))
}

// mailPlural is mailText of a message with plural forms for n.
func mailPlural(ctx context.Context, id string, n int, m mailModel) string {
	l := lang.Of(ctx)
	return l.Plural(id, n, m.messageData(l))
}

func execText(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// InvitationModel is the e-mail inviting a household to register for a period.
type InvitationModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	Link    string
	Expires string // the last day the link works, as a date
}

func (m InvitationModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Period": m.Period, "Persons": views.JoinNames(l, m.Persons), "Expires": m.Expires}
}

var invitationText = template.Must(template.New("invitation").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{if .Persons}}{{t "mail_invitation_intro_persons" .}}{{else}}{{t "mail_invitation_intro" .}}{{end}}
{{t "mail_invitation_link" .}}

{{.Link}}

{{t "mail_invitation_expires" .}}

{{.Club}}
`))

// InvitationText is the text/plain part of the invitation e-mail, in the
// language of ctx.
func InvitationText(ctx context.Context, m InvitationModel) (string, error) {
	return execTextIn(ctx, invitationText, m)
}
