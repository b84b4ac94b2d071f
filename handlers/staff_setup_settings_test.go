package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/relay/session"
	"portal/views/staffview"
)

// auditRows are the organisation's audit rows of one action, oldest first.
func (env *staffEnv) auditRows(action string) []engine.AuditRecord {
	env.t.Helper()
	var rows []engine.AuditRecord
	if err := env.db.NewSelect().Model(&rows).Where("action = ?", action).Order("id ASC").Scan(env.t.Context()); err != nil {
		env.t.Fatal(err)
	}
	return rows
}

// TestStaffSetupLanguages: the default language must be one of those
// enabled; a refusal shows the choice again by its field and changes
// nothing; a saved choice is audited and reaches the member pages.
func TestStaffSetupLanguages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		p := env.get(admin, "/staff/setup/languages")
		if p.doc.Find(`[data-testid=languages-form] input[name=enabledLanguages][checked]`).Length() != 3 ||
			p.doc.Find(`#languages-default option[selected]`).AttrOr("value", "") != "en" {
			t.Fatalf("languages form: %s", p.testid("languages-form").Text())
		}
		bad := env.post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"de", "fr"}, "defaultLanguage": {"en"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.testid("error-languages-default").Text(), "enabled languages (de, fr)") ||
			bad.testid("language-en").Is("[checked]") || !bad.testid("language-fr").Is("[checked]") {
			t.Fatalf("a default not enabled: %d %s", bad.status, bad.testid("languages-form").Text())
		}
		none := env.post(admin, "/staff/setup/languages", url.Values{"defaultLanguage": {"en"}}, origin...)
		if none.status != http.StatusUnprocessableEntity || none.testid("error-languages-enabled").Length() != 1 {
			t.Fatalf("no language: %d", none.status)
		}
		if o, _ := env.svc.Organisation(ctx, 1); len(o.EnabledLanguageList()) != 3 || o.DefaultLanguage != "en" || env.auditActions("organisation.update") != 0 {
			t.Fatalf("a refused change was stored: %q %q", o.EnabledLanguages, o.DefaultLanguage)
		}
		expectRedirect(t, env.post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"de", "en"}, "defaultLanguage": {"de"}}, origin...),
			"/staff/setup/languages?done=languages-saved")
		if o, _ := env.svc.Organisation(ctx, 1); strings.Join(o.EnabledLanguageList(), ",") != "de,en" || o.DefaultLanguage != "de" {
			t.Fatalf("after saving: %q %q", o.EnabledLanguages, o.DefaultLanguage)
		}
		rows := env.auditRows("organisation.update")
		if len(rows) != 1 || !strings.Contains(rows[0].BeforeJSON, `"enabledLanguages":["en","de","fr"]`) || !strings.Contains(rows[0].AfterJSON, `"enabledLanguages":["de","en"]`) {
			t.Fatalf("audit: %+v", rows)
		}
		// The member pages offer the languages chosen.
		member := env.get(env.newClient(), "/")
		if member.testid("lang-de").Length() != 1 || member.testid("lang-fr").Length() != 0 {
			t.Errorf("member language switcher: %s", member.testid("language-switcher").Text())
		}
	})
}

// TestStaffSetupTimeZone: the organisation section shows the club's time
// zone (Europe/Berlin until set), refuses an unknown one at its field and
// stores a known one, audited.
func TestStaffSetupTimeZone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}
		p := env.get(admin, "/staff/setup/organisation")
		if got := p.doc.Find(`#org-timezone`).AttrOr("value", ""); got != "Europe/Berlin" {
			t.Fatalf("time zone field: %q", got)
		}
		form := url.Values{"name": {"TV Demo 1848 e.V."}, "contactEmail": {""}, "logoUrl": {""}, "accentColour": {""}, "timeZone": {"Mars/Olympus"}}
		bad := env.post(admin, "/staff/setup/organisation", form, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-org-timezone").Length() != 1 ||
			bad.doc.Find(`#org-timezone`).AttrOr("aria-invalid", "") != "true" {
			t.Fatalf("an unknown zone: %d %s", bad.status, bad.testid("org-form").Text())
		}
		form.Set("timeZone", "Europe/Zurich")
		expectRedirect(t, env.post(admin, "/staff/setup/organisation", form, origin...), "/staff/setup/organisation?done=org-saved")
		if o, _ := env.svc.Organisation(t.Context(), 1); o.TimeZone != "Europe/Zurich" {
			t.Fatalf("stored %q", o.TimeZone)
		}
		if rows := env.auditRows("organisation.update"); len(rows) != 1 || !strings.Contains(rows[0].AfterJSON, `"timeZone":"Europe/Zurich"`) {
			t.Fatalf("audit: %+v", rows)
		}
	})
}

// TestStaffSetupPaymentSettings: the payment settings are checked as a
// whole (a bad IBAN refuses the Stripe keys too, by field); the Stripe
// secrets are write-only: never in the page, not even after an error, nor
// in the audit log, where a rotation shows as a new fingerprint; an empty
// secret field keeps the secret, the remove box clears it.
func TestStaffSetupPaymentSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}
		const key1, key2, hook = "sk_test_51FirstSecretKeyValue", "sk_test_51SecondSecretKeyValue", "whsec_SigningSecretValue"
		secretsIn := func(s string) bool {
			return strings.Contains(s, key1) || strings.Contains(s, key2) || strings.Contains(s, hook)
		}

		p := env.get(admin, "/staff/setup/payments")
		if p.testid("pay-stripe-key-state").Text() != staffview.SetupText.PaySecretNotSet || p.testid("pay-qr-kind").Text() != staffview.SetupText.PayQRNone {
			t.Fatalf("payment form: %s", p.testid("payments-form").Text())
		}
		form := url.Values{"provider": {"stripe"}, "stripeSecretKey": {key1}, "stripeWebhookSecret": {hook}, "bankCreditorName": {"Riverside RC"},
			"bankCreditorAddress": {""}, "bankIban": {"DE89 3704 0044 0532 0130 01"}, "bankBic": {""}}
		bad := env.post(admin, "/staff/setup/payments", form, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-pay-iban").Length() != 1 || bad.testid("setup-problem").Length() != 1 ||
			bad.doc.Find(`#pay-iban`).AttrOr("value", "") != "DE89 3704 0044 0532 0130 01" || bad.doc.Find(`#pay-provider option[selected]`).AttrOr("value", "") != "stripe" {
			t.Fatalf("a bad IBAN: %d %s", bad.status, bad.testid("payments-form").Text())
		}
		if secretsIn(string(bad.body)) {
			t.Fatal("a secret was sent back with the error")
		}
		if v, _ := settings.Of(env.svc).PaymentSettings(ctx, 1); v.Provider != "" || v.StripeSecretKeySet || env.auditActions("payment_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", v)
		}

		form.Set("bankIban", "DE89 3704 0044 0532 0130 00")
		expectRedirect(t, env.post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		p = env.get(admin, "/staff/setup/payments?done=payments-saved")
		if p.testid("staff-flash").Text() != staffview.SetupText.PaySaved || p.testid("pay-stripe-key-state").Text() != staffview.OpsText.SecretSet ||
			p.testid("pay-webhook-secret-state").Text() != staffview.OpsText.SecretSet || p.doc.Find(`#pay-stripe-key`).AttrOr("value", "x") != "" ||
			p.doc.Find(`#pay-iban`).AttrOr("value", "") != "DE89370400440532013000" || p.testid("pay-qr-kind").Text() != staffview.SetupText.PayQREPC {
			t.Fatalf("after saving: %s", p.testid("payments-form").Text())
		}
		if secretsIn(string(p.body)) {
			t.Fatal("a secret is in the page")
		}

		// Empty secret fields keep the secrets; a new key replaces one.
		form.Set("stripeSecretKey", "")
		form.Set("stripeWebhookSecret", "")
		expectRedirect(t, env.post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		if v, _ := settings.Of(env.svc).PaymentSettings(ctx, 1); !v.StripeSecretKeySet || !v.StripeWebhookSecretSet {
			t.Fatalf("empty fields removed the secrets: %+v", v)
		}
		form.Set("stripeSecretKey", key2)
		expectRedirect(t, env.post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		rows := env.auditRows("payment_settings.update")
		if len(rows) != 3 {
			t.Fatalf("%d audit entries, want 3", len(rows))
		}
		for _, r := range rows {
			if secretsIn(r.BeforeJSON + r.AfterJSON) {
				t.Fatalf("a secret in the audit log: %s %s", r.BeforeJSON, r.AfterJSON)
			}
		}
		if rows[1].BeforeJSON != rows[1].AfterJSON || rows[2].BeforeJSON == rows[2].AfterJSON || !strings.Contains(rows[2].AfterJSON, `"stripeSecretKey":"set `) {
			t.Fatalf("a kept key must not show as changed, a rotated one must: %s → %s; %s → %s", rows[1].BeforeJSON, rows[1].AfterJSON, rows[2].BeforeJSON, rows[2].AfterJSON)
		}
		if audit := env.get(admin, "/staff/audit"); audit.status != http.StatusOK || secretsIn(string(audit.body)) || !strings.Contains(audit.testid("audit-table").Text(), "changed the payment settings") {
			t.Fatalf("the audit page: %d", audit.status)
		}

		// Stripe needs both secrets: removing one is refused, by its field.
		form.Set("stripeSecretKey", "")
		form.Set("stripeWebhookSecretClear", "1")
		if res := env.post(admin, "/staff/setup/payments", form, origin...); res.status != http.StatusUnprocessableEntity || res.testid("error-pay-webhook-secret").Length() != 1 {
			t.Fatalf("stripe without a webhook secret: %d", res.status)
		}
		form.Set("provider", payment.BankTransferProvider)
		expectRedirect(t, env.post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		if v, _ := settings.Of(env.svc).PaymentSettings(ctx, 1); v.Provider != payment.BankTransferProvider || v.StripeWebhookSecretSet || !v.StripeSecretKeySet {
			t.Fatalf("after removing the webhook secret: %+v", v)
		}
	})
}

// TestStaffSetupMessageSettings: numbers are read by the page, their
// bounds and the addresses checked by the engine as for the admin API;
// errors by field change nothing; a saved change is audited.
func TestStaffSetupMessageSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		p := env.get(admin, "/staff/setup/messages")
		if p.doc.Find(`#msg-unpaid`).AttrOr("value", "") != "3, 10" || p.doc.Find(`#msg-expiry`).AttrOr("value", "") != "30" {
			t.Fatalf("message form: %s", p.testid("messages-form").Text())
		}
		form := url.Values{"unpaidReminderDays": {"2, x"}, "expiryReminderDays": {"soon"}, "resumeAfterHours": {"48"}, "renewalLeadDays": {"30"},
			"senderName": {"Riverside"}, "replyTo": {"office@riverside.example"}}
		res := env.post(admin, "/staff/setup/messages", form, origin...)
		if res.status != http.StatusUnprocessableEntity || res.testid("error-msg-unpaid").Text() != staffview.SetupText.NotNumbers ||
			res.testid("error-msg-expiry").Text() != staffview.SetupText.NotANumber || res.doc.Find(`#msg-expiry`).AttrOr("value", "") != "soon" {
			t.Fatalf("not numbers: %d %s", res.status, res.testid("messages-form").Text())
		}
		form.Set("unpaidReminderDays", "2, 400")
		form.Set("expiryReminderDays", "14")
		form.Set("replyTo", "not an address")
		res = env.post(admin, "/staff/setup/messages", form, origin...)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.testid("error-msg-unpaid").Text(), "1 to 365") ||
			res.testid("error-msg-reply-to").Length() != 1 || res.testid("error-msg-expiry").Length() != 0 {
			t.Fatalf("out of bounds: %d %s", res.status, res.testid("messages-form").Text())
		}
		if ms, _ := message.Of(env.svc).Settings(ctx, 1); ms.ExpiryReminderDays != 30 || env.auditActions("message_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", ms)
		}
		form.Set("unpaidReminderDays", "10 2")
		form.Set("replyTo", "office@riverside.example")
		expectRedirect(t, env.post(admin, "/staff/setup/messages", form, origin...), "/staff/setup/messages?done=messages-saved")
		ms, _ := message.Of(env.svc).Settings(ctx, 1)
		if ms.ExpiryReminderDays != 14 || len(ms.UnpaidReminderDays) != 2 || ms.UnpaidReminderDays[0] != 2 || ms.SenderName != "Riverside" || ms.ReplyTo != "office@riverside.example" {
			t.Fatalf("after saving: %+v", ms)
		}
		if rows := env.auditRows("message_settings.update"); len(rows) != 1 || !strings.Contains(rows[0].AfterJSON, `"expiryReminderDays":14`) {
			t.Fatalf("audit: %+v", rows)
		}
		// Empty returns a setting to the default.
		form.Set("expiryReminderDays", "")
		expectRedirect(t, env.post(admin, "/staff/setup/messages", form, origin...), "/staff/setup/messages?done=messages-saved")
		if ms, _ := message.Of(env.svc).Settings(ctx, 1); ms.ExpiryReminderDays != 30 {
			t.Fatalf("empty did not restore the default: %d", ms.ExpiryReminderDays)
		}
	})
}

// TestStaffSetupMembershipTypes: add (errors by field), change through
// the edit form, delete after asking; a type in use is kept with the
// engine's reason. Every change is audited.
func TestStaffSetupMembershipTypes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}
		typeID := func(code string) int64 {
			t.Helper()
			types, err := organisation.Of(env.svc).MembershipTypes(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, ty := range types {
				if ty.Code == code {
					return ty.ID
				}
			}
			return 0
		}

		bad := env.post(admin, "/staff/setup/types", url.Values{"code": {"guest rower"}, "name": {"Guest"}, "minAge": {"sixteen"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-type-min-age").Length() != 1 || bad.doc.Find(`#type-name`).AttrOr("value", "") != "Guest" {
			t.Fatalf("an age that is no number: %d %s", bad.status, bad.testid("type-form").Text())
		}
		bad = env.post(admin, "/staff/setup/types", url.Values{"code": {"guest rower"}, "name": {"Guest"}, "minAge": {"16"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-type-code").Length() != 1 || typeID("guest rower") != 0 {
			t.Fatalf("a bad code: %d %s", bad.status, bad.testid("type-form").Text())
		}
		expectRedirect(t, env.post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest"}, "minAge": {"16"}, "maxAge": {""}}, origin...),
			"/staff/setup/memberships?done=type-added")
		id := typeID("GUEST")
		if id == 0 {
			t.Fatal("the type was not added")
		}
		taken := env.post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest 2"}}, origin...)
		if taken.status != http.StatusConflict || taken.testid("error-type-code").Length() != 1 {
			t.Fatalf("a taken code: %d", taken.status)
		}

		// The edit form carries the type's values; the change clears the minimum age.
		p := env.get(admin, "/staff/setup/memberships")
		row := p.doc.Find(`[data-testid=type-row][data-code=GUEST]`)
		edit := env.get(admin, row.Find(`[data-testid=type-edit]`).AttrOr("href", ""))
		path := "/staff/setup/types/" + strconv.FormatInt(id, 10)
		if edit.doc.Find(`#type-form`).AttrOr("action", "") != path || edit.doc.Find(`#type-min-age`).AttrOr("value", "") != "16" || edit.testid("type-cancel").Length() != 1 {
			t.Fatalf("edit form: %s", edit.testid("type-form").Text())
		}
		expectRedirect(t, env.post(admin, path, url.Values{"code": {"GUEST"}, "name": {"Guest rower"}, "minAge": {""}, "maxAge": {"99"}}, origin...),
			"/staff/setup/memberships?done=type-changed")
		types, _ := organisation.Of(env.svc).MembershipTypes(ctx, 1)
		for _, ty := range types {
			if ty.ID == id && (ty.Name != "Guest rower" || ty.MinAge != nil || ty.MaxAge == nil || *ty.MaxAge != 99) {
				t.Fatalf("after the change: %+v", ty)
			}
		}

		// A type with price rules is kept, with the reason; an unused one goes after asking.
		if inUse := env.post(admin, "/staff/setup/types/1/delete", url.Values{"confirmed": {"1"}}, origin...); inUse.status != http.StatusConflict ||
			!strings.Contains(inUse.testid("setup-problem").Text(), "in use by") || typeID("ADULT") == 0 {
			t.Fatalf("deleting a type in use: %d %s", inUse.status, inUse.testid("setup-problem").Text())
		}
		ask := env.post(admin, path+"/delete", url.Values{}, origin...)
		if ask.status != http.StatusOK || ask.testid("staff-confirm-question").Text() != staffview.SetupText.TypeDeleteQuestion || typeID("GUEST") == 0 {
			t.Fatalf("deleting without confirmation: %d", ask.status)
		}
		expectRedirect(t, env.post(admin, path+"/delete", url.Values{"confirmed": {"1"}}, origin...), "/staff/setup/memberships?done=type-deleted")
		if typeID("GUEST") != 0 {
			t.Fatal("the type was not deleted")
		}
		for action, want := range map[string]int{"membership_type.add": 1, "membership_type.update": 1, "membership_type.delete": 1} {
			if got := env.auditActions(action); got != want {
				t.Errorf("%d %s audit entries, want %d", got, action, want)
			}
		}
	})
}

// TestStaffSetupHashSecretRotation: a new hash-link secret shows in the
// audit log as a changed fingerprint, never as the secret.
func TestStaffSetupHashSecretRotation(t *testing.T) {
	kr, err := session.NewKeyring([]byte(strings.Repeat("h", 32)))
	if err != nil {
		t.Fatal(err)
	}
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{hashSecrets: kr.Sealer("organisation hash secret")})
	env.addStaff("admin@example.org", staff.RoleAdmin)
	admin := env.mustStaffSignIn("admin@example.org", "/staff")
	org := url.Values{"name": {"Riverside Rowing Club"}, "contactEmail": {""}, "logoUrl": {""}, "accentColour": {""}}
	for _, secret := range []string{"first-hash-secret-0123456789", "second-hash-secret-0123456789"} {
		org.Set("hashSecret", secret)
		expectRedirect(t, env.post(admin, "/staff/setup/organisation", org, "Origin", env.srv.URL), "/staff/setup/organisation?done=org-saved")
	}
	rows := env.auditRows("organisation.update")
	if len(rows) != 2 || !strings.Contains(rows[0].BeforeJSON, `"hashSecret":""`) || !strings.Contains(rows[0].AfterJSON, `"hashSecret":"set `) ||
		rows[1].BeforeJSON == rows[1].AfterJSON || rows[0].AfterJSON != rows[1].BeforeJSON {
		t.Fatalf("the rotation does not show: %+v", rows)
	}
	for _, r := range rows {
		if strings.Contains(r.BeforeJSON+r.AfterJSON, "hash-secret") {
			t.Fatalf("the secret is in the audit log: %s", r.AfterJSON)
		}
	}
}
