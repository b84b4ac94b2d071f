package mailview

import (
	"context"
	"text/template"

	"portal/views"
	"portal/views/lang"
)

// RenewalModel is the renewal prompt: the next season is open and the
// household's members of the ending one have not registered yet.
type RenewalModel struct {
	Club    string
	Subject string
	Persons []string // the first names still to register
	Ending  string   // the ending period's name
	Ends    string   // its last day, e.g. 31 December 2026
	Ended   bool     // that day is past: the prompt says "ended on", not "ends on"
	Next    string   // the next period's name
	Link    string
	Contact string // the club's contact address, may be empty
}

func (m RenewalModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Persons": views.JoinNames(l, m.Persons), "Ending": m.Ending, "Ends": m.Ends, "Next": m.Next}
}

// OpenKey is the opening sentence's message: a prompt that goes out after
// the ending season's last day (a next season opened late) must not say
// the membership "ends on" a date already past.
func (m RenewalModel) OpenKey() string {
	if m.Ended {
		return "mail_renewal_open_ended"
	}
	return "mail_renewal_open"
}

var renewalText = template.Must(template.New("renewal").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{t .OpenKey .}}
{{t "mail_renewal_prefilled" .}} {{t "mail_renewal_link" .}}

{{.Link}}

{{t "mail_renewal_ignore" .}}
{{if .Contact}}{{t "mail_questions" .}} {{.Contact}}.
{{end}}
{{.Club}}
`))

// RenewalText is the text/plain part of the renewal prompt, in the
// language of ctx.
func RenewalText(ctx context.Context, m RenewalModel) (string, error) {
	return execTextIn(ctx, renewalText, m)
}
