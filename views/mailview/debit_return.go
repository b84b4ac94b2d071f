package mailview

import (
	"context"
	"text/template"

	"portal/views"
	"portal/views/lang"
)

// DebitReturnModel tells a member that their direct debit came back
// from their bank (issue 29): why, in words, what they owe now (the
// club's return fee included) and the stable pay link, where they confirm
// the mandate again, give another account or choose another way to pay.
type DebitReturnModel struct {
	Club    string
	Subject string
	Period  string
	Persons []string
	// Reason is the bank's reason in words, in the member's language.
	Reason string
	// Returned is the amount that came back; Fee the club's return fee
	// added to the order ("" when none); Total what is owed now.
	Returned, Fee, Total string
	Link                 string
	// MandateEnded: the reason ended the mandate (a closed or blocked
	// account, no valid mandate); a new one is needed to pay by debit.
	MandateEnded bool
}

func (m DebitReturnModel) messageData(l lang.Language) map[string]any {
	return map[string]any{"Club": m.Club, "Period": m.Period, "Persons": views.JoinNames(l, m.Persons), "Reason": m.Reason,
		"Returned": m.Returned, "Fee": m.Fee, "Total": m.Total}
}

var debitReturnText = template.Must(template.New("debitreturn").Funcs(textFuncs).Parse(`{{t "mail_hello" .}}

{{t "mail_return_intro" .}}
{{if .Fee}}{{t "mail_return_fee" .}}
{{end}}{{t "mail_return_owed" .}}
{{if .MandateEnded}}{{t "mail_return_mandate_ended" .}}
{{end}}{{t "mail_return_choose" .}}

{{.Link}}

{{.Club}}
`))

// DebitReturnText is the text/plain part of the returned-debit e-mail, in
// the language of ctx.
func DebitReturnText(ctx context.Context, m DebitReturnModel) (string, error) {
	return execTextIn(ctx, debitReturnText, m)
}
