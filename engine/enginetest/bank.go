package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/payment"
)

// OpenTransfers commits n registrations paying by bank transfer and gives
// their attempts the references, amounts and currencies asked for.
func OpenTransfers(t *testing.T, f *Fixture, want ...banking.Expected) []engine.Payment {
	t.Helper()
	out := make([]engine.Payment, len(want))
	for i, e := range want {
		key := fmt.Sprintf("demo-%d", i+1)
		form, _ := f.Load(key)
		r := f.Start(key, form.People[0].ID)
		r.Commit()
		ps := f.Payments(r.ID)
		if len(ps) != 1 {
			t.Fatalf("%s: %d attempts", key, len(ps))
		}
		if _, err := f.DB.NewUpdate().Model((*engine.Payment)(nil)).Set("provider_id = ?", string(e.Reference)).
			Set("amount_minor = ?", e.AmountMinor).Set("currency = ?", e.Currency).Where("id = ?", ps[0].ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		out[i] = f.Payments(r.ID)[0]
	}
	return out
}

// OrderStatusOf is the status of the order p pays.
func OrderStatusOf(t *testing.T, f *Fixture, p engine.Payment) engine.OrderStatus {
	t.Helper()
	var o engine.Order
	if err := f.DB.NewSelect().Model(&o).Where("id = ?", p.OrderID).Scan(f.Ctx); err != nil {
		t.Fatal(err)
	}
	return o.Status
}

// CamtTx is one transaction of a test bank file: its own references, the
// amount, the direction and the creditor reference (or the return reason).
type CamtTx struct {
	AcctSvcrRef, EndToEnd string
	Minor                 int64
	RF                    string
	ReturnCode            string // a returned direct debit (DBIT, reversal) with this reason
}

// CamtEntry is one entry: its own references (which differ between the
// files that report the same transaction) and one transaction, or a batch.
type CamtEntry struct {
	NtryRef, AcctSvcrRef string
	Txs                  []CamtTx
}

// CamtFile writes a camt.052, camt.053 or camt.054 (version 08) of the
// demo account with the entries as PostFinance and the Nordic banks shape
// them: a notification's entries without NtryRef, a statement's with, a
// batch as one entry with a TxDtls per transaction.
func CamtFile(t *testing.T, message, msgID string, entries ...CamtEntry) banking.Statement {
	t.Helper()
	root, report := map[string][2]string{
		"camt.052": {"BkToCstmrAcctRpt", "Rpt"}, "camt.053": {"BkToCstmrStmt", "Stmt"}, "camt.054": {"BkToCstmrDbtCdtNtfctn", "Ntfctn"},
	}[message][0], map[string]string{"camt.052": "Rpt", "camt.053": "Stmt", "camt.054": "Ntfctn"}[message]
	amount := func(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:%[1]s.001.08"><%[2]s>
<GrpHdr><MsgId>%[3]s</MsgId><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm></GrpHdr>
<%[4]s><Id>%[3]s</Id><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm><Acct><Id><IBAN>%[5]s</IBAN></Id><Ccy>EUR</Ccy></Acct>`, message, root, msgID, report, DemoIBAN)
	for _, e := range entries {
		var total int64
		for _, tx := range e.Txs {
			total += tx.Minor
		}
		ind, rvsl, code := "CRDT", "", "<Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn>"
		if e.Txs[0].ReturnCode != "" {
			ind, rvsl, code = "DBIT", "<RvslInd>true</RvslInd>", "<Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn>"
		}
		fmt.Fprintf(&b, `<Ntry>`)
		if e.NtryRef != "" {
			fmt.Fprintf(&b, `<NtryRef>%s</NtryRef>`, e.NtryRef)
		}
		fmt.Fprintf(&b, `<Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>%s<Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2027-01-19</Dt></BookgDt><ValDt><Dt>2027-01-19</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef><BkTxCd>%s</BkTxCd><NtryDtls>`,
			amount(total), ind, rvsl, e.AcctSvcrRef, code)
		if len(e.Txs) > 1 {
			fmt.Fprintf(&b, `<Btch><NbOfTxs>%d</NbOfTxs></Btch>`, len(e.Txs))
		}
		for _, tx := range e.Txs {
			fmt.Fprintf(&b, `<TxDtls><Refs><AcctSvcrRef>%s</AcctSvcrRef><EndToEndId>%s</EndToEndId></Refs><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>`,
				tx.AcctSvcrRef, tx.EndToEnd, amount(tx.Minor), ind)
			if tx.ReturnCode != "" {
				fmt.Fprintf(&b, `<RtrInf><Rsn><Cd>%s</Cd></Rsn></RtrInf>`, tx.ReturnCode)
			} else {
				fmt.Fprintf(&b, `<RmtInf><Strd><CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>%s</Ref></CdtrRefInf></Strd></RmtInf>`, tx.RF)
			}
			b.WriteString(`</TxDtls>`)
		}
		b.WriteString(`</NtryDtls></Ntry>`)
	}
	fmt.Fprintf(&b, `</%s></%s></Document>`, report, root)
	st, err := banking.ParseStatement(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("parse the test file: %v\n%s", err, b.String())
	}
	return st
}

// DemoIBAN is the account of engine/banking's statement fixtures.
const DemoIBAN = "DE89370400440532013000"

// BankFixture is a fixture whose service takes payment by bank transfer.
func BankFixture(t *testing.T, db *bun.DB, members int) *Fixture {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, members, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	iban, err := banking.ParseIBAN(DemoIBAN)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := banktransfer.New(banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: iban},
		func(ref string, amount int64) string { return "http://portal.test/pay/" + ref + "?reference=" + ref })
	if err != nil {
		t.Fatal(err)
	}
	return &Fixture{T: t, Ctx: context.Background(), DB: db, Svc: engine.NewService(db, bt)}
}

// Capture records a bank transfer's payment c, failing the test on an error.
func (f *Fixture) Capture(c payment.Capture) *payment.CaptureResult {
	f.T.Helper()
	res, err := payment.Of(f.Svc).CapturePayment(f.Ctx, c)
	if err != nil {
		f.T.Fatalf("capture %+v: %v", c, err)
	}
	return res
}

// ReadStatementFixture parses one of engine/banking's test statements.
func ReadStatementFixture(t *testing.T, name string) banking.Statement {
	t.Helper()
	fh, err := os.Open(filepath.Join(testdata(), name))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := banking.ParseStatement(fh)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// testdata is engine/banking's testdata directory, wherever the test runs.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "banking", "testdata")
}
