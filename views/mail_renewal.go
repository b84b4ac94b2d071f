package views

import "text/template"

// RenewalMailModel is the renewal prompt: the next season is open and the
// household's members of the ending one have not registered yet.
type RenewalMailModel struct {
	Club    string
	Subject string
	Persons []string // the first names still to register
	Ending  string   // the ending period's name
	Ends    string   // its last day, e.g. 31 December 2026
	Next    string   // the next period's name
	Link    string
	Contact string // the club's contact address, may be empty
}

var renewalText = template.Must(template.New("renewal").Funcs(template.FuncMap{"names": joinNames}).Parse(`Hello,

registration for {{.Next}} with {{.Club}} is open. The membership of {{names .Persons}} for {{.Ending}} ends on {{.Ends}}.
This link renews it; last season's answers are filled in for you to check:

{{.Link}}

If you do not want to renew, you can ignore this message.
{{if .Contact}}Questions? Write to {{.Contact}}.
{{end}}
{{.Club}}
`))

// RenewalText is the text/plain part of the renewal prompt.
func RenewalText(m RenewalMailModel) (string, error) { return execText(renewalText, m) }
