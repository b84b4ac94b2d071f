// Package formclient is what a client of the form JSON API
// (/api/forms/...) over HTTP reads of its answers, and the valid answers
// to the demo definition's questions: one walk of a household through a
// portal running as its own process, shared by the benchmark (cmd/loadgen),
// the image test (deploy) and the upgrade test (cmd/portal).
package formclient

// Form is the part of the form API's FormDTO a walk reads.
type Form struct {
	ProcessID    string   `json:"processId"`
	Step         int      `json:"step"`
	ProcessState string   `json:"processState"`
	QuestionType *string  `json:"questionType"`
	Options      []string `json:"options"`
	People       []struct {
		ID        int64  `json:"id"`
		Hide      bool   `json:"hide"`
		CanSelect bool   `json:"canSelect"`
		Status    string `json:"status"`
	} `json:"people"`
	PaymentURL *string `json:"paymentUrl"`
}

// DemoAnswer is a valid answer of person number i (the first takes the
// insurance and is the main contact) to f's question of the demo
// definition, in the form every released API version takes.
func DemoAnswer(f Form, i int) string {
	switch *f.QuestionType {
	case "TXT":
		return "0612345678"
	case "DRP", "RDO", "SEL":
		return f.Options[0]
	case "ONE":
		if i == 0 {
			return "1"
		}
		return "0"
	}
	return "1"
}
