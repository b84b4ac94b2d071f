package views

// The page texts, one block per page, so that a translation can replace them
// in one place. Dynamic texts (names, amounts) come from the view models.

var layoutText = struct {
	Brand, SkipLink, Questions string
}{
	Brand:     "Membership registration",
	SkipLink:  "Skip to content",
	Questions: "Questions? Write to",
}

var overviewText = struct {
	Heading, Intro, PersonsHeading, Start, Continue, ContinueIntro, StartAgain,
	CommittedIntro, PayNow, NothingToDo string
}{
	Heading:        "Register for membership",
	Intro:          "Choose who you want to register, answer a few questions for each person, check your answers and pay online.",
	PersonsHeading: "People you can register",
	Start:          "Start registration",
	Continue:       "Continue where you left off",
	ContinueIntro:  "You started a registration earlier. You can continue where you left off or start again.",
	StartAgain:     "Start again",
	CommittedIntro: "Your registration is saved and waits for payment.",
	PayNow:         "Pay now",
	NothingToDo:    "Everyone linked to your account is already registered for this period. There is nothing left to do.",
}

var stepText = struct {
	SelectHeading, SelectHint, Back, ErrorSummary, Accept, Yes, ChooseOne, Optional string
}{
	SelectHeading: "Who do you want to register?",
	SelectHint:    "Select everyone you want to register now. People who are already registered cannot be selected.",
	Back:          "Back",
	ErrorSummary:  "There is a problem",
	Accept:        "I accept",
	Yes:           "Yes",
	ChooseOne:     "Choose…",
	Optional:      "Optional",
}

// SelectPersonsHeading is the heading and title of the person-selection
// page, which the handler puts into the StepModel like a question's text.
func SelectPersonsHeading() string { return stepText.SelectHeading }

var reviewText = struct {
	Heading, Intro, Change, Price, Confirm, PriceProblem string
}{
	Heading:      "Check your answers",
	Intro:        "Make sure everything is right before you confirm. You pay on the next page.",
	Change:       "Change",
	Price:        "Price",
	Confirm:      "Confirm and pay",
	PriceProblem: "The price cannot be calculated:",
}

var doneText = struct {
	Heading, Intro, Redirect, PayNow, Seconds, LinkFollows, BankTransfer string
}{
	BankTransfer: "Transfer the amount below with its reference. Banks take one to three working days; we confirm by e-mail when the money has arrived, and this page keeps the details.",
	LinkFollows:  "The payment service is not reachable right now. Your registration is saved; we will send you the payment link by e-mail, and it appears here as soon as it is ready.",
	Heading:      "Registration saved: pay to finish",
	Intro:        "Your registration is saved. The memberships become active as soon as the payment is received.",
	Redirect:     "You will be taken to the payment page in",
	PayNow:       "Pay now",
	Seconds:      "seconds.",
}

var resetText = struct {
	Heading, Intro, Committed, Confirm, Cancel string
}{
	Heading:   "Start again?",
	Intro:     "All answers of this registration will be deleted. This cannot be undone.",
	Committed: "The saved registration and its unpaid order will be cancelled.",
	Confirm:   "Yes, delete my answers and start again",
	Cancel:    "No, go back",
}

var paymentText = struct {
	SuccessNext, Retry, BackToRegistration, Reference, Total, Item, Amount, DetailsHidden, CheckAgain string
}{
	CheckAgain:         "Check again",
	SuccessNext:        "What happens next: you receive a confirmation message, and the club sends membership details before the season starts.",
	Retry:              "Try the payment again",
	BackToRegistration: "Back to your registration",
	Reference:          "Payment reference",
	Total:              "Total",
	Item:               "Item",
	Amount:             "Amount",
	DetailsHidden:      "For your privacy, the order's details are shown only to the member who registered, once signed in. Open your registration to see them.",
}

var payByTransferText = struct {
	Heading, Intro string
}{
	Heading: "Pay your registration",
	Intro:   "Your registration is saved. The memberships become active as soon as your transfer has arrived.",
}

var bankTransferText = struct {
	Heading, Intro, ScanHint, Creditor, IBAN, BIC, Amount, Reference, ReferenceHint, Copy, Copied string
}{
	Heading:       "Pay by bank transfer",
	Intro:         "Scan the code with your banking app, or copy the details below into a new transfer.",
	ScanHint:      "Most banking apps fill in the transfer when you scan this code.",
	Creditor:      "Account holder",
	IBAN:          "IBAN",
	BIC:           "BIC",
	Amount:        "Amount",
	Reference:     "Reference",
	ReferenceHint: "Enter the reference exactly as shown, in the reference field if your bank has one: it is how we match your payment to your registration.",
	Copy:          "Copy",
	Copied:        "Copied",
}
