package messages_test

import (
	"fmt"
	"mime"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
)

// TestDebitReturnMailInTheMembersLanguage: over SMTP, a member whose
// direct debit came back (AC04, with the club's fee of 3.50) is told in
// the language they registered in: the bank's reason in words, the amount
// returned, the fee, what is owed now, that the mandate ended, and the
// stable pay link.
func TestDebitReturnMailInTheMembersLanguage(t *testing.T) {
	const iban = "DE89370400440532013000"
	for _, tc := range []struct {
		code, subject string
		wants         []string
	}{
		{"de", "Riverside Rowing Club: Ihre Lastschrift wurde zurückgegeben",
			[]string{"Ihre Bank hat die Lastschrift über", "das Konto ist aufgelöst", "3,50\u00a0EUR", "Ihr Lastschriftmandat für dieses Konto ist beendet",
				"ein anderes Konto angeben"}},
		{"fr", "Riverside Rowing Club : votre prélèvement a été rejeté",
			[]string{"Votre banque a rejeté le prélèvement de", "le compte est clôturé", "3,50\u00a0EUR", "Votre mandat de prélèvement pour ce compte a pris fin",
				"choisir un autre moyen de paiement"}},
	} {
		t.Run(tc.code, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := t.Context()
				e := newEnv(t, db)
				svc := e.demo.Svc
				form := e.demo.Commit(alex, robin)
				if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = ?", tc.code).Where("id = ?", form.ProcessID).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				res := e.demo.Pay(form)
				if n := e.work(t); n != 1 {
					t.Fatalf("ran %d jobs, want the confirmation", n)
				}
				// The club collects by direct debit to its own account, and
				// this order's payment was a debit of a run sent to the bank.
				if _, err := settings.Of(svc).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{BankCreditorName: strPtr("Riverside Rowing Club"), BankIBAN: strPtr(iban),
					Methods: &[]string{"bank_transfer", payment.DirectDebitProvider}, DebitCreditorID: strPtr("DE98ZZZ09999999999")}); err != nil {
					t.Fatal(err)
				}
				if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("debit_return_fee_minor = 350").Where("organisation_id = 1").Exec(ctx); err != nil {
					t.Fatal(err)
				}
				now := clock.Now().UTC()
				m := &directdebit.DebitMandate{OrganisationID: 1, UserKey: engine.DemoUserKey, CreditorID: "DE98ZZZ09999999999", Reference: "RRC-1",
					Holder: "Alex Morgan", IBAN: "DE02120300000000202051", Language: tc.code, Text: "…", TextVersion: "v", SignedAt: now}
				run := &payment.DebitRun{OrganisationID: 1, MessageID: "DD-1-1", FileVersion: "pain.008.001.08", UntilOn: now, Status: payment.DebitRunSent,
					DebitCount: 1, Currency: "EUR", File: []byte("<Document/>"), CreatedBy: "test", CreatedAt: now, SentAt: &now}
				for _, row := range []any{m, run} {
					if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
				var pay engine.Payment
				if err := db.NewSelect().Model(&pay).Where("reference = ?", res.Reference).Scan(ctx); err != nil {
					t.Fatal(err)
				}
				debit := &payment.Debit{RunID: run.ID, OrganisationID: 1, OrderID: res.Order.ID, PaymentID: pay.ID, MandateID: m.ID, EndToEndID: "E2E-MAIL-1",
					AmountMinor: pay.AmountMinor, Currency: pay.Currency, DueOn: now, Sequence: banking.SequenceFirst, Status: payment.DebitCollected}
				if _, err := db.NewInsert().Model(debit).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				amount := fmt.Sprintf("%d.%02d", pay.AmountMinor/100, pay.AmountMinor%100)
				st, err := banking.ParseStatement(strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>STMT-MAIL</MsgId><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm></GrpHdr>
<Stmt><Id>STMT-MAIL</Id><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm><Acct><Id><IBAN>` + iban + `</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Ntry><Amt Ccy="EUR">` + amount + `</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2027-01-19</Dt></BookgDt><ValDt><Dt>2027-01-19</Dt></ValDt><AcctSvcrRef>RET-1</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls><Refs><EndToEndId>E2E-MAIL-1</EndToEndId></Refs><Amt Ccy="EUR">` + amount + `</Amt><CdtDbtInd>DBIT</CdtDbtInd>
<RtrInf><Rsn><Cd>AC04</Cd></Rsn></RtrInf></TxDtls></NtryDtls></Ntry></Stmt></BkToCstmrStmt></Document>`))
				if err != nil {
					t.Fatal(err)
				}
				rep, err := bankstatement.Of(svc).ImportStatement(ctx, st, engine.StatementOptions{Account: banking.IBAN(iban), Organisation: 1})
				if err != nil || len(rep.Returns) != 1 || !rep.Returns[0].Reversed {
					t.Fatalf("import: %+v %v", rep, err)
				}
				e.work(t)
				var got []string
				var parts map[string]string
				for _, r := range e.srv.Wait(t, 2) {
					h, p := decoded(t, r.Data)
					subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
					got = append(got, subject)
					if subject == tc.subject {
						parts = p
					}
				}
				if parts == nil {
					t.Fatalf("subjects %q, want %q", got, tc.subject)
				}
				owed := strings.Replace(engine.FormatAmount(res.Order.TotalMinor+350), ".", ",", 1) + "\u00a0EUR"
				for _, part := range []string{"text/plain", "text/html"} {
					for _, want := range append(tc.wants, owed, "/pay/"+res.Order.PayReference) {
						if !strings.Contains(parts[part], want) {
							t.Errorf("%s part lacks %q:\n%s", part, want, parts[part])
						}
					}
					for _, english := range []string{"Hello", "came back", "account is closed", "Pay now"} {
						if strings.Contains(parts[part], english) {
							t.Errorf("%s part has the English %q", part, english)
						}
					}
				}
			})
		})
	}
}

func strPtr(s string) *string { return &s }
