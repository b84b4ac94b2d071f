package staff_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/relay/session"
	"portal/views/staffview"
)

// TestStaffSetupLanguages: the default language must be one of those
// enabled; a refusal shows the choice again by its field and changes
// nothing; a saved choice is audited and reaches the member pages.
func TestStaffSetupLanguages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		p := env.Get(admin, "/staff/setup/languages")
		if p.Doc.Find(`[data-testid=languages-form] input[name=enabledLanguages][checked]`).Length() != 3 ||
			p.Doc.Find(`#languages-default option[selected]`).AttrOr("value", "") != "en" {
			t.Fatalf("languages form: %s", p.TestID("languages-form").Text())
		}
		bad := env.Post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"de", "fr"}, "defaultLanguage": {"en"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.TestID("error-languages-default").Text(), "enabled languages (de, fr)") ||
			bad.TestID("language-en").Is("[checked]") || !bad.TestID("language-fr").Is("[checked]") {
			t.Fatalf("a default not enabled: %d %s", bad.Status, bad.TestID("languages-form").Text())
		}
		none := env.Post(admin, "/staff/setup/languages", url.Values{"defaultLanguage": {"en"}}, origin...)
		if none.Status != http.StatusUnprocessableEntity || none.TestID("error-languages-enabled").Length() != 1 {
			t.Fatalf("no language: %d", none.Status)
		}
		if o, _ := env.Engine.Organisation(ctx, 1); len(o.EnabledLanguageList()) != 3 || o.DefaultLanguage != "en" || env.AuditActions("organisation.update") != 0 {
			t.Fatalf("a refused change was stored: %q %q", o.EnabledLanguages, o.DefaultLanguage)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"de", "en"}, "defaultLanguage": {"de"}}, origin...),
			"/staff/setup/languages?done=languages-saved")
		if o, _ := env.Engine.Organisation(ctx, 1); strings.Join(o.EnabledLanguageList(), ",") != "de,en" || o.DefaultLanguage != "de" {
			t.Fatalf("after saving: %q %q", o.EnabledLanguages, o.DefaultLanguage)
		}
		rows := env.AuditRows("organisation.update")
		if len(rows) != 1 || !strings.Contains(rows[0].BeforeJSON, `"enabledLanguages":["en","de","fr"]`) || !strings.Contains(rows[0].AfterJSON, `"enabledLanguages":["de","en"]`) {
			t.Fatalf("audit: %+v", rows)
		}
		// The member pages offer the languages chosen.
		member := env.Get(env.NewClient(), "/")
		if member.TestID("lang-de").Length() != 1 || member.TestID("lang-fr").Length() != 0 {
			t.Errorf("member language switcher: %s", member.TestID("language-switcher").Text())
		}
	})
}

// TestStaffSetupTimeZone: the organisation section shows the club's time
// zone (Europe/Berlin until set), refuses an unknown one at its field and
// stores a known one, audited.
func TestStaffSetupTimeZone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}
		p := env.Get(admin, "/staff/setup/organisation")
		if got := p.Doc.Find(`#org-timezone`).AttrOr("value", ""); got != "Europe/Berlin" {
			t.Fatalf("time zone field: %q", got)
		}
		form := url.Values{"name": {"TV Demo 1848 e.V."}, "contactEmail": {""}, "logoUrl": {""}, "accentColour": {""}, "timeZone": {"Mars/Olympus"}}
		bad := env.Post(admin, "/staff/setup/organisation", form, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-org-timezone").Length() != 1 ||
			bad.Doc.Find(`#org-timezone`).AttrOr("aria-invalid", "") != "true" {
			t.Fatalf("an unknown zone: %d %s", bad.Status, bad.TestID("org-form").Text())
		}
		form.Set("timeZone", "Europe/Zurich")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/organisation", form, origin...), "/staff/setup/organisation?done=org-saved")
		if o, _ := env.Engine.Organisation(t.Context(), 1); o.TimeZone != "Europe/Zurich" {
			t.Fatalf("stored %q", o.TimeZone)
		}
		if rows := env.AuditRows("organisation.update"); len(rows) != 1 || !strings.Contains(rows[0].AfterJSON, `"timeZone":"Europe/Zurich"`) {
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}
		const key1, key2, hook = "sk_test_51FirstSecretKeyValue", "sk_test_51SecondSecretKeyValue", "whsec_SigningSecretValue"
		secretsIn := func(s string) bool {
			return strings.Contains(s, key1) || strings.Contains(s, key2) || strings.Contains(s, hook)
		}

		p := env.Get(admin, "/staff/setup/payments")
		if p.TestID("pay-stripe-key-state").Text() != staffview.SetupText.PaySecretNotSet || p.TestID("pay-qr-kind").Text() != staffview.SetupText.PayQRNone {
			t.Fatalf("payment form: %s", p.TestID("payments-form").Text())
		}
		form := url.Values{"provider": {"stripe"}, "stripeSecretKey": {key1}, "stripeWebhookSecret": {hook}, "bankCreditorName": {"Riverside RC"},
			"bankCreditorAddress": {""}, "bankIban": {"DE89 3704 0044 0532 0130 01"}, "bankBic": {""}}
		bad := env.Post(admin, "/staff/setup/payments", form, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-pay-iban").Length() != 1 || bad.TestID("setup-problem").Length() != 1 ||
			bad.Doc.Find(`#pay-iban`).AttrOr("value", "") != "DE89 3704 0044 0532 0130 01" || bad.Doc.Find(`#pay-provider option[selected]`).AttrOr("value", "") != "stripe" {
			t.Fatalf("a bad IBAN: %d %s", bad.Status, bad.TestID("payments-form").Text())
		}
		if secretsIn(string(bad.Body)) {
			t.Fatal("a secret was sent back with the error")
		}
		if v, _ := settings.Of(env.Engine).PaymentSettings(ctx, 1); v.Provider != "" || v.StripeSecretKeySet || env.AuditActions("payment_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", v)
		}

		form.Set("bankIban", "DE89 3704 0044 0532 0130 00")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		p = env.Get(admin, "/staff/setup/payments?done=payments-saved")
		if p.TestID("staff-flash").Text() != staffview.SetupText.PaySaved || p.TestID("pay-stripe-key-state").Text() != staffview.OpsText.SecretSet ||
			p.TestID("pay-webhook-secret-state").Text() != staffview.OpsText.SecretSet || p.Doc.Find(`#pay-stripe-key`).AttrOr("value", "x") != "" ||
			p.Doc.Find(`#pay-iban`).AttrOr("value", "") != "DE89370400440532013000" || p.TestID("pay-qr-kind").Text() != staffview.SetupText.PayQREPC {
			t.Fatalf("after saving: %s", p.TestID("payments-form").Text())
		}
		if secretsIn(string(p.Body)) {
			t.Fatal("a secret is in the page")
		}

		// Empty secret fields keep the secrets; a new key replaces one.
		form.Set("stripeSecretKey", "")
		form.Set("stripeWebhookSecret", "")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		if v, _ := settings.Of(env.Engine).PaymentSettings(ctx, 1); !v.StripeSecretKeySet || !v.StripeWebhookSecretSet {
			t.Fatalf("empty fields removed the secrets: %+v", v)
		}
		form.Set("stripeSecretKey", key2)
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		rows := env.AuditRows("payment_settings.update")
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
		if audit := env.Get(admin, "/staff/audit"); audit.Status != http.StatusOK || secretsIn(string(audit.Body)) || !strings.Contains(audit.TestID("audit-table").Text(), "changed the payment settings") {
			t.Fatalf("the audit page: %d", audit.Status)
		}

		// Stripe needs both secrets: removing one is refused, by its field.
		form.Set("stripeSecretKey", "")
		form.Set("stripeWebhookSecretClear", "1")
		if res := env.Post(admin, "/staff/setup/payments", form, origin...); res.Status != http.StatusUnprocessableEntity || res.TestID("error-pay-webhook-secret").Length() != 1 {
			t.Fatalf("stripe without a webhook secret: %d", res.Status)
		}
		form.Set("provider", payment.BankTransferProvider)
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/payments", form, origin...), "/staff/setup/payments?done=payments-saved")
		if v, _ := settings.Of(env.Engine).PaymentSettings(ctx, 1); v.Provider != payment.BankTransferProvider || v.StripeWebhookSecretSet || !v.StripeSecretKeySet {
			t.Fatalf("after removing the webhook secret: %+v", v)
		}
	})
}

// TestStaffSetupMessageSettings: numbers are read by the page, their
// bounds and the addresses checked by the engine as for the admin API;
// errors by field change nothing; a saved change is audited.
func TestStaffSetupMessageSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		p := env.Get(admin, "/staff/setup/messages")
		if p.Doc.Find(`#msg-unpaid`).AttrOr("value", "") != "3, 10" || p.Doc.Find(`#msg-expiry`).AttrOr("value", "") != "30" {
			t.Fatalf("message form: %s", p.TestID("messages-form").Text())
		}
		form := url.Values{"unpaidReminderDays": {"2, x"}, "expiryReminderDays": {"soon"}, "resumeAfterHours": {"48"}, "renewalLeadDays": {"30"},
			"senderName": {"Riverside"}, "replyTo": {"office@riverside.example"}}
		res := env.Post(admin, "/staff/setup/messages", form, origin...)
		if res.Status != http.StatusUnprocessableEntity || res.TestID("error-msg-unpaid").Text() != staffview.SetupText.NotNumbers ||
			res.TestID("error-msg-expiry").Text() != staffview.SetupText.NotANumber || res.Doc.Find(`#msg-expiry`).AttrOr("value", "") != "soon" {
			t.Fatalf("not numbers: %d %s", res.Status, res.TestID("messages-form").Text())
		}
		form.Set("unpaidReminderDays", "2, 400")
		form.Set("expiryReminderDays", "14")
		form.Set("replyTo", "not an address")
		res = env.Post(admin, "/staff/setup/messages", form, origin...)
		if res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.TestID("error-msg-unpaid").Text(), "1 to 365") ||
			res.TestID("error-msg-reply-to").Length() != 1 || res.TestID("error-msg-expiry").Length() != 0 {
			t.Fatalf("out of bounds: %d %s", res.Status, res.TestID("messages-form").Text())
		}
		if ms, _ := message.Of(env.Engine).Settings(ctx, 1); ms.ExpiryReminderDays != 30 || env.AuditActions("message_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", ms)
		}
		form.Set("unpaidReminderDays", "10 2")
		form.Set("replyTo", "office@riverside.example")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/messages", form, origin...), "/staff/setup/messages?done=messages-saved")
		ms, _ := message.Of(env.Engine).Settings(ctx, 1)
		if ms.ExpiryReminderDays != 14 || len(ms.UnpaidReminderDays) != 2 || ms.UnpaidReminderDays[0] != 2 || ms.SenderName != "Riverside" || ms.ReplyTo != "office@riverside.example" {
			t.Fatalf("after saving: %+v", ms)
		}
		if rows := env.AuditRows("message_settings.update"); len(rows) != 1 || !strings.Contains(rows[0].AfterJSON, `"expiryReminderDays":14`) {
			t.Fatalf("audit: %+v", rows)
		}
		// Empty returns a setting to the default.
		form.Set("expiryReminderDays", "")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/messages", form, origin...), "/staff/setup/messages?done=messages-saved")
		if ms, _ := message.Of(env.Engine).Settings(ctx, 1); ms.ExpiryReminderDays != 30 {
			t.Fatalf("empty did not restore the default: %d", ms.ExpiryReminderDays)
		}
	})
}

// TestStaffSetupMembershipTypes: add (errors by field), change through
// the edit form, delete after asking; a type in use is kept with the
// engine's reason. Every change is audited.
func TestStaffSetupMembershipTypes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}
		typeID := func(code string) int64 {
			t.Helper()
			types, err := organisation.Of(env.Engine).MembershipTypes(ctx, 1)
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

		bad := env.Post(admin, "/staff/setup/types", url.Values{"code": {"guest rower"}, "name": {"Guest"}, "minAge": {"sixteen"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-type-min-age").Length() != 1 || bad.Doc.Find(`#type-name`).AttrOr("value", "") != "Guest" {
			t.Fatalf("an age that is no number: %d %s", bad.Status, bad.TestID("type-form").Text())
		}
		bad = env.Post(admin, "/staff/setup/types", url.Values{"code": {"guest rower"}, "name": {"Guest"}, "minAge": {"16"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-type-code").Length() != 1 || typeID("guest rower") != 0 {
			t.Fatalf("a bad code: %d %s", bad.Status, bad.TestID("type-form").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest"}, "minAge": {"16"}, "maxAge": {""}}, origin...),
			"/staff/setup/memberships?done=type-added")
		id := typeID("GUEST")
		if id == 0 {
			t.Fatal("the type was not added")
		}
		taken := env.Post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest 2"}}, origin...)
		if taken.Status != http.StatusConflict || taken.TestID("error-type-code").Length() != 1 {
			t.Fatalf("a taken code: %d", taken.Status)
		}

		// The edit form carries the type's values; the change clears the minimum age.
		p := env.Get(admin, "/staff/setup/memberships")
		row := p.Doc.Find(`[data-testid=type-row][data-code=GUEST]`)
		edit := env.Get(admin, row.Find(`[data-testid=type-edit]`).AttrOr("href", ""))
		path := "/staff/setup/types/" + strconv.FormatInt(id, 10)
		if edit.Doc.Find(`#type-form`).AttrOr("action", "") != path || edit.Doc.Find(`#type-min-age`).AttrOr("value", "") != "16" || edit.TestID("type-cancel").Length() != 1 {
			t.Fatalf("edit form: %s", edit.TestID("type-form").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(admin, path, url.Values{"code": {"GUEST"}, "name": {"Guest rower"}, "minAge": {""}, "maxAge": {"99"}}, origin...),
			"/staff/setup/memberships?done=type-changed")
		types, _ := organisation.Of(env.Engine).MembershipTypes(ctx, 1)
		for _, ty := range types {
			if ty.ID == id && (ty.Name != "Guest rower" || ty.MinAge != nil || ty.MaxAge == nil || *ty.MaxAge != 99) {
				t.Fatalf("after the change: %+v", ty)
			}
		}

		// A type with price rules is kept, with the reason; an unused one goes after asking.
		if inUse := env.Post(admin, "/staff/setup/types/1/delete", url.Values{"confirmed": {"1"}}, origin...); inUse.Status != http.StatusConflict ||
			!strings.Contains(inUse.TestID("setup-problem").Text(), "in use by") || typeID("ADULT") == 0 {
			t.Fatalf("deleting a type in use: %d %s", inUse.Status, inUse.TestID("setup-problem").Text())
		}
		ask := env.Post(admin, path+"/delete", url.Values{}, origin...)
		if ask.Status != http.StatusOK || ask.TestID("staff-confirm-question").Text() != staffview.SetupText.TypeDeleteQuestion || typeID("GUEST") == 0 {
			t.Fatalf("deleting without confirmation: %d", ask.Status)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, path+"/delete", url.Values{"confirmed": {"1"}}, origin...), "/staff/setup/memberships?done=type-deleted")
		if typeID("GUEST") != 0 {
			t.Fatal("the type was not deleted")
		}
		for action, want := range map[string]int{"membership_type.add": 1, "membership_type.update": 1, "membership_type.delete": 1} {
			if got := env.AuditActions(action); got != want {
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
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{HashSecrets: kr.Sealer("organisation hash secret")})
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	admin := env.MustStaffSignIn("admin@example.org", "/staff")
	org := url.Values{"name": {"Riverside Rowing Club"}, "contactEmail": {""}, "logoUrl": {""}, "accentColour": {""}}
	for _, secret := range []string{"first-hash-secret-0123456789", "second-hash-secret-0123456789"} {
		org.Set("hashSecret", secret)
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/organisation", org, "Origin", env.Server.URL), "/staff/setup/organisation?done=org-saved")
	}
	rows := env.AuditRows("organisation.update")
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
