// Package views holds the templ components and their view models. Views get
// everything ready to print: no database, no services.
package views

// ErrorModel is an error page.
type ErrorModel struct {
	Title   string
	Message string
}

// OrderLineModel is one printed order line.
type OrderLineModel struct {
	Description string
	Amount      string
}

// TestGatewayModel is the test gateway's payment page.
type TestGatewayModel struct {
	Reference string
	Action    string
	Lines     []OrderLineModel
	Total     string
	Open      bool
	Status    string
}

// PaymentReturnModel is the page after a payment.
type PaymentReturnModel struct {
	Title          string
	Message        string
	Reference      string
	Lines          []OrderLineModel
	Total          string
	RetryReference string // set when a new attempt may be started
	RegisterURL    string // back to the registration
}
