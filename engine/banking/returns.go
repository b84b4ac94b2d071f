package banking

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
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
	Account string
	// AmountMinor is the amount of the debit that came back, in cents.
	AmountMinor int64
	Currency    string
	// ChargesMinor is the bank's fee booked with the return in the same
	// entry (the entry's amount beyond the debit's), 0 when there is none
	// or the bank books it apart.
	ChargesMinor int64
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
	// return in a camt.054 and in the night's camt.053, as an entry of its
	// own or in a batch, has the same Key.
	Key string
	// PreviousKey is the key before transaction keys (Credit.PreviousKey).
	PreviousKey string
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
var returnReasons = map[string][3]string{
	"AC01": {"the account number (IBAN) is wrong", "die Kontonummer (IBAN) ist falsch", "le numéro de compte (IBAN) est erroné"},
	"AC04": {"the account is closed", "das Konto ist aufgelöst", "le compte est clôturé"},
	"AC06": {"the account is blocked, or blocked for direct debits", "das Konto ist gesperrt oder für Lastschriften gesperrt", "le compte est bloqué, ou bloqué pour les prélèvements"},
	"AC13": {"the account is a consumer's account (not allowed for business direct debits)", "das Konto ist ein Verbraucherkonto (für Firmenlastschriften nicht zulässig)", "le compte est celui d'un consommateur (interdit pour les prélèvements interentreprises)"},
	"AG01": {"direct debits are not allowed on this account", "Lastschriften sind auf diesem Konto nicht zulässig", "les prélèvements ne sont pas autorisés sur ce compte"},
	"AG02": {"the bank operation code is not valid", "der Geschäftsvorfall ist ungültig", "le code opération bancaire n'est pas valide"},
	"AM04": {"the account did not have enough funds", "das Konto war nicht ausreichend gedeckt", "le compte n'était pas suffisamment approvisionné"},
	"AM05": {"the debit was collected twice", "die Lastschrift wurde doppelt eingereicht", "le prélèvement a été présenté deux fois"},
	"BE05": {"the creditor's identifier was not recognised", "die Gläubiger-Identifikationsnummer wurde nicht erkannt", "l'identifiant créancier n'a pas été reconnu"},
	"CNOR": {"the creditor's bank cannot be reached", "die Bank des Zahlungsempfängers ist nicht erreichbar", "la banque du créancier n'est pas joignable"},
	"DNOR": {"the debtor's bank cannot be reached", "die Bank des Zahlungspflichtigen ist nicht erreichbar", "la banque du débiteur n'est pas joignable"},
	"FF01": {"the file format was invalid", "das Dateiformat war ungültig", "le format du fichier n'était pas valide"},
	"MD01": {"there is no valid mandate", "es liegt kein gültiges Mandat vor", "il n'y a pas de mandat valide"},
	"MD02": {"mandate data are missing or wrong", "Mandatsdaten fehlen oder sind falsch", "des données du mandat manquent ou sont erronées"},
	"MD06": {"the account holder asked their bank for a refund", "der Kontoinhaber hat die Lastschrift zurückgefordert", "le titulaire du compte a demandé le remboursement"},
	"MD07": {"the account holder has died", "der Kontoinhaber ist verstorben", "le titulaire du compte est décédé"},
	"MS02": {"the account holder refused the debit", "der Kontoinhaber hat der Lastschrift widersprochen", "le titulaire du compte a refusé le prélèvement"},
	"MS03": {"the bank returned the debit without giving a reason", "die Bank hat die Lastschrift ohne Angabe von Gründen zurückgegeben", "la banque a rejeté le prélèvement sans en donner le motif"},
	"RC01": {"the bank identifier (BIC) is wrong", "die Bankleitzahl (BIC) ist falsch", "l'identifiant de la banque (BIC) est erroné"},
	"RR01": {"the debtor's account or identification is missing", "Konto oder Identifikation des Zahlungspflichtigen fehlen", "le compte ou l'identification du débiteur manque"},
	"RR02": {"the debtor's name or address is missing", "Name oder Anschrift des Zahlungspflichtigen fehlen", "le nom ou l'adresse du débiteur manque"},
	"RR03": {"the creditor's name or address is missing", "Name oder Anschrift des Zahlungsempfängers fehlen", "le nom ou l'adresse du créancier manque"},
	"RR04": {"the bank returned the debit for regulatory reasons", "die Bank hat die Lastschrift aus regulatorischen Gründen zurückgegeben", "la banque a rejeté le prélèvement pour des raisons réglementaires"},
	"SL01": {"the account holder's bank blocks debits of this creditor (a service the holder chose)", "die Bank des Kontoinhabers sperrt Lastschriften dieses Gläubigers (auf dessen Wunsch)", "la banque du titulaire bloque les prélèvements de ce créancier (service choisi par le titulaire)"},
}

// ReturnReasonCodes are the return reason codes ReturnReasonText knows,
// sorted.
func ReturnReasonCodes() []string {
	codes := make([]string, 0, len(returnReasons))
	for c := range returnReasons {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return codes
}

// returns returns the entry's returned direct debits, one per
// transaction; nil when the entry has none. A return is a booked debit
// (a reversal of the collection's credit or not) whose transaction
// carries return information (RtrInf) or whose bank transaction code is
// a direct debit return (PMNT/IDDT/UPDD, PRDD or RCDD).
func (e xmlEntry) returns(account string) ([]Return, error) {
	if strings.TrimSpace(e.CdtDbtInd) != "DBIT" || e.status() != "BOOK" {
		return nil, nil
	}
	txs := e.TxDtls
	if len(txs) == 0 {
		txs = []xmlTx{{}}
	}
	entryID := strings.TrimSpace(e.AcctSvcrRef)
	if entryID == "" {
		entryID = strings.TrimSpace(e.NtryRef)
	}
	var out []Return
	for i, tx := range txs {
		if ind := strings.TrimSpace(tx.CdtDbtInd); ind != "" && ind != "DBIT" {
			continue
		}
		if tx.RtrInf == nil && !tx.BkTxCd.isDirectDebitReturn() && !e.BkTxCd.isDirectDebitReturn() {
			continue
		}
		booked, err := e.BookgDt.parse()
		if err != nil {
			return nil, errors.New("booking date: " + err.Error())
		}
		value, err := e.ValDt.parse()
		if err != nil {
			return nil, errors.New("value date: " + err.Error())
		}
		// The transaction's own amount is the debit's; a single return's
		// entry may be more, the bank's fee booked with it.
		own := tx.Amt
		for _, a := range []*xmlAmount{tx.TxAmt, tx.InstdAmt} {
			if own == nil {
				own = a
			}
		}
		if own == nil && len(txs) > 1 {
			return nil, fmt.Errorf("transaction %d of a batch has no amount", i+1)
		}
		amt := e.Amt
		if own != nil {
			amt = *own
		}
		minor, err := parseMinor(amt.Value, amt.Currency)
		if err != nil {
			return nil, err
		}
		r := Return{
			EndToEndID: strings.TrimSpace(tx.Refs.EndToEndId), MandateID: strings.TrimSpace(tx.Refs.MndtId),
			Account: account, AmountMinor: minor, Currency: strings.TrimSpace(amt.Currency),
			BookingDate: booked, ValueDate: value, BankReference: txID(entryID, tx, i, len(txs)),
		}
		if len(txs) == 1 && own != nil && strings.TrimSpace(e.Amt.Currency) == r.Currency {
			if total, err := parseMinor(e.Amt.Value, e.Amt.Currency); err == nil && total > minor {
				r.ChargesMinor = total - minor
			}
		}
		if r.EndToEndID == "NOTPROVIDED" {
			r.EndToEndID = ""
		}
		if ri := tx.RtrInf; ri != nil {
			r.ReasonCode = strings.ToUpper(strings.TrimSpace(ri.Rsn.Cd))
			words := strings.TrimSpace(strings.Join(ri.AddtlInf, " "))
			if words == "" {
				words = strings.TrimSpace(ri.Rsn.Prtry)
			}
			r.ReasonText = words
		}
		if r.ReasonText == "" && len(txs) == 1 {
			r.ReasonText = strings.TrimSpace(e.AddtlNtryInf)
		}
		position := 0
		if len(txs) > 1 {
			position = i + 1
		}
		r.Key = transactionKey(account, "DBIT/return", booked, value, minor, r.Currency, e, tx, nil)
		r.PreviousKey = creditKey(account, booked, value, minor, r.Currency, "return",
			e.AcctSvcrRef, e.NtryRef, tx.Refs.AcctSvcrRef, tx.Refs.EndToEndId, tx.Refs.TxId, tx.Refs.InstrId, tx.Refs.UETR, strconv.Itoa(position))
		out = append(out, r)
	}
	return out, nil
}
