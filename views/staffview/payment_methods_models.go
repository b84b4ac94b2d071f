package staffview

// PaymentMethodsForm is the setup page's payment methods form, as
// stored or as typed after a refused change.
type PaymentMethodsForm struct {
	Action              string
	Options             []PaymentMethodOption
	Default             string
	CreditorID          string
	PrenotificationDays int
	FileVersion         string
	// CollectionDay ("" for none) and ReturnFee (an amount, "" for none)
	// are as stored or as typed.
	CollectionDay, ReturnFee string
	Errors                   map[string]string
}

// PaymentMethodOption is one method the club may offer.
type PaymentMethodOption struct {
	Value, Label string
	Checked      bool
}
