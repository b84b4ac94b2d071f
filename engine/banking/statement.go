package banking

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Statement is what a bank statement file says about incoming money.
type Statement struct {
	// Message is the ISO 20022 message, such as "camt.053.001.08", read
	// from the document's namespace ("camt.052", "camt.053" or "camt.054"
	// alone when the file has none).
	Message string
	// MessageID is the bank's id of the file (GrpHdr/MsgId): importing a
	// file twice can be told by it.
	MessageID string
	// Credits are the booked incoming transfers, one per transaction.
	Credits []Credit
	// Returns are the booked SEPA direct debits that came back (returns,
	// refusals, refunds), one per transaction; see Return.
	Returns []Return
	// Skipped counts the entries that are neither booked credits nor
	// returned direct debits (other debits, pending or informational
	// entries, reversals), which an import reports but never captures.
	Skipped int
}

// CreditsTo returns the credits booked to account (an IBAN, compared
// without spaces and case): a statement file may hold several accounts,
// and only the payee's own are matched against its open payments.
func (s Statement) CreditsTo(account string) []Credit {
	var out []Credit
	for _, c := range s.Credits {
		if compact(c.Account) == compact(account) {
			out = append(out, c)
		}
	}
	return out
}

// Credit is one booked incoming transfer.
type Credit struct {
	// ID is the account servicer's reference of the transaction (or of
	// its entry, with the transaction's position when the entry is a
	// batch), as people read it on the statement. It is not unique: real
	// files repeat one AcctSvcrRef on entries of other amounts, and
	// every bank numbers its own entries, so Key, not ID, tells credits
	// apart.
	ID string
	// Key identifies the bank transaction on its account by what stays
	// the same in every file that reports it (transactionKey): the same
	// transfer in a camt.054 notification, a camt.052 intraday report and
	// the night's camt.053 statement, as an entry of its own or inside a
	// batch, has the same Key, while entry-level references (NtryRef, the
	// entry's AcctSvcrRef) and positions, which differ between those
	// files, are no part of it.
	Key string
	// PreviousKey is the key the portal recorded credits by before
	// transaction keys (it included the entry's references and the
	// position): a credit imported before the upgrade is found by it, so
	// that the same statement imported again is not captured twice.
	PreviousKey string
	// TransactionRef is the account servicer's reference of the
	// transaction itself (TxDtls/Refs/AcctSvcrRef), "" when the bank
	// gives none (or repeats the entry's on each transaction of a
	// batch). With the account, amount, currency and booking date it
	// finds a credit recorded before transaction keys from another file
	// of the same transaction (a camt.054 before this camt.053), whose
	// key of that time named that file's entry references.
	TransactionRef string
	// Account is the IBAN (or other id) of the statement's account.
	Account     string
	AmountMinor int64
	Currency    string
	BookingDate time.Time
	ValueDate   time.Time
	// References are the structured creditor references
	// (RmtInf/Strd/CdtrRefInf/Ref) as given.
	References []string
	// Unstructured is the free remittance text (RmtInf/Ustrd), lines joined.
	Unstructured string
	DebtorName   string
	// DebtorIBAN is the payer's account (RltdPties/DbtrAcct), "" when the
	// bank does not say: where money that is not ours goes back to.
	DebtorIBAN string
}

// MaxStatementBytes bounds a statement file; the largest monthly camt.053
// of a club account is a few megabytes.
const MaxStatementBytes = 64 << 20

var messageName = regexp.MustCompile(`(camt\.05[234])\.001\.(\d{2})$`)

// messages are the root elements read, by the message each one is.
var messages = map[string]string{"BkToCstmrAcctRpt": "camt.052", "BkToCstmrStmt": "camt.053", "BkToCstmrDbtCdtNtfctn": "camt.054"}

// reportParents are the elements that hold an account's entries: Rpt
// (camt.052), Stmt (camt.053) and Ntfctn (camt.054).
var reportParents = map[string]bool{"Rpt": true, "Stmt": true, "Ntfctn": true}

// ParseStatement reads an ISO 20022 camt.052 intraday account report
// (BkToCstmrAcctRpt), camt.053 statement (BkToCstmrStmt) or camt.054
// notification (BkToCstmrDbtCdtNtfctn) of any version (.001.02 to .001.13
// share the elements read here) and returns its booked credits (a report's
// pending entries are skipped like any entry not booked). Elements are
// matched by local name, so the namespace of any version, or none, works.
func ParseStatement(r io.Reader) (Statement, error) {
	lr := &io.LimitedReader{R: r, N: MaxStatementBytes + 1}
	d := xml.NewDecoder(lr)
	d.CharsetReader = latin1Reader
	var st Statement
	var path []string
	account := ""
	entries := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return Statement{}, fmt.Errorf("statement: larger than %d MiB", MaxStatementBytes>>20)
			}
			return Statement{}, fmt.Errorf("statement: not well-formed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			parent := ""
			if len(path) > 0 {
				parent = path[len(path)-1]
			}
			switch {
			case len(path) == 1 && messages[name] != "":
				st.Message = messages[name]
				if m := messageName.FindStringSubmatch(path[0]); m != nil {
					if m[1] != st.Message {
						return Statement{}, fmt.Errorf("statement: namespace %s does not match element %s", path[0], name)
					}
					if v, _ := strconv.Atoi(m[2]); v < 2 {
						return Statement{}, fmt.Errorf("statement: %s versions before .001.02 are not supported", m[0])
					}
					st.Message = m[0]
				}
			case len(path) == 1:
				return Statement{}, fmt.Errorf("statement: %s is not a camt.052 report, camt.053 statement or camt.054 notification", name)
			case name == "MsgId" && parent == "GrpHdr":
				var id string
				if err := d.DecodeElement(&id, &t); err != nil {
					return Statement{}, fmt.Errorf("statement: GrpHdr/MsgId: %w", err)
				}
				st.MessageID = strings.TrimSpace(id)
				continue
			case name == "Acct" && reportParents[parent]:
				var a xmlAccount
				if err := d.DecodeElement(&a, &t); err != nil {
					return Statement{}, fmt.Errorf("statement: account: %w", err)
				}
				account = strings.TrimSpace(a.Id.IBAN)
				if account == "" {
					account = strings.TrimSpace(a.Id.Othr.Id)
				}
				continue
			case name == "Ntry" && reportParents[parent]:
				var e xmlEntry
				if err := d.DecodeElement(&e, &t); err != nil {
					return Statement{}, fmt.Errorf("statement: entry %d: %w", entries+1, err)
				}
				entries++
				credits, err := e.credits(account)
				if err != nil {
					return Statement{}, fmt.Errorf("statement: entry %d: %w", entries, err)
				}
				returns, err := e.returns(account)
				if err != nil {
					return Statement{}, fmt.Errorf("statement: entry %d: %w", entries, err)
				}
				if credits == nil && returns == nil {
					st.Skipped++
				}
				st.Credits = append(st.Credits, credits...)
				st.Returns = append(st.Returns, returns...)
				continue
			}
			if len(path) == 0 {
				if name != "Document" {
					return Statement{}, fmt.Errorf("statement: root element %s is not an ISO 20022 Document", name)
				}
				// The namespace stands in for the root in path, for the version.
				path = append(path, t.Name.Space)
				continue
			}
			path = append(path, name)
		case xml.EndElement:
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		}
	}
	if st.Message == "" {
		return Statement{}, errors.New("statement: no BkToCstmrAcctRpt, BkToCstmrStmt or BkToCstmrDbtCdtNtfctn in the document")
	}
	return st, nil
}

type xmlAccount struct {
	Id struct {
		IBAN string `xml:"IBAN"`
		Othr struct {
			Id string `xml:"Id"`
		} `xml:"Othr"`
	} `xml:"Id"`
}

type xmlAmount struct {
	Value    string `xml:",chardata"`
	Currency string `xml:"Ccy,attr"`
}

// xmlDate is Dt (a date) or DtTm (a date and time) of BookgDt and ValDt.
type xmlDate struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

type xmlEntry struct {
	Amt       xmlAmount `xml:"Amt"`
	CdtDbtInd string    `xml:"CdtDbtInd"`
	RvslInd   string    `xml:"RvslInd"`
	// Sts is <Sts>BOOK</Sts> up to version 07 and <Sts><Cd>BOOK</Cd></Sts>
	// from 08.
	Sts struct {
		Text string `xml:",chardata"`
		Cd   string `xml:"Cd"`
	} `xml:"Sts"`
	BookgDt     xmlDate `xml:"BookgDt"`
	ValDt       xmlDate `xml:"ValDt"`
	AcctSvcrRef string  `xml:"AcctSvcrRef"`
	NtryRef     string  `xml:"NtryRef"`
	// AddtlNtryInf is where some banks put the remittance text of an
	// entry without transaction details.
	AddtlNtryInf string  `xml:"AddtlNtryInf"`
	TxDtls       []xmlTx `xml:"NtryDtls>TxDtls"`
	// BkTxCd is the entry's bank transaction code (a transaction may
	// carry its own).
	BkTxCd xmlBankTxCode `xml:"BkTxCd"`
}

// xmlBankTxCode is an ISO bank transaction code (domain, family, sub-family)
// and the bank's proprietary one.
type xmlBankTxCode struct {
	Domn struct {
		Cd   string `xml:"Cd"`
		Fmly struct {
			Cd        string `xml:"Cd"`
			SubFmlyCd string `xml:"SubFmlyCd"`
		} `xml:"Fmly"`
	} `xml:"Domn"`
	Prtry struct {
		Cd string `xml:"Cd"`
	} `xml:"Prtry"`
}

// isDirectDebitReturn reports whether the code of a debit entry says a
// direct debit the account holder collected came back: domain PMNT,
// family IDDT (issued direct debits; some banks say RDDT), sub-family UPDD
// (reversal due to return or unpaid direct debit), PRDD (reversal due to
// payment reversal, such as a refund) or RCDD (reversal due to a
// cancellation request). A direct debit the club itself pays
// (RDDT/ESDD) is not one.
func (c xmlBankTxCode) isDirectDebitReturn() bool {
	if strings.TrimSpace(c.Domn.Cd) != "PMNT" {
		return false
	}
	if f := strings.TrimSpace(c.Domn.Fmly.Cd); f != "IDDT" && f != "RDDT" {
		return false
	}
	switch strings.TrimSpace(c.Domn.Fmly.SubFmlyCd) {
	case "UPDD", "PRDD", "RCDD":
		return true
	}
	return false
}

type xmlParty struct {
	Nm  string `xml:"Nm"`
	Pty struct {
		Nm string `xml:"Nm"`
	} `xml:"Pty"`
}

type xmlTx struct {
	Refs struct {
		AcctSvcrRef string `xml:"AcctSvcrRef"`
		EndToEndId  string `xml:"EndToEndId"`
		TxId        string `xml:"TxId"`
		InstrId     string `xml:"InstrId"`
		UETR        string `xml:"UETR"`
		MndtId      string `xml:"MndtId"`
	} `xml:"Refs"`
	BkTxCd xmlBankTxCode `xml:"BkTxCd"`
	// RtrInf is the return information of a returned payment: the
	// reason as an ISO code (Rsn/Cd) or the bank's own (Rsn/Prtry), and
	// words (AddtlInf).
	RtrInf *struct {
		Rsn struct {
			Cd    string `xml:"Cd"`
			Prtry string `xml:"Prtry"`
		} `xml:"Rsn"`
		AddtlInf []string `xml:"AddtlInf"`
	} `xml:"RtrInf"`
	// Amt is the transaction's amount from version 03; AmtDtls/TxAmt/Amt
	// in 02.
	Amt   *xmlAmount `xml:"Amt"`
	TxAmt *xmlAmount `xml:"AmtDtls>TxAmt>Amt"`
	// InstdAmt is the amount first instructed (AmtDtls/InstdAmt/Amt):
	// of a returned debit, the amount collected.
	InstdAmt  *xmlAmount `xml:"AmtDtls>InstdAmt>Amt"`
	CdtDbtInd string     `xml:"CdtDbtInd"`
	// Dbtr/Nm up to version 07, Dbtr/Pty/Nm from 08.
	Dbtr     xmlParty   `xml:"RltdPties>Dbtr"`
	DbtrAcct xmlAccount `xml:"RltdPties>DbtrAcct"`
	RmtInf   struct {
		Ustrd []string `xml:"Ustrd"`
		Strd  []struct {
			Ref string `xml:"CdtrRefInf>Ref"`
		} `xml:"Strd"`
	} `xml:"RmtInf"`
}

// credits returns the entry's booked credits, one per transaction; nil
// when the entry is not one.
func (e xmlEntry) credits(account string) ([]Credit, error) {
	if strings.TrimSpace(e.CdtDbtInd) != "CRDT" || e.status() != "BOOK" || strings.TrimSpace(e.RvslInd) == "true" {
		return nil, nil
	}
	booked, err := e.BookgDt.parse()
	if err != nil {
		return nil, fmt.Errorf("booking date: %w", err)
	}
	value, err := e.ValDt.parse()
	if err != nil {
		return nil, fmt.Errorf("value date: %w", err)
	}
	entryID := strings.TrimSpace(e.AcctSvcrRef)
	if entryID == "" {
		entryID = strings.TrimSpace(e.NtryRef)
	}
	txs := e.TxDtls
	if len(txs) == 0 {
		txs = []xmlTx{{}} // an entry without details is one transaction
	}
	var out []Credit
	for i, tx := range txs {
		if ind := strings.TrimSpace(tx.CdtDbtInd); ind != "" && ind != "CRDT" {
			continue // a debit inside a credit batch (a fee, say)
		}
		amt, minor, err := e.txAmount(tx, i, len(txs))
		if err != nil {
			return nil, err
		}
		id := txID(entryID, tx, i, len(txs))
		if id == "" {
			return nil, errors.New("credit has no account servicer reference, so it could not be recorded once")
		}
		c := Credit{
			ID: id, Account: account, AmountMinor: minor, Currency: strings.TrimSpace(amt.Currency),
			BookingDate: booked, ValueDate: value,
			Unstructured: strings.TrimSpace(strings.Join(tx.RmtInf.Ustrd, " ")),
			DebtorName:   strings.TrimSpace(tx.Dbtr.Nm),
			DebtorIBAN:   strings.TrimSpace(tx.DbtrAcct.Id.IBAN),
		}
		for _, s := range tx.RmtInf.Strd {
			if r := strings.TrimSpace(s.Ref); r != "" {
				c.References = append(c.References, r)
			}
		}
		if c.Unstructured == "" && len(c.References) == 0 && len(txs) == 1 {
			c.Unstructured = strings.TrimSpace(e.AddtlNtryInf)
		}
		if c.DebtorName == "" {
			c.DebtorName = strings.TrimSpace(tx.Dbtr.Pty.Nm)
		}
		if ref := strings.TrimSpace(tx.Refs.AcctSvcrRef); ref != "" && !strings.EqualFold(ref, "NOTPROVIDED") && !(len(txs) > 1 && ref == entryID) {
			c.TransactionRef = ref
		}
		position := 0
		if len(txs) > 1 {
			position = i + 1
		}
		c.Key = transactionKey(account, "CRDT", booked, value, minor, c.Currency, e, tx, c.References)
		c.PreviousKey = creditKey(account, booked, value, minor, c.Currency,
			e.AcctSvcrRef, e.NtryRef, tx.Refs.AcctSvcrRef, tx.Refs.EndToEndId, tx.Refs.TxId, tx.Refs.InstrId, tx.Refs.UETR, strconv.Itoa(position))
		out = append(out, c)
	}
	return out, nil
}

// status is the entry's status code in either form.
func (e xmlEntry) status() string {
	if status := strings.TrimSpace(e.Sts.Cd); status != "" {
		return status
	}
	return strings.TrimSpace(e.Sts.Text)
}

// txAmount is the amount of the i-th of n transactions of the entry:
// within a batch the entry's amount is the sum and each transaction
// carries its own.
func (e xmlEntry) txAmount(tx xmlTx, i, n int) (xmlAmount, int64, error) {
	amt := e.Amt
	if n > 1 {
		switch {
		case tx.Amt != nil:
			amt = *tx.Amt
		case tx.TxAmt != nil:
			amt = *tx.TxAmt
		default:
			return amt, 0, fmt.Errorf("transaction %d of a batch has no amount", i+1)
		}
	}
	minor, err := parseMinor(amt.Value, amt.Currency)
	return amt, minor, err
}

// txID is the reference people read for the i-th of n transactions: its
// own account servicer reference, unless a bank repeats the entry's on
// every transaction of a batch; then the entry's with the position.
func txID(entryID string, tx xmlTx, i, n int) string {
	id := strings.TrimSpace(tx.Refs.AcctSvcrRef)
	if id == "" || (n > 1 && id == entryID) {
		id = entryID
		if n > 1 && entryID != "" {
			id = fmt.Sprintf("%s/%d", entryID, i+1)
		}
	}
	return id
}

// transactionKey is Credit.Key and Return.Key: what identifies one bank
// transaction on an account across camt.052, camt.053 and camt.054. Its
// parts are the account, the direction (and what kind of booking it is),
// the booking (or value) date, the amount and currency, the transaction's
// own references (AcctSvcrRef, EndToEndId, TxId, InstrId, UETR, where
// given; NOTPROVIDED is none) and its creditor references. Two transfers
// that share a transaction-level AcctSvcrRef but differ in amount stay
// two. Only an entry without any transaction-level reference (no
// TxDtls, or TxDtls without Refs) falls back on the entry's AcctSvcrRef,
// which is then the transaction's own: the bank gives nothing else.
func transactionKey(account, direction string, booked, value time.Time, minor int64, currency string, e xmlEntry, tx xmlTx, creditorRefs []string) string {
	refs := []string{tx.Refs.AcctSvcrRef, tx.Refs.EndToEndId, tx.Refs.TxId, tx.Refs.InstrId, strings.ToLower(tx.Refs.UETR)}
	given := false
	for i, r := range refs {
		r = strings.TrimSpace(r)
		if strings.EqualFold(r, "NOTPROVIDED") {
			r = ""
		}
		refs[i] = r
		given = given || r != ""
	}
	entryRef := ""
	if !given {
		entryRef = strings.TrimSpace(e.AcctSvcrRef)
	}
	parts := append([]string{"transaction/2", direction, entryRef}, refs...)
	parts = append(parts, strings.Join(creditorRefs, " "))
	return creditKey(account, booked, value, minor, currency, parts...)
}

// creditKey is Credit.PreviousKey (and transactionKey's digest): a SHA-256 of its parts (trimmed, the account
// compacted, the date as a date), hex, so that it has one length and no
// separator a reference could forge.
func creditKey(account string, booked, value time.Time, minor int64, currency string, refs ...string) string {
	day := booked
	if day.IsZero() {
		day = value
	}
	date := ""
	if !day.IsZero() {
		date = day.Format(time.DateOnly)
	}
	parts := append([]string{compact(account), date, strconv.FormatInt(minor, 10), strings.ToUpper(strings.TrimSpace(currency))}, refs...)
	h := sha256.New()
	for _, p := range parts {
		p = strings.TrimSpace(p)
		// Length-prefixed, so that no two lists of parts hash alike.
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// parse reads Dt or DtTm; neither: the zero time.
func (d xmlDate) parse() (time.Time, error) {
	switch {
	case strings.TrimSpace(d.Dt) != "":
		return time.Parse(time.DateOnly, strings.TrimSpace(d.Dt))
	case strings.TrimSpace(d.DtTm) != "":
		s := strings.TrimSpace(d.DtTm)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, nil
		}
		// ISO 20022 allows a local time without offset.
		return time.Parse("2006-01-02T15:04:05.999999999", s)
	}
	return time.Time{}, nil
}

// minorDigits is the number of decimals of the currencies that do not have
// two (ISO 4217).
var minorDigits = map[string]int{
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLP": 0, "ISK": 0, "JPY": 0, "KRW": 0, "PYG": 0, "UGX": 0, "VND": 0, "XAF": 0, "XOF": 0,
}

var currencyShape = regexp.MustCompile(`^[A-Z]{3}$`)

var decimalShape = regexp.MustCompile(`^(\d{1,15})(?:\.(\d{1,5}))?$`)

// parseMinor reads an ISO 20022 amount ("184.5") into minor units of its
// currency, refusing more decimals than the currency has.
func parseMinor(s, currency string) (int64, error) {
	currency = strings.TrimSpace(currency)
	if !currencyShape.MatchString(currency) {
		return 0, fmt.Errorf("amount %q has no ISO 4217 currency (Ccy %q)", s, currency)
	}
	m := decimalShape.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("amount %q is not a decimal number", s)
	}
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	frac := strings.TrimRight(m[2], "0")
	if len(frac) > digits {
		return 0, fmt.Errorf("amount %q has more decimals than %s has", s, currency)
	}
	frac += strings.Repeat("0", digits-len(frac))
	n, err := strconv.ParseInt(m[1]+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q is out of range", s)
	}
	return n, nil
}

// latin1Reader reads the ISO-8859-1 some older bank exports declare
// (ISO 20022 asks for UTF-8, which needs no reader).
func latin1Reader(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
	default:
		return nil, fmt.Errorf("character set %q is not supported (use UTF-8)", charset)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var s strings.Builder
	for _, c := range b {
		s.WriteRune(rune(c)) // Latin-1 bytes are the first 256 code points
	}
	return strings.NewReader(s.String()), nil
}
