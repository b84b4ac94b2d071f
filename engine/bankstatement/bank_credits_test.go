package bankstatement_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
)

// TestResolveUnmatchedCredits: an organisation's import keeps the credits
// it cannot match, audited; a treasurer assigns one to a registration (the
// exact amount completes it, once however often the form is posted), one
// short of the amount is captured as a part, one is returned with a note.
// Bad resolutions change nothing; another organisation sees none of them;
// re-importing the statement keeps nothing twice.
func TestResolveUnmatchedCredits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 2)
		var regs []int64
		var amounts []int64
		for i := range 2 {
			key := fmt.Sprintf("demo-%d", i+1)
			form, _ := f.Load(key)
			r := f.Start(key, form.People[0].ID)
			r.Commit()
			regs = append(regs, r.ID)
			amounts = append(amounts, f.Payments(r.ID)[0].AmountMinor)
		}
		org := f.Instance(regs[0]).OrganisationID
		actor := engine.Actor{Name: "treasurer@club.test"}
		day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		st := banking.Statement{Message: "camt.054.001.04", MessageID: "NTF-1", Credits: []banking.Credit{
			{ID: "C-1", Account: enginetest.DemoIBAN, AmountMinor: 123456, Currency: "EUR", BookingDate: day, DebtorName: "Ada Payer",
				DebtorIBAN: "DE02120300000000202051", Unstructured: "Beitrag Familie Payer"},
			{ID: "C-2", Account: enginetest.DemoIBAN, AmountMinor: 100, Currency: "EUR", BookingDate: day, DebtorName: "Bo Stranger"},
			{ID: "C-3", Account: enginetest.DemoIBAN, AmountMinor: 50, Currency: "EUR", BookingDate: day, DebtorName: "Cy Partial"},
		}}
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban, Organisation: org, Actor: &actor})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range rep.Lines {
			if !l.Kept || l.Captured {
				t.Fatalf("line %+v: want kept, not captured", l)
			}
		}
		if n, err := bankstatement.Of(f.Svc).CountUnmatchedCredits(f.Ctx, org); err != nil || n != 3 {
			t.Fatalf("%d unmatched (%v), want 3", n, err)
		}
		if other, err := bankstatement.Of(f.Svc).BankCredits(f.Ctx, bankstatement.CreditQuery{OrganisationID: org + 1000}); err != nil || len(other) != 0 {
			t.Fatalf("another organisation sees %+v (%v)", other, err)
		}
		list, err := bankstatement.Of(f.Svc).BankCredits(f.Ctx, bankstatement.CreditQuery{OrganisationID: org})
		if err != nil || len(list) != 3 {
			t.Fatalf("credits %+v %v", list, err)
		}
		byID := map[string]bankstatement.BankCredit{}
		for _, c := range list {
			byID[c.CreditID] = c
		}
		if c := byID["C-1"]; c.DebtorIBAN != "DE02120300000000202051" || c.Remittance != "Beitrag Familie Payer" || c.State != bankstatement.CreditUnmatched {
			t.Fatalf("kept %+v", c)
		}
		audits := func() int {
			return f.Count((*engine.AuditRecord)(nil), "organisation_id = ? AND target_type = 'bank_credit'", org)
		}
		if n := audits(); n != 3 {
			t.Fatalf("%d audit entries for the kept credits, want 3", n)
		}

		// Change the kept amount of C-1 to the first registration's, as if
		// the member had paid it without a reference.
		if _, err := db.NewUpdate().Model((*bankstatement.BankCredit)(nil)).Set("amount_minor = ?", amounts[0]).
			Where("credit_id = 'C-1'").Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		c1, c2, c3 := byID["C-1"].ID, byID["C-2"].ID, byID["C-3"].ID

		// Bad resolutions change nothing.
		before, beforeAudits := f.State(), audits()
		for name, tc := range map[string]struct {
			org, id int64
			r       bankstatement.CreditResolution
			code    engine.Code
		}{
			"unknown registration": {org, c1, bankstatement.CreditResolution{State: bankstatement.CreditAssigned, Payment: "999999"}, engine.CodeNotFound},
			"no payment named":     {org, c1, bankstatement.CreditResolution{State: bankstatement.CreditAssigned}, engine.CodeInvalid},
			"return without note":  {org, c2, bankstatement.CreditResolution{State: bankstatement.CreditReturned}, engine.CodeInvalid},
			"unknown state":        {org, c2, bankstatement.CreditResolution{State: "kept", Note: "x"}, engine.CodeInvalid},
			"other organisation":   {org + 1000, c2, bankstatement.CreditResolution{State: bankstatement.CreditIgnored, Note: "x"}, engine.CodeNotFound},
			"bad reference":        {org, c1, bankstatement.CreditResolution{State: bankstatement.CreditAssigned, Payment: "RF00NOPE"}, engine.CodeInvalid},
		} {
			_, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, actor, tc.org, tc.id, tc.r)
			if e, ok := engine.AsError(err); !ok || e.Code != tc.code {
				t.Errorf("%s: %v, want %s", name, err, tc.code)
			}
		}
		enginetest.AssertUnchanged(t, before, f.State())
		if n, _ := bankstatement.Of(f.Svc).CountUnmatchedCredits(f.Ctx, org); n != 3 || audits() != beforeAudits {
			t.Fatalf("a bad resolution changed something: %d unmatched, %d audits", n, audits())
		}

		// Assigned to the first registration: captured, completed.
		res, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, actor, org, c1, bankstatement.CreditResolution{State: bankstatement.CreditAssigned,
			Payment: strconv.FormatInt(regs[0], 10), Note: "paid without reference"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Capture == nil || res.Capture.Problem != "" || res.Credit.State != bankstatement.CreditAssigned || res.Credit.PaymentReference == nil {
			t.Fatalf("assigned: %+v", res)
		}
		if inst := f.Instance(regs[0]); inst.Status != engine.StateCompleted {
			t.Fatalf("registration %s after the assignment", inst.Status)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = 'membership_confirmation'"); n != 1 {
			t.Fatalf("%d confirmations, want 1", n)
		}
		var entry engine.AuditRecord
		if err := db.NewSelect().Model(&entry).Where("action = 'credit.assign'").Scan(f.Ctx); err != nil {
			t.Fatalf("no audit entry for the assignment: %v", err)
		}
		if entry.Actor != actor.Name || entry.InstanceID == nil || *entry.InstanceID != regs[0] || entry.TargetID != "C-1" {
			t.Fatalf("audit entry %+v", entry)
		}
		// Posted again: nothing more.
		n := audits()
		again, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, actor, org, c1, bankstatement.CreditResolution{State: bankstatement.CreditAssigned, Payment: strconv.FormatInt(regs[0], 10)})
		if err != nil || !again.Replayed {
			t.Fatalf("assigned twice: %+v %v", again, err)
		}
		if audits() != n || f.Count((*engine.OutboxMessage)(nil), "kind = 'membership_confirmation'") != 1 {
			t.Fatal("a second assignment changed something")
		}
		if _, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, actor, org, c1, bankstatement.CreditResolution{State: bankstatement.CreditReturned, Note: "oops"}); !isCode(err, engine.CodeConflict) {
			t.Fatalf("returning an assigned credit: %v, want conflict", err)
		}

		// Short of the second registration's amount: a part, not completed.
		part, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, actor, org, c3, bankstatement.CreditResolution{State: bankstatement.CreditAssigned,
			Payment: strconv.FormatInt(regs[1], 10)})
		if err != nil || part.Capture.Problem != "partial" {
			t.Fatalf("partial: %+v %v", part, err)
		}
		if inst := f.Instance(regs[1]); inst.Status == engine.StateCompleted {
			t.Fatal("a partial credit completed the registration")
		}

		// Returned with a note.
		ret, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, actor, org, c2, bankstatement.CreditResolution{State: bankstatement.CreditReturned, Note: "not a member; sent back"})
		if err != nil || ret.Credit.State != bankstatement.CreditReturned || ret.Credit.ResolvedBy != actor.Name || ret.Credit.ResolvedAt == nil {
			t.Fatalf("returned: %+v %v", ret, err)
		}
		if n, _ := bankstatement.Of(f.Svc).CountUnmatchedCredits(f.Ctx, org); n != 0 {
			t.Fatalf("%d unmatched after resolving all", n)
		}

		// Re-importing the statement keeps nothing twice.
		again2, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban, Organisation: org, Actor: &actor})
		if err != nil || again2.AlreadyImported != 3 || len(again2.Lines) != 0 {
			t.Fatalf("re-import: %+v %v", again2, err)
		}
		if n := f.Count((*bankstatement.BankCredit)(nil), "1 = 1"); n != 3 {
			t.Fatalf("%d credits kept, want 3", n)
		}
	})
}

func isCode(err error, code engine.Code) bool {
	e, ok := engine.AsError(err)
	return ok && e.Code == code
}
