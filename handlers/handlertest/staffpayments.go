package handlertest

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/handlers/server"
)

// Camt053Return is a statement of account with one returned direct debit
// per end-to-end id, each of amount, with reason code.
func Camt053Return(account, amount, code string, e2e ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>STMT-RET</MsgId><CreDtTm>2027-01-20T06:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>STMT-RET</Id><CreDtTm>2027-01-20T06:00:00Z</CreDtTm><Acct><Id><IBAN>` + account + `</IBAN></Id></Acct>`)
	for i, id := range e2e {
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%[1]s</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2027-01-19</Dt></BookgDt><ValDt><Dt>2027-01-19</Dt></ValDt><AcctSvcrRef>R-%[2]d</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls><Refs><EndToEndId>%[3]s</EndToEndId></Refs><Amt Ccy="EUR">%[1]s</Amt><CdtDbtInd>DBIT</CdtDbtInd>
<RtrInf><Rsn><Cd>%[4]s</Cd></Rsn></RtrInf></TxDtls></NtryDtls></Ntry>`, amount, i+1, id, code)
	}
	b.WriteString(`</Stmt></BkToCstmrStmt></Document>`)
	return []byte(b.String())
}

// LayoutDebitRun stores a prepared collection run with one debit of the
// demo order, written as the engine writes them, for the layout walk:
// the run's page then shows a debit with the longest identifiers a run
// has, its actions, and a debit left out with the longest reason.
func LayoutDebitRun(t *testing.T, db *bun.DB, order engine.Order) int64 {
	t.Helper()
	ctx := t.Context()
	now := clock.Now().UTC()
	// The club collects by direct debit: the runs' page has its form.
	if _, err := settings.Of(engine.NewService(db, nil)).SetPaymentSettings(ctx, order.OrganisationID, settings.PaymentSettingsChange{
		DebitCreditorID: StringPtr("DE98ZZZ09999999999")}); err != nil {
		t.Fatal(err)
	}
	var pay engine.Payment
	if err := db.NewSelect().Model(&pay).Where("order_id = ?", order.ID).Order("id").Limit(1).Scan(ctx); err != nil {
		t.Fatalf("the demo order's payment: %v", err)
	}
	m := &directdebit.DebitMandate{OrganisationID: order.OrganisationID, UserKey: order.UserKey, CreditorID: "DE98ZZZ09999999999",
		Reference: "TVDEMO-MANDATE-000000000000000000001", Holder: "Alexandra Example-Longname", IBAN: "DE02120300000000202051",
		Language: "en", Text: "I authorise the club to collect.", TextVersion: "1", SignedAt: now}
	if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	run := &payment.DebitRun{OrganisationID: order.OrganisationID, MessageID: "DD-1-1", FileVersion: "pain.008.001.08", UntilOn: now.AddDate(0, 0, 14),
		Status: payment.DebitRunPrepared, DebitCount: 1, TotalMinor: order.TotalMinor, Currency: "EUR", File: []byte("<Document/>"),
		CreatedBy: "treasurer@example.org", CreatedAt: now}
	if _, err := db.NewInsert().Model(run).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	d := &payment.Debit{RunID: run.ID, OrganisationID: order.OrganisationID, OrderID: order.ID, PaymentID: pay.ID, MandateID: m.ID,
		EndToEndID: pay.Reference + "-" + strconv.FormatInt(run.ID, 10), AmountMinor: order.TotalMinor, Currency: "EUR",
		DueOn: now.AddDate(0, 0, 14), Sequence: "FRST", Amended: true, Status: payment.DebitInRun}
	if _, err := db.NewInsert().Model(d).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	problem := "it cannot go into a collection file: debtor BIC is required for an account in CH (outside the EEA): " +
		"the member gives the bank's BIC by changing the account on the pay link, or staff revoke the mandate"
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_mandate_id = ?", m.ID).Set("debit_problem = ?", problem).
		Set("debit_problem_run_id = ?", run.ID).Where("id = ?", order.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// StaffCreditor is the account of the staff payments tests.
var StaffCreditor = banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX"}

// NewStaffBankEnv is a StaffEnv whose payments are bank transfers to
// staffCreditor: the environment's account, and with ownAccount also the
// organisation's own (which its staff may import statements of).
func NewStaffBankEnv(t *testing.T, db *bun.DB, ownAccount bool) *StaffEnv {
	t.Helper()
	var base string // known once the server runs, before any registration
	bt, err := banktransfer.New(StaffCreditor, func(ref string, amount int64) string { return server.PaymentLinks(base).PayLink("", ref, amount) })
	if err != nil {
		t.Fatal(err)
	}
	env := NewStaffEnv(t, db, Options{Provider: bt})
	base = env.Server.URL
	if ownAccount {
		prov, name, iban, bic := payment.BankTransferProvider, StaffCreditor.Name, string(StaffCreditor.IBAN), StaffCreditor.BIC
		if _, err := settings.Of(env.Engine).SetPaymentSettings(context.Background(), 1, settings.PaymentSettingsChange{Provider: &prov,
			BankCreditorName: &name, BankIBAN: &iban, BankBIC: &bic}); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// PostFile posts a multipart form with fields and, when name is not "",
// a file of that name, as a browser's upload form does.
func (env *StaffEnv) PostFile(c *http.Client, path string, fields map[string]string, name string, content []byte) Page {
	env.TB.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			env.TB.Fatal(err)
		}
	}
	if name != "" {
		fw, err := w.CreateFormFile("file", name)
		if err != nil {
			env.TB.Fatal(err)
		}
		fw.Write(content)
	}
	w.Close()
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+path, &body)
	if err != nil {
		env.TB.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	return env.Parse(RoundTrip(env.TB, c, req, "Origin", env.Server.URL))
}

// CamtCredit is one incoming transfer of a test notification.
type CamtCredit struct {
	Id, Amount, Ref, Debtor string
}

// Camt054 is a credit notification (camt.054.001.04) of account with the
// credits, as a bank sends it.
func Camt054(account string, credits ...CamtCredit) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.04"><BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>NTF-TEST</MsgId><CreDtTm>2026-11-22T07:00:00Z</CreDtTm></GrpHdr>
<Ntfctn><Id>NTF-1</Id><Acct><Id><IBAN>` + account + `</IBAN></Id></Acct>`)
	for _, c := range credits {
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2026-11-22</Dt></BookgDt><ValDt><Dt>2026-11-22</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef>
<NtryDtls><TxDtls><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><RltdPties><Dbtr><Nm>%s</Nm></Dbtr></RltdPties>
<RmtInf><Strd><CdtrRefInf><Ref>%s</Ref></CdtrRefInf></Strd></RmtInf></TxDtls></NtryDtls></Ntry>`, c.Amount, c.Id, c.Amount, c.Debtor, c.Ref)
	}
	b.WriteString(`</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`)
	return []byte(b.String())
}

// UnpaidDemoOrder registers the demo household with bank transfer and
// returns its order and the RF reference members transfer with.
func (env *StaffEnv) UnpaidDemoOrder() (engine.Order, banking.Reference) {
	env.TB.Helper()
	f := env.CompleteDemo(env.NewClient())
	if f.ProcessState != "DONE" {
		env.TB.Fatalf("commit: %s", f.ProcessState)
	}
	var order engine.Order
	if err := env.DB.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Scan(env.TB.Context()); err != nil {
		env.TB.Fatal(err)
	}
	rf, err := banking.CreditorReference(order.PayReference)
	if err != nil {
		env.TB.Fatal(err)
	}
	return order, rf
}

// AuditActions are the organisation's audit actions, newest first.
func (env *StaffEnv) AuditActions(action string) int {
	env.TB.Helper()
	n, err := env.DB.NewSelect().Model((*engine.AuditRecord)(nil)).Where("action = ?", action).Count(env.TB.Context())
	if err != nil {
		env.TB.Fatal(err)
	}
	return int(n)
}

// OrderStatus reads an order's status.
func (env *StaffEnv) OrderStatus(id int64) engine.OrderStatus {
	env.TB.Helper()
	var o engine.Order
	if err := env.DB.NewSelect().Model(&o).Where("id = ?", id).Scan(env.TB.Context()); err != nil {
		env.TB.Fatal(err)
	}
	return o.Status
}

// PDFText is the text of a PDF, page after page.
func PDFText(t *testing.T, b []byte) string {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a PDF: %v", err)
	}
	var out strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		s, err := r.Page(i).GetPlainText(nil)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(s)
	}
	return strings.ReplaceAll(out.String(), "\u00a0", " ")
}

// CSVFigure finds the value of item's measure in a section of the
// report's CSV.
func CSVFigure(recs [][]string, section, item, measure string) (string, bool) {
	for _, r := range recs {
		if len(r) == 5 && r[0] == section && r[1] == item && r[2] == measure {
			return r[3], true
		}
	}
	return "", false
}
