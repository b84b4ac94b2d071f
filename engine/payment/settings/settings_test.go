package settings_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/registration"
	"portal/engine/staff"
)

// TestPaymentSettingsValidatedAndSealed: every problem is named by its
// field and changes nothing; Stripe keys are stored sealed (bound to the
// organisation and field) and only the provider directory sees them in
// clear; "" returns the organisation to the environment's provider.
func TestPaymentSettingsValidatedAndSealed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := demodata.SeedDemo(ctx, db, 0, clock.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		var changed []int64
		svc := engine.NewService(db, nil, engine.WithSecretSealer(enginetest.Sealer{}),
			payment.WithPaymentSettingsChanged(func(org int64) { changed = append(changed, org) }))
		other, err := organisation.Of(svc).CreateOrganisation(ctx, organisation.OrganisationChange{Name: enginetest.Str("Lakeside"), Slug: enginetest.Str("lakeside")})
		if err != nil {
			t.Fatal(err)
		}

		for _, tc := range []struct {
			name   string
			change settings.PaymentSettingsChange
			fields []string
		}{
			{"unknown provider", settings.PaymentSettingsChange{Provider: enginetest.Str("paypal")}, []string{"provider"}},
			{"test gateway not allowed", settings.PaymentSettingsChange{Provider: enginetest.Str("test")}, []string{"provider"}},
			{"stripe without keys", settings.PaymentSettingsChange{Provider: enginetest.Str("stripe")}, []string{"stripeSecretKey", "stripeWebhookSecret"}},
			{"stripe with wrong keys", settings.PaymentSettingsChange{Provider: enginetest.Str("stripe"), StripeSecretKey: enginetest.Str("pk_test_public"), StripeWebhookSecret: enginetest.Str("secret")},
				[]string{"stripeSecretKey", "stripeWebhookSecret"}},
			{"bank transfer without an account", settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer")}, []string{"bankIban"}},
			{"bad check digits", settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer"), BankCreditorName: enginetest.Str("Riverside RC"), BankIBAN: enginetest.Str("DE00 3704 0044 0532 0130 00")}, []string{"bankIban"}},
			{"swiss account without address, no name", settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer"), BankIBAN: enginetest.Str("CH93 0076 2011 6238 5295 7")},
				[]string{"bankCreditorName", "bankCreditorAddress"}},
			{"bad BIC and address", settings.PaymentSettingsChange{BankCreditorName: enginetest.Str("Riverside RC"), BankIBAN: enginetest.Str("DE89370400440532013000"), BankBIC: enginetest.Str("NOTABIC"), BankCreditorAddress: enginetest.Str("Main Street 1")},
				[]string{"bankBic", "bankCreditorAddress"}},
		} {
			_, err := settings.Of(svc).SetPaymentSettings(ctx, 1, tc.change)
			got := enginetest.FieldsOf(t, err)
			for _, want := range tc.fields {
				if !strings.Contains(strings.Join(got, ","), want) {
					t.Errorf("%s: fields %v, want %s", tc.name, got, want)
				}
			}
		}
		if v, err := settings.Of(svc).PaymentSettings(ctx, 1); err != nil || v.UpdatedAt != nil || v.Provider != "" {
			t.Fatalf("a refused change stored settings: %+v %v", v, err)
		}
		if len(changed) != 0 {
			t.Fatalf("told of a change that was refused: %v", changed)
		}

		v, err := settings.Of(svc).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{Provider: enginetest.Str("stripe"),
			StripeSecretKey: enginetest.Str("sk_test_riverside"), StripeWebhookSecret: enginetest.Str("whsec_riverside")})
		if err != nil {
			t.Fatal(err)
		}
		if v.Provider != "stripe" || !v.StripeSecretKeySet || !v.StripeWebhookSecretSet || v.UpdatedAt == nil {
			t.Fatalf("view %+v", v)
		}
		var row payment.PaymentSettings
		if err := db.NewSelect().Model(&row).Where("organisation_id = 1").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(row.StripeSecretKeySealed, "sk_test_riverside") || strings.Contains(row.StripeWebhookSecretSealed, "whsec_riverside") || row.StripeSecretKeySealed == "" {
			t.Fatalf("keys stored in clear: %+v", row)
		}
		// Bank details beside Stripe, with a spaced IBAN; the keys stay.
		if _, err := settings.Of(svc).SetPaymentSettings(ctx, other.ID, settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer"),
			BankCreditorName: enginetest.Str("Lakeside TC"), BankIBAN: enginetest.Str("de89 3704 0044 0532 0130 00")}); err != nil {
			t.Fatal(err)
		}
		cfgs, err := settings.Of(svc).OrganisationPaymentConfigs(ctx)
		if err != nil || len(cfgs) != 2 {
			t.Fatalf("configs %+v %v", cfgs, err)
		}
		if c := cfgs[0]; c.OrganisationID != 1 || c.StripeSecretKey != "sk_test_riverside" || c.StripeWebhookSecret != "whsec_riverside" || c.Err != nil {
			t.Fatalf("riverside's config %+v", c)
		}
		if c := cfgs[1]; c.Provider != "bank_transfer" || string(c.Creditor.IBAN) != "DE89370400440532013000" || c.Err != nil {
			t.Fatalf("lakeside's config %+v", c)
		}
		if len(changed) != 2 || changed[0] != 1 || changed[1] != other.ID {
			t.Fatalf("told of changes %v", changed)
		}

		// A sealed key copied onto another organisation does not open there.
		if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("provider = 'stripe'").
			Set("stripe_secret_key_sealed = ?", row.StripeSecretKeySealed).Set("stripe_webhook_secret_sealed = ?", row.StripeWebhookSecretSealed).
			Where("organisation_id = ?", other.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		cfgs, _ = settings.Of(svc).OrganisationPaymentConfigs(ctx)
		if cfgs[1].Err == nil || cfgs[1].StripeSecretKey != "" {
			t.Fatalf("a copied key opened: %+v", cfgs[1])
		}

		// Another organisation's scope sees none of it.
		scoped := engine.WithOrganisation(ctx, other.ID)
		if _, err := settings.Of(svc).PaymentSettings(scoped, 1); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another organisation's settings: %v", err)
		}
		if _, err := settings.Of(svc).SetPaymentSettings(scoped, 1, settings.PaymentSettingsChange{Provider: enginetest.Str("")}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("changing another organisation's settings: %v", err)
		}

		// "" returns to the environment's provider.
		if _, err := settings.Of(svc).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{Provider: enginetest.Str("")}); err != nil {
			t.Fatal(err)
		}
		if cfgs, _ = settings.Of(svc).OrganisationPaymentConfigs(ctx); len(cfgs) != 1 || cfgs[0].OrganisationID != other.ID {
			t.Fatalf("configs after returning to the default: %+v", cfgs)
		}

		// Without a sealer no keys can be given.
		_, err = settings.Of(engine.NewService(db, nil)).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{StripeSecretKey: enginetest.Str("sk_test_x")})
		if got := enginetest.FieldsOf(t, err); len(got) != 1 || got[0] != "stripeSecretKey" {
			t.Fatalf("keys without a sealer: %v", got)
		}
	})
}

// TestOrganisationProviderUsedEverywhere: an organisation with a provider
// of its own commits, resets and settles with it, never with the
// environment's; its events are taken only at its own address and the
// environment's account cannot settle its attempts.
func TestOrganisationProviderUsedEverywhere(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		own := &enginetest.FakeProvider{Retrievals: map[string]engine.PaymentConfirmation{}}
		f, envProvider := enginetest.OnlineFixture(t, db, payment.WithPaymentProviders(func(org int64) engine.PaymentProvider {
			if org == 1 {
				return own
			}
			return nil
		}))
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		link := r.Commit().PaymentURL
		ref := f.AttemptOf(link)
		if len(own.Created) != 1 || len(envProvider.Created) != 0 {
			t.Fatalf("checkouts: own %d, environment's %d; want the organisation's", len(own.Created), len(envProvider.Created))
		}
		if _, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID); err != nil {
			t.Fatal(err)
		}
		if !enginetest.Contains(own.Expired, ref) || len(envProvider.Expired) != 0 {
			t.Fatalf("reset closed own %v, environment's %v", own.Expired, envProvider.Expired)
		}

		r = f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref = f.AttemptOf(r.Commit().PaymentURL)
		payload := []byte(`{"Reference":"` + ref + `","Outcome":"success","AmountMinor":18450,"Currency":"EUR","EventID":"evt_org","EventType":"test.success"}`)
		// The environment's account (its webhook) cannot settle it.
		if _, err := payment.Of(f.Svc).ReceivePaymentEvent(f.Ctx, "fake", payload, "good"); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("environment's event for an organisation's attempt: %v", err)
		}
		// Another organisation's address cannot either.
		if _, err := payment.Of(f.Svc).ReceiveOrganisationPaymentEvent(f.Ctx, 2, "fake", payload, "good"); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another organisation's address: %v", err)
		}
		if _, err := payment.Of(f.Svc).ReceiveOrganisationPaymentEvent(f.Ctx, 1, "fake", payload, "forged"); engine.ErrorCode(err) != engine.CodeInvalid {
			t.Fatalf("forged event: %v", err)
		}
		res, err := payment.Of(f.Svc).ReceiveOrganisationPaymentEvent(f.Ctx, 1, "fake", payload, "good")
		if err != nil || res.Outcome != engine.OutcomeSuccess || res.Replayed {
			t.Fatalf("organisation's event: %+v %v", res, err)
		}
		if o := f.Orders(r.ID); o[len(o)-1].Status != engine.OrderPaid {
			t.Fatalf("order %s after its organisation's event", o[len(o)-1].Status)
		}
	})
}

// TestBankRefundOwedByHand: a bank transfer arriving for an order a reset
// cancelled is owed back by hand: listed for staff, never sent to a
// provider, and marked paid back once.
func TestBankRefundOwedByHand(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		orderRef := f.OrderRefOf(r.Commit().PaymentURL)
		p := f.Payments(r.ID)[0]
		if _, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID); err != nil {
			t.Fatal(err)
		}
		// The member had already sent the transfer.
		res := f.Capture(payment.Capture{Reference: orderRef, AmountMinor: p.AmountMinor, ID: "credit-1"})
		if !res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("transfer for a cancelled order: %+v", res)
		}
		if n := f.RunJobs(); n != 0 {
			t.Fatalf("%d refund jobs for a bank transfer", n)
		}
		list, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{Limit: 10})
		if err != nil || len(list) != 1 || !list[0].RefundByHand || list[0].Reason != staff.AttentionSecondPayment || list[0].Order.PayReference != orderRef || list[0].Payment.Reference != p.Reference {
			t.Fatalf("attention %+v %v", list, err)
		}
		if l, err := staff.Of(f.Svc).PaymentsNeedingAttention(engine.WithOrganisation(f.Ctx, 2), staff.AttentionQuery{Limit: 10}); err != nil || len(l) != 0 {
			t.Fatalf("another organisation sees %+v %v", l, err)
		}
		if _, err := payment.Of(f.Svc).MarkRefundPaidBack(engine.WithOrganisation(f.Ctx, 2), p.Reference, ""); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another organisation marks it: %v", err)
		}
		// The reconciliation no longer asks anyone to refund it.
		if rep, err := payment.Of(f.Svc).ReconcilePayments(f.Ctx, 0, 10); err != nil || rep.Refunded != 0 {
			t.Fatalf("reconcile %+v %v", rep, err)
		}
		paid, err := payment.Of(f.Svc).MarkRefundPaidBack(f.Ctx, orderRef, "transferred 2026-11-24")
		if err != nil || paid.RefundStatus != engine.RefundDone || paid.RefundedAt == nil || paid.RefundNote != "transferred 2026-11-24" {
			t.Fatalf("marked: %+v %v", paid, err)
		}
		if _, err := payment.Of(f.Svc).MarkRefundPaidBack(f.Ctx, p.Reference, ""); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("marked twice: %v", err)
		}
		if list, _ := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{Limit: 10}); len(list) != 0 {
			t.Fatalf("still listed: %+v", list)
		}
	})
}

// TestStatementImportPerAccount: a statement of a club's own account
// matches only that club's open transfers, and the environment's account
// only those of clubs without one: a credit without a reference never
// pays another club's order of the same amount.
func TestStatementImportPerAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.Commit()
		p := f.Payments(r.ID)[0]
		club, err := organisation.Of(f.Svc).CreateOrganisation(f.Ctx, organisation.OrganisationChange{Name: enginetest.Str("Lakeside"), Slug: enginetest.Str("lakeside")})
		if err != nil {
			t.Fatal(err)
		}
		const clubIBAN = "CH9300762011623852957"
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, club.ID, settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer"),
			BankCreditorName: enginetest.Str("Lakeside TC"), BankIBAN: enginetest.Str(clubIBAN), BankCreditorAddress: enginetest.Str("Seestrasse;1;8800;Thalwil;CH")}); err != nil {
			t.Fatal(err)
		}
		credit := func(account string) banking.Statement {
			return banking.Statement{MessageID: "S", Credits: []banking.Credit{{ID: "c-" + account, Account: account, AmountMinor: p.AmountMinor,
				Currency: p.Currency, Unstructured: "Mitgliedsbeitrag", BookingDate: clock.Now()}}}
		}
		clubRep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, credit(clubIBAN), engine.StatementOptions{Account: clubIBAN, Organisation: club.ID, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if l := clubRep.Lines[0]; l.Outcome != banking.OutcomeUnknown || l.RF != "" {
			t.Fatalf("a club's statement matched another club's order: %+v", l)
		}
		envRep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, credit(enginetest.DemoIBAN), engine.StatementOptions{Account: enginetest.DemoIBAN, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if l := envRep.Lines[0]; l.Outcome != banking.OutcomeByAmount || string(l.RF) != enginetest.Deref(p.ProviderID) {
			t.Fatalf("the environment's statement: %+v", l)
		}
	})
}

// TestPartialTransferOwedAfterReset: part of the amount arrived, then the
// registration was reset: the part received is owed back by hand, listed
// for staff, not lost with the cancelled attempt.
func TestPartialTransferOwedAfterReset(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		orderRef := f.OrderRefOf(r.Commit().PaymentURL)
		p := f.Payments(r.ID)[0]
		if res := f.Capture(payment.Capture{Reference: orderRef, AmountMinor: p.AmountMinor / 2, ID: "credit-half"}); res.Problem != "partial" {
			t.Fatalf("half the amount: %+v", res)
		}
		if _, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID); err != nil {
			t.Fatal(err)
		}
		list, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{Limit: 10})
		if err != nil || len(list) != 1 || !list[0].RefundByHand || list[0].Payment.Reference != p.Reference {
			t.Fatalf("attention after the reset %+v %v", list, err)
		}
		if paid, err := payment.Of(f.Svc).MarkRefundPaidBack(f.Ctx, orderRef, "half returned"); err != nil || paid.RefundStatus != engine.RefundDone {
			t.Fatalf("marked: %+v %v", paid, err)
		}
	})
}
