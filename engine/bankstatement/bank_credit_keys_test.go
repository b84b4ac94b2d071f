package bankstatement_test

import (
	"testing"
	"time"

	"portal/engine/enginetest"
	"portal/engine/payment/settings"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/staff"
)

// sampleRF is the RF reference the Finnish samples write, whose check
// digits do not hold (no portal would issue it); the tests put a valid
// one in its place, leaving the rest of each file as published.
const sampleRF = "RF98123456789012"

// withReference replaces sampleRF in the credits with rf.
func withReference(st banking.Statement, rf string) banking.Statement {
	for i, c := range st.Credits {
		for j, r := range c.References {
			if r == sampleRF {
				st.Credits[i].References[j] = rf
			}
		}
	}
	return st
}

// A capture by hand whose id reads like a bank's ("credit:X") never makes
// the bank's credit X read as imported before.
func TestManualCaptureIDNeverStandsForABankCredit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 2)
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, Currency: "EUR"},
			banking.Expected{Reference: "RF32PRBRAVO2345BRAVO234", AmountMinor: 9000, Currency: "EUR"})
		f.Capture(payment.Capture{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, ID: "credit:2026110300001"})
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		st := banking.Statement{Message: "camt.053.001.08", MessageID: "S-1", Credits: []banking.Credit{{ID: "2026110300001",
			Account: enginetest.DemoIBAN, AmountMinor: 9000, Currency: "EUR", References: []string{"RF32PRBRAVO2345BRAVO234"},
			BookingDate: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)}}}
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		if rep.AlreadyImported != 0 || len(rep.Lines) != 1 || !rep.Lines[0].Completed {
			t.Fatalf("the bank's credit: %d imported before, lines %+v", rep.AlreadyImported, rep.Lines)
		}
		if enginetest.OrderStatusOf(t, f, ps[1]) != engine.OrderPaid {
			t.Fatal("the order the bank's credit pays is not paid")
		}
		// The same capture by hand again is still known.
		if res := f.Capture(payment.Capture{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, ID: "credit:2026110300001"}); !res.Replayed {
			t.Fatalf("the capture by hand again: %+v", res)
		}
	})
}

// Two clubs' banks number their entries alike: club B's credit with the
// id of a credit club A imported is B's own.
func TestBankCreditIDsPerClubAndAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 2)
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, Currency: "EUR"},
			banking.Expected{Reference: "RF32PRBRAVO2345BRAVO234", AmountMinor: 18450, Currency: "EUR"})
		club, err := organisation.Of(f.Svc).CreateOrganisation(f.Ctx, organisation.OrganisationChange{Name: enginetest.Str("Lakeside"), Slug: enginetest.Str("lakeside")})
		if err != nil {
			t.Fatal(err)
		}
		const clubIBAN = "CH9300762011623852957"
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, club.ID, settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer"),
			BankCreditorName: enginetest.Str("Lakeside TC"), BankIBAN: enginetest.Str(clubIBAN), BankCreditorAddress: enginetest.Str("Seestrasse;1;8800;Thalwil;CH")}); err != nil {
			t.Fatal(err)
		}
		// The second order is the club's, paid to its own account.
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("organisation_id = ?", club.ID).Where("id = ?", ps[1].OrderID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("account = ''").Where("id = ?", ps[1].ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
		credit := func(account, rf string) banking.Statement {
			return banking.Statement{Message: "camt.053.001.08", MessageID: "S-" + account, Credits: []banking.Credit{{ID: "0000001",
				Account: account, AmountMinor: 18450, Currency: "EUR", References: []string{rf}, BookingDate: day}}}
		}
		demo, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		repA, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, withKeys(credit(enginetest.DemoIBAN, "RF48PRALPHA2345ALPHA234")), engine.StatementOptions{Account: demo})
		if err != nil || len(repA.Lines) != 1 || !repA.Lines[0].Completed {
			t.Fatalf("the environment's import: %v %+v", err, repA)
		}
		clubAccount, _ := banking.ParseIBAN(clubIBAN)
		repB, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, withKeys(credit(clubIBAN, "RF32PRBRAVO2345BRAVO234")),
			engine.StatementOptions{Account: clubAccount, Organisation: club.ID})
		if err != nil {
			t.Fatal(err)
		}
		if repB.AlreadyImported != 0 || len(repB.Lines) != 1 || !repB.Lines[0].Completed || repB.Lines[0].Err != nil {
			t.Fatalf("the club's credit with the same bank id: %d imported before, %+v", repB.AlreadyImported, repB.Lines)
		}
		if enginetest.OrderStatusOf(t, f, ps[1]) != engine.OrderPaid {
			t.Fatal("the club's order is not paid")
		}
	})
}

// withKeys gives hand-made credits the key a file would (the bank id
// alone would hide the bug the test is for: keys differ by account).
func withKeys(st banking.Statement) banking.Statement {
	for i := range st.Credits {
		st.Credits[i].Key = ""
	}
	return st
}

// PostFinance repeats one AcctSvcrRef on two credits of other amounts:
// both are captured, and a second import finds both.
func TestSharedAcctSvcrRefBothCaptured(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 2)
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: "RF18539007547034", AmountMinor: 153700, Currency: "CHF"},
			banking.Expected{Reference: "RF712348231", AmountMinor: 169222, Currency: "CHF"})
		st := enginetest.ReadStatementFixture(t, "postfinance_shared_acctsvcrref.xml")
		account, _ := banking.ParseIBAN("CH7609000000123456789")
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: account})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Lines) != 2 {
			t.Fatalf("lines %+v", rep.Lines)
		}
		for _, l := range rep.Lines {
			if !l.Completed || l.Err != nil {
				t.Fatalf("credit %s of %d: %s (%s) completed=%v err=%v", l.Credit.ID, l.Credit.AmountMinor, l.Outcome, l.Reason, l.Completed, l.Err)
			}
		}
		for _, p := range ps {
			if enginetest.OrderStatusOf(t, f, p) != engine.OrderPaid {
				t.Fatalf("order of %s not paid", enginetest.Deref(p.ProviderID))
			}
		}
		before := f.State()
		again, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: account})
		if err != nil || again.AlreadyImported != 2 || len(again.Lines) != 0 {
			t.Fatalf("re-import: %v %+v", err, again)
		}
		enginetest.AssertUnchanged(t, before, f.State())
	})
}

// The Finnish banks' public sample statement: ARCH07 pays the order, ARCH08
// (the same RF reference again) is a second payment, owed back and listed
// for staff; a second import changes nothing.
func TestPublicStatementSampleImported(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 1)
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 545500, Currency: "CHF"})
		st := withReference(enginetest.ReadStatementFixture(t, "public/fffs_camt053.xml"), "RF48PRALPHA2345ALPHA234")
		account, err := banking.ParseIBAN("FI7433010001222090")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: account})
		if err != nil {
			t.Fatal(err)
		}
		var completed, second int
		for _, l := range rep.Lines {
			switch {
			case l.Completed && l.Credit.ID == "091029ACCTSTMTARCH07":
				completed++
			case l.SecondCredit && l.Credit.ID == "091029ACCTSTMTARCH08" && l.Outcome == banking.OutcomeSecond:
				second++
			}
		}
		if completed != 1 || second != 1 || enginetest.OrderStatusOf(t, f, ps[0]) != engine.OrderPaid {
			t.Fatalf("lines %+v", rep.Lines)
		}
		owed, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{})
		if err != nil || len(owed) != 1 || owed[0].Reason != staff.AttentionSecondPayment || !owed[0].RefundByHand || owed[0].Payment.AmountMinor != 1000000 {
			t.Fatalf("attention: %v %+v", err, owed)
		}
		before := f.State()
		again, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: account})
		if err != nil || again.AlreadyImported != len(rep.Lines) || len(again.Lines) != 0 {
			t.Fatalf("re-import: %v %+v", err, again)
		}
		enginetest.AssertUnchanged(t, before, f.State())
	})
}

// An intraday report (camt.052) is read as a statement: its booked credit
// completes the registration it pays; its pending entry is not captured.
func TestPublicAccountReportImported(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 1)
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 10000, Currency: "EUR"})
		st := withReference(enginetest.ReadStatementFixture(t, "public/fffs_camt052.xml"), "RF48PRALPHA2345ALPHA234")
		account, _ := banking.ParseIBAN("FI7433010001222090")
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: account})
		if err != nil {
			t.Fatal(err)
		}
		if rep.NotCredits != 1 || len(rep.Lines) != 1 || !rep.Lines[0].Completed || enginetest.OrderStatusOf(t, f, ps[0]) != engine.OrderPaid {
			t.Fatalf("report: %+v", rep)
		}
	})
}

// A second transfer for an order paid before the import arrives: owed
// back and listed, as the same captured by hand.
func TestSecondTransferByImportOwedBack(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 1)
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, Currency: "EUR"})
		f.Capture(payment.Capture{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450})
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		st := banking.Statement{Message: "camt.053.001.08", MessageID: "S-2", Credits: []banking.Credit{{ID: "2026111400009",
			Account: enginetest.DemoIBAN, AmountMinor: 18450, Currency: "EUR", References: []string{"RF48 PRAL PHA2 345A LPHA 234"},
			BookingDate: time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)}}}
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		if l := rep.Lines[0]; l.Outcome != banking.OutcomeSecond || !l.SecondCredit || l.Kept || l.Err != nil {
			t.Fatalf("line %+v", l)
		}
		owed, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{})
		if err != nil || len(owed) != 1 || owed[0].Reason != staff.AttentionSecondPayment || owed[0].Payment.OrderID != ps[0].OrderID {
			t.Fatalf("attention: %v %+v", err, owed)
		}
		if n := f.Count((*bankstatement.BankCredit)(nil), "1 = 1"); n != 0 {
			t.Fatalf("%d credits kept as unmatched as well", n)
		}
	})
}
