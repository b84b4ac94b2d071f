package banking_test

import (
	"fmt"
	"os"

	"portal/engine/banking"
)

// The payments import command: read the statement, drop the credits
// recorded by an earlier import (by Credit.ID), match the rest against the
// open bank-transfer payments, capture the exact matches and list the
// others for staff.
func ExampleMatch() {
	f, err := os.Open("testdata/camt054_v04.xml")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	st, err := banking.ParseStatement(f)
	if err != nil {
		panic(err)
	}
	ref, _ := banking.CreditorReference("PR-HOTEL2345HOTEL234")
	open := []banking.Expected{{Reference: ref, AmountMinor: 9000, Currency: "EUR"}}
	for _, p := range banking.Match(st.Credits, open) {
		fmt.Println(p.Credit.ID, p.Outcome, p.Reason)
	}
	// Output: NTF42-1 exact reference RF97 PRHO TEL2 345H OTEL 234 and amount EUR 90.00
}

// The bank_transfer provider: derive the reference from the payment's,
// build the transfer from the configured creditor and the order's total,
// and render its QR code next to the fields.
func ExampleTransfer_QRCode() {
	iban, _ := banking.ParseIBAN("DE89 3704 0044 0532 0130 00")
	ref, _ := banking.CreditorReference("PR-ALPHA2345ALPHA234")
	t := banking.Transfer{
		Creditor:    banking.Creditor{Name: "TV Köln 1848 e.V.", IBAN: iban},
		AmountMinor: 18450, Currency: "EUR", Reference: ref,
	}
	code, err := t.QRCode()
	if err != nil {
		panic(err)
	}
	fmt.Println(code.Kind)
	fmt.Printf("%q\n", code.Payload)
	// Output:
	// epc
	// "BCD\n002\n1\nSCT\n\nTV Köln 1848 e.V.\nDE89370400440532013000\nEUR184.50\n\nRF48PRALPHA2345ALPHA234"
}
