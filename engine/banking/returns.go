package banking

import (
	"strings"
	"time"
)

// Return is a SEPA direct debit that came back: a debit entry on the
// creditor's statement that reverses a collection (returned by the
// debtor's bank, refused or refunded by the debtor), read by
// ParseStatement.
type Return struct {
	// EndToEndID is the end-to-end id the collection file gave the
	// debit (DrctDbtTxInf/PmtId/EndToEndId), by which it is found.
	EndToEndID string
	// MandateID is the mandate reference when the bank repeats it
	// (RltdRmtInf or MndtId in the transaction details), "" otherwise.
	MandateID string
	// Account is the IBAN (or other id) of the statement's account.
	Account     string
	AmountMinor int64
	Currency    string
	// ReasonCode is the ISO 20022 return reason (RtrInf/Rsn/Cd, such as
	// "MD06" or "AC04"), "" when the bank gives none; see
	// ReturnReasonText and EndsMandate.
	ReasonCode string
	// ReasonText is the bank's own words for the reason (RtrInf/AddtlInf
	// or Rsn/Prtry), "" when it gives none.
	ReasonText  string
	BookingDate time.Time
	ValueDate   time.Time
	// BankReference is the account servicer's reference of the return
	// (the transaction's AcctSvcrRef, else the entry's).
	BankReference string
	// Key identifies the return like Credit.Key does a credit: the same
	// booking in overlapping statements has the same Key.
	Key string
}

// ReturnReasonText is the reason of a direct debit return in words, in
// English ("en"), German ("de") or French ("fr"; any other language gets
// English), as a member or a treasurer reads it. An unknown code gets a
// general sentence naming it.
func ReturnReasonText(code, lang string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	texts, ok := returnReasons[code]
	if !ok {
		texts = [3]string{
			"the bank returned the direct debit (reason code " + code + ")",
			"die Bank hat die Lastschrift zurückgegeben (Grund " + code + ")",
			"la banque a rejeté le prélèvement (code motif " + code + ")",
		}
		if code == "" {
			texts = [3]string{"the bank returned the direct debit", "die Bank hat die Lastschrift zurückgegeben", "la banque a rejeté le prélèvement"}
		}
	}
	switch lang {
	case "de":
		return texts[1]
	case "fr":
		return texts[2]
	}
	return texts[0]
}

// EndsMandate reports whether a return with this reason code ends the
// mandate, so that no further debit is collected with it: the account is
// closed or invalid (AC04, AC06 blocked for direct debits) or there is no
// valid mandate (MD01).
func EndsMandate(code string) bool {
	switch strings.ToUpper(strings.TrimSpace(code)) {
	case "AC04", "AC06", "MD01":
		return true
	}
	return false
}

// returnReasons are the reason codes of the SEPA Direct Debit rulebook's
// R-transactions (ExternalReturnReason1Code) in en, de, fr.
var returnReasons = map[string][3]string{}
