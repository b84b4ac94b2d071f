package organisation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/payment/settings"
	"portal/engine/staff"
)

// auditOf lists an organisation's audit rows of one action, oldest first.
func auditOf(t *testing.T, svc *engine.Service, orgID int64, action string) []engine.AuditRecord {
	t.Helper()
	rows, err := svc.AuditLog(context.Background(), engine.AuditQuery{OrganisationID: orgID, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	var out []engine.AuditRecord
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Action == action {
			out = append(out, rows[i])
		}
	}
	return out
}

// TestStaffSettingsAudited: the setup page's changes of payment and
// message settings, membership types and languages are audited with
// before and after; a secret is never in the log, but its rotation shows
// as a changed fingerprint; a refused change writes neither the change
// nor an entry.
func TestStaffSettingsAudited(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := demodata.SeedDemo(ctx, db, 0, clock.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		svc := engine.NewService(db, nil, engine.WithSecretSealer(enginetest.Sealer{}))
		admin := engine.Actor{Name: "admin@example.org"}
		const key1, key2, hook = "sk_test_firstsecretkey", "sk_test_secondsecretkey", "whsec_hooksecret"

		// Payment settings: refused as a whole, then set, then the key rotated.
		_, err := settings.Of(svc).StaffSetPaymentSettings(ctx, admin, 1, settings.PaymentSettingsChange{Provider: enginetest.PtrTo("stripe"),
			StripeSecretKey: enginetest.PtrTo(key1), StripeWebhookSecret: enginetest.PtrTo(hook), BankIBAN: enginetest.PtrTo("DE00 0000 0000 0000 0000 00"), BankCreditorName: enginetest.PtrTo("RRC")})
		if f := enginetest.FieldsOf(t, err); !strings.Contains(strings.Join(f, ","), "bankIban") {
			t.Fatalf("a bad IBAN: fields %v", f)
		}
		if n := len(auditOf(t, svc, 1, "payment_settings.update")); n != 0 {
			t.Fatalf("a refused change was audited (%d)", n)
		}
		if v, _ := settings.Of(svc).PaymentSettings(ctx, 1); v.Provider != "" || v.StripeSecretKeySet {
			t.Fatalf("a refused change was stored: %+v", v)
		}
		for _, key := range []string{key1, key2} {
			if _, err := settings.Of(svc).StaffSetPaymentSettings(ctx, admin, 1, settings.PaymentSettingsChange{Provider: enginetest.PtrTo("stripe"),
				StripeSecretKey: enginetest.PtrTo(key), StripeWebhookSecret: enginetest.PtrTo(hook)}); err != nil {
				t.Fatal(err)
			}
		}
		entries := auditOf(t, svc, 1, "payment_settings.update")
		if len(entries) != 2 {
			t.Fatalf("%d payment settings entries, want 2", len(entries))
		}
		for _, e := range entries {
			for _, secret := range []string{key1, key2, hook, "sealed."} {
				if strings.Contains(e.BeforeJSON+e.AfterJSON, secret) {
					t.Fatalf("a secret in the audit log: %s %s", e.BeforeJSON, e.AfterJSON)
				}
			}
		}
		first, rotated := entries[0], entries[1]
		if !strings.Contains(first.BeforeJSON, `"stripeSecretKey":""`) || !strings.Contains(first.AfterJSON, `"stripeSecretKey":"set `) {
			t.Fatalf("first key: %s → %s", first.BeforeJSON, first.AfterJSON)
		}
		if first.AfterJSON != rotated.BeforeJSON || rotated.BeforeJSON == rotated.AfterJSON {
			t.Fatalf("the rotation does not show: %s → %s", rotated.BeforeJSON, rotated.AfterJSON)
		}

		// Message settings.
		if _, err := message.Of(svc).StaffUpdateMessageSettings(ctx, admin, 1, message.SettingsChange{ExpiryReminderDays: enginetest.PtrTo(0), ReplyTo: enginetest.PtrTo("nope")}); err == nil {
			t.Fatal("a bad reply-to was accepted")
		}
		if _, err := message.Of(svc).StaffUpdateMessageSettings(ctx, admin, 1, message.SettingsChange{ExpiryReminderDays: enginetest.PtrTo(14), SenderName: enginetest.PtrTo("Riverside")}); err != nil {
			t.Fatal(err)
		}
		if m := auditOf(t, svc, 1, "message_settings.update"); len(m) != 1 || !strings.Contains(m[0].BeforeJSON, `"expiryReminderDays":30`) ||
			!strings.Contains(m[0].AfterJSON, `"expiryReminderDays":14`) || !strings.Contains(m[0].AfterJSON, `"senderName":"Riverside"`) {
			t.Fatalf("message settings audit: %+v", m)
		}

		// Membership types: add, rename, delete; one with price rules stays.
		typ, err := organisation.Of(svc).StaffCreateMembershipType(ctx, admin, engine.MembershipType{OrganisationID: 1, Code: "GUEST", Name: "Guest"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := organisation.Of(svc).StaffUpdateMembershipType(ctx, admin, 1, typ.ID, organisation.MembershipTypeChange{Name: enginetest.PtrTo("Guest rower"), MinAge: enginetest.PtrTo(16)}); err != nil {
			t.Fatal(err)
		}
		if _, err := organisation.Of(svc).StaffUpdateMembershipType(ctx, admin, 1, typ.ID, organisation.MembershipTypeChange{Name: enginetest.PtrTo(" ")}); engine.ErrorCode(err) != engine.CodeValidation {
			t.Fatalf("an empty name: %v", err)
		}
		if err := organisation.Of(svc).StaffDeleteMembershipType(ctx, admin, 1, 1); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a type in use deleted: %v", err)
		}
		if err := organisation.Of(svc).StaffDeleteMembershipType(ctx, admin, 1, typ.ID); err != nil {
			t.Fatal(err)
		}
		add, upd, del := auditOf(t, svc, 1, "membership_type.add"), auditOf(t, svc, 1, "membership_type.update"), auditOf(t, svc, 1, "membership_type.delete")
		if len(add) != 1 || add[0].BeforeJSON != "" || !strings.Contains(add[0].AfterJSON, `"name":"Guest"`) ||
			len(upd) != 1 || !strings.Contains(upd[0].BeforeJSON, `"minAge":null`) || !strings.Contains(upd[0].AfterJSON, `"minAge":16,"name":"Guest rower"`) ||
			len(del) != 1 || del[0].AfterJSON != "" || !strings.Contains(del[0].BeforeJSON, `"Guest rower"`) {
			t.Fatalf("membership type audit: %+v %+v %+v", add, upd, del)
		}

		// Languages: the default must be enabled; the hash secret's rotation shows.
		_, err = staff.Of(svc).StaffUpdateOrganisation(ctx, admin, 1, organisation.OrganisationChange{EnabledLanguages: &[]string{"de", "fr"}, DefaultLanguage: enginetest.PtrTo("en")})
		if f := enginetest.FieldsOf(t, err); len(f) != 1 || f[0] != "defaultLanguage" {
			t.Fatalf("a default that is not enabled: %v", f)
		}
		if o, _ := svc.Organisation(ctx, 1); len(o.EnabledLanguageList()) != 3 {
			t.Fatalf("a refused change was stored: %q", o.EnabledLanguages)
		}
		for _, secret := range []string{"sealed.first-hash-secret", "sealed.second-hash-secret"} {
			if _, err := staff.Of(svc).StaffUpdateOrganisation(ctx, admin, 1, organisation.OrganisationChange{EnabledLanguages: &[]string{"de", "fr"},
				DefaultLanguage: enginetest.PtrTo("de"), HashSecretSealed: enginetest.PtrTo(secret)}); err != nil {
				t.Fatal(err)
			}
		}
		org := auditOf(t, svc, 1, "organisation.update")
		if len(org) != 2 || !strings.Contains(org[0].AfterJSON, `"enabledLanguages":["de","fr"]`) || !strings.Contains(org[0].AfterJSON, `"defaultLanguage":"de"`) ||
			org[1].BeforeJSON == org[1].AfterJSON || strings.Contains(org[0].AfterJSON+org[1].AfterJSON, "hash-secret") {
			t.Fatalf("organisation audit: %+v", org)
		}

		// Organisation and message settings in one request: both or neither,
		// and a messages-only change leaves no empty organisation entry.
		_, err = staff.Of(svc).StaffUpdateOrganisation(ctx, admin, 1, organisation.OrganisationChange{EnabledLanguages: &[]string{"fr"},
			Messages: &message.SettingsChange{SenderName: enginetest.PtrTo("Never stored")}})
		if f := enginetest.FieldsOf(t, err); len(f) != 1 || f[0] != "defaultLanguage" {
			t.Fatalf("a default that is not enabled, with messages: %v", f)
		}
		if m, err := message.Of(svc).Settings(ctx, 1); err != nil || m.SenderName != "Riverside" {
			t.Fatalf("the refused request's message settings were stored: %+v %v", m, err)
		}
		_, err = staff.Of(svc).StaffUpdateOrganisation(ctx, admin, 1, organisation.OrganisationChange{Name: enginetest.PtrTo(" "),
			Messages: &message.SettingsChange{ReplyTo: enginetest.PtrTo("nope")}})
		if f := enginetest.FieldsOf(t, err); len(f) != 2 || f[0] != "messages.replyTo" || f[1] != "name" {
			t.Fatalf("both parts' fields named: %v", f)
		}
		if _, err := staff.Of(svc).StaffUpdateOrganisation(ctx, admin, 1, organisation.OrganisationChange{
			Messages: &message.SettingsChange{SenderName: enginetest.PtrTo("Riverside RC")}}); err != nil {
			t.Fatal(err)
		}
		if m, _ := message.Of(svc).Settings(ctx, 1); m.SenderName != "Riverside RC" {
			t.Fatalf("messages through the organisation change: %+v", m)
		}
		if n := len(auditOf(t, svc, 1, "organisation.update")); n != 2 {
			t.Fatalf("%d organisation entries after a messages-only change, want 2", n)
		}
		if n := len(auditOf(t, svc, 1, "message_settings.update")); n != 2 {
			t.Fatalf("%d message settings entries, want 2", n)
		}
	})
}
