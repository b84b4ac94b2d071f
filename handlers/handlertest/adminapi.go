package handlertest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/privacy"
	"portal/engine/registration"
	"portal/handlers/adminapi"
)

// CheckAdminDebitResponses drives the admin API's collection runs through
// every documented response (TestOpenAPIResponses): organisation 1 now
// offers direct debit beside bank transfer, a household gives a mandate,
// the treasurer prepares a run, downloads its file twice (the same bytes),
// cancels it, prepares another and marks it sent, which completes the
// registration; a sent run cannot be cancelled. Another household's
// mandate for a Swiss account without its BIC (given before the form
// asked for it) is left out of each run, named in leftOut with why and
// listed among the payments needing attention.
func CheckAdminDebitResponses(t *testing.T, ck *APIChecker, env *Env, anon *http.Client, crossSite []string) {
	t.Helper()
	write, _ := env.ApiKey(1, organisation.ScopeWrite)
	read, _ := env.ApiKey(1, organisation.ScopeRead)
	settings := ck.Conforming(anon, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"bank_transfer", "direct_debit"},
		"debitCreditorId": "DE98ZZZ09999999999", "debitCollectionDay": 5, "debitReturnFeeMinor": 350}, Bearer(write)...)
	WantStatus(t, settings, http.StatusOK)
	if !strings.Contains(string(settings.Body), `"debitCollectionDay":5`) || !strings.Contains(string(settings.Body), `"debitReturnFeeMinor":350`) {
		t.Fatalf("direct-debit settings: %s", settings.Body)
	}
	// Direct debit as the default and as the only method (3.0.0), as the
	// description says; then back to bank transfer first.
	for _, tc := range []struct {
		patch map[string]any
		want  string
	}{
		{map[string]any{"provider": "direct_debit"}, `"provider":"direct_debit","`},
		{map[string]any{"methods": []string{"direct_debit"}}, `"methods":["direct_debit"]`},
		{map[string]any{"methods": []string{"bank_transfer", "direct_debit"}}, `"methods":["bank_transfer","direct_debit"]`},
	} {
		res := ck.Conforming(anon, http.MethodPatch, "/api/admin/payment-settings", tc.patch, Bearer(write)...)
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), tc.want) {
			t.Fatalf("%v: %d %s, want %s", tc.patch, res.Status, res.Body, tc.want)
		}
	}
	WantStatus(t, ck.Do(anon, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"debitCollectionDay": 31}, Bearer(write)...), http.StatusUnprocessableEntity)
	// A refused return fee names the API's own field.
	if res := ck.Do(anon, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"debitReturnFeeMinor": 10001}, Bearer(write)...); res.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(string(res.Body), `"field":"debitReturnFeeMinor"`) {
		t.Fatalf("a return fee too high: %d %s", res.Status, res.Body)
	}

	svc := engine.NewService(env.DB, env.Gateway, OrganisationPayments(env.DB, Options{}, env.Gateway)...)
	demo := &enginetest.Demo{T: t, DB: env.DB, Svc: svc}
	demo.CommitPayingBy(payment.DirectDebitProvider, engine.DemoUserKey, 2)
	var order engine.Order
	if err := env.DB.NewSelect().Model(&order).Where("payment_method = ?", payment.DirectDebitProvider).Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
		t.Fatalf("no direct-debit order: %v", err)
	}
	if _, err := directdebit.Of(svc).GiveMandate(context.Background(), order.PayReference, directdebit.MandateInput{Holder: "Sam Example", IBAN: "DE02120300000000202051",
		Consent: true, Language: "en"}); err != nil {
		t.Fatal(err)
	}

	demo.CommitPayingBy(payment.DirectDebitProvider, "demo-1", 5)
	var swissOrder engine.Order
	if err := env.DB.NewSelect().Model(&swissOrder).Where("payment_method = ? AND user_key = ?", payment.DirectDebitProvider, "demo-1").Scan(context.Background()); err != nil {
		t.Fatalf("no direct-debit order of demo-1: %v", err)
	}
	swiss, err := directdebit.Of(svc).GiveMandate(context.Background(), swissOrder.PayReference, directdebit.MandateInput{Holder: "Kim Keller",
		IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A", Consent: true, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("bic = ''").Where("id = ?", swiss.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}

	runs := "/api/admin/debit-runs"
	WantStatus(t, ck.Do(anon, http.MethodGet, runs, nil), http.StatusUnauthorized)
	if list := ck.Conforming(anon, http.MethodGet, runs, nil, Bearer(read)...); list.Status != http.StatusOK || strings.TrimSpace(string(list.Body)) != "[]" {
		t.Fatalf("runs before any: %d %s", list.Status, list.Body)
	}
	WantStatus(t, ck.Do(anon, http.MethodPost, runs, map[string]any{}), http.StatusUnauthorized)
	WantStatus(t, ck.Do(anon, http.MethodPost, runs, map[string]any{}, Bearer(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, runs, map[string]any{}, Bearer(write, crossSite...)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, runs, `{"until":`, Bearer(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPost, runs, "x", Bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPost, runs, map[string]any{"until": "soon"}, Bearer(write)...), http.StatusUnprocessableEntity)
	yesterday := clock.Now().AddDate(0, 0, -1).Format(time.DateOnly)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, runs, map[string]any{"until": yesterday}, Bearer(write)...), http.StatusConflict)

	// Collection day 5: the order is due on the 5th after the 14 days.
	until := clock.Now().AddDate(0, 2, 0).Format(time.DateOnly)
	created := ck.Conforming(anon, http.MethodPost, runs, map[string]any{"until": until}, Bearer(write)...)
	WantStatus(t, created, http.StatusCreated)
	var run struct {
		ID         int64
		Status     string
		DebitCount int
		TotalMinor int64
		FileName   string
		Debits     []struct{ EndToEndID, SequenceType, MandateReference, DueOn string }
		LeftOut    []struct {
			OrderReference, MandateReference, Reason string
			RegistrationID, AmountMinor              int64
		}
	}
	created.JSON(t, &run)
	if run.Status != "prepared" || run.DebitCount != 1 || run.TotalMinor != order.TotalMinor || len(run.LeftOut) != 1 ||
		run.LeftOut[0].OrderReference != swissOrder.PayReference || run.LeftOut[0].MandateReference != swiss.Reference ||
		run.LeftOut[0].RegistrationID != swissOrder.ProcessInstanceID || !strings.Contains(run.LeftOut[0].Reason, "BIC") {
		t.Fatalf("run: %s", created.Body)
	}
	one := runs + "/" + strconv.FormatInt(run.ID, 10)
	got := ck.Conforming(anon, http.MethodGet, one, nil, Bearer(read)...)
	WantStatus(t, got, http.StatusOK)
	run.LeftOut = nil
	got.JSON(t, &run)
	if len(run.Debits) != 1 || run.Debits[0].SequenceType != "FRST" || !strings.HasSuffix(run.Debits[0].DueOn, "-05") && !IsBusinessDayAfterFifth(run.Debits[0].DueOn) ||
		len(run.LeftOut) != 1 || run.LeftOut[0].OrderReference != swissOrder.PayReference {
		t.Fatalf("run with its debits: %s", got.Body)
	}
	attention := ck.Conforming(anon, http.MethodGet, "/api/admin/payments/attention", nil, Bearer(read)...)
	var listed []struct{ OrderReference, Reason, Problem string }
	attention.JSON(t, &listed)
	if attention.Status != http.StatusOK || !slices.ContainsFunc(listed, func(a struct{ OrderReference, Reason, Problem string }) bool {
		return a.OrderReference == swissOrder.PayReference && a.Reason == "debit_left_out" && strings.Contains(a.Problem, "left out of the collection file") && strings.Contains(a.Problem, "BIC")
	}) {
		t.Fatalf("the debit left out is not among the payments needing attention: %s", attention.Body)
	}
	WantStatus(t, ck.Do(anon, http.MethodGet, one, nil), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, runs+"/999999", nil, Bearer(read)...), http.StatusNotFound)
	file := ck.Conforming(anon, http.MethodGet, one+"/file", nil, Bearer(read)...)
	WantStatus(t, file, http.StatusOK)
	if again := ck.Do(anon, http.MethodGet, one+"/file", nil, Bearer(read)...); string(again.Body) != string(file.Body) ||
		!strings.Contains(file.Header.Get("Content-Disposition"), run.FileName) || !strings.Contains(string(file.Body), run.Debits[0].MandateReference) {
		t.Fatalf("the file again differs or lacks the mandate: %v\n%s", file.Header, file.Body)
	}
	WantStatus(t, ck.Do(anon, http.MethodGet, one+"/file", nil), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, runs+"/999999/file", nil, Bearer(read)...), http.StatusNotFound)
	// Each download of every debtor's account is in the access log, by key.
	if rows := BulkReads(t, env.DB, 1, "debit-runs/"); len(rows) != 2 || rows[0].RecordID != "debit-runs/"+strconv.FormatInt(run.ID, 10)+"/file" ||
		!strings.HasPrefix(rows[1].Actor, "API key ") {
		t.Fatalf("access log of the downloads: %+v", rows)
	}

	for _, action := range []string{"/cancel", "/sent"} {
		WantStatus(t, ck.Do(anon, http.MethodPost, one+action, nil), http.StatusUnauthorized)
		WantStatus(t, ck.Do(anon, http.MethodPost, one+action, nil, Bearer(read)...), http.StatusForbidden)
		WantStatus(t, ck.Conforming(anon, http.MethodPost, runs+"/999999"+action, nil, Bearer(write)...), http.StatusNotFound)
	}
	WantStatus(t, ck.Conforming(anon, http.MethodPost, one+"/cancel", nil, Bearer(write)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, one+"/sent", nil, Bearer(write)...), http.StatusConflict)
	// A cancelled run's file must not reach the bank: refused, as on the staff page.
	WantStatus(t, ck.Conforming(anon, http.MethodGet, one+"/file", nil, Bearer(read)...), http.StatusConflict)

	second := ck.Conforming(anon, http.MethodPost, runs, map[string]any{"until": until}, Bearer(write)...)
	WantStatus(t, second, http.StatusCreated)
	second.JSON(t, &run)
	two := runs + "/" + strconv.FormatInt(run.ID, 10)
	sent := ck.Conforming(anon, http.MethodPost, two+"/sent", nil, Bearer(write)...)
	WantStatus(t, sent, http.StatusOK)
	if !strings.Contains(string(sent.Body), `"settled":1`) {
		t.Fatalf("marked sent: %s", sent.Body)
	}
	WantStatus(t, ck.Conforming(anon, http.MethodPost, two+"/cancel", nil, Bearer(write)...), http.StatusConflict)
	if err := env.DB.NewSelect().Model(&order).WherePK().Scan(context.Background()); err != nil || order.Status != engine.OrderPaid {
		t.Fatalf("order after the run was sent: %s %v", order.Status, err)
	}
}

// IsBusinessDayAfterFifth says a due date is the first business day after
// a 5th that was none (a weekend or holiday).
func IsBusinessDayAfterFifth(date string) bool {
	d, err := time.Parse(time.DateOnly, date)
	return err == nil && d.Day() > 5 && d.Day() <= 9
}

// CheckDefinitionResponses produces every documented response of the
// definition version operations, for TestOpenAPIResponses (organisation
// 1's keys; by then "membership" has version 1 and "extra" version 1).
func CheckDefinitionResponses(t *testing.T, ck *APIChecker, anon *http.Client, write, read string, crossSite []string) {
	t.Helper()
	WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/definitions", nil, BearerOf(read)...), http.StatusOK)
	WantStatus(t, ck.Do(anon, http.MethodGet, "/api/admin/definitions", nil), http.StatusUnauthorized)
	const v1 = "/api/admin/definitions/membership/versions/1"
	WantStatus(t, ck.Conforming(anon, http.MethodGet, v1, nil, BearerOf(read)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/definitions/membership/versions/9", nil, BearerOf(read)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodGet, v1, nil), http.StatusUnauthorized)
	for _, op := range []string{"/deactivate", "/activate"} {
		WantStatus(t, ck.Do(anon, http.MethodPost, v1+op, nil, BearerOf(read)...), http.StatusForbidden)
		WantStatus(t, ck.Do(anon, http.MethodPost, v1+op, nil, BearerOf(write, crossSite...)...), http.StatusForbidden)
		WantStatus(t, ck.Do(anon, http.MethodPost, v1+op, nil), http.StatusUnauthorized)
		WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/definitions/membership/versions/9"+op, nil, BearerOf(write)...), http.StatusNotFound)
	}
	WantStatus(t, ck.Conforming(anon, http.MethodPost, v1+"/deactivate", nil, BearerOf(write)...), http.StatusConflict) // the open period 1 uses it
	WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/definitions/extra/versions/1/deactivate", nil, BearerOf(write)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/definitions/extra/versions/1/activate", nil, BearerOf(write)...), http.StatusOK)
}

// CheckExportResponses produces every documented response of the period
// export, for TestOpenAPIResponses (organisation 1's read key).
func CheckExportResponses(t *testing.T, ck *APIChecker, anon *http.Client, read string) {
	t.Helper()
	bearer := BearerOf(read)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/periods/1/export/payments?format=json", nil, bearer...), http.StatusOK)
	WantStatus(t, ck.Do(anon, http.MethodGet, "/api/admin/periods/1/export/registrations", nil, bearer...), http.StatusOK)
	WantStatus(t, ck.Do(anon, http.MethodGet, "/api/admin/periods/1/export/payments?format=xml", nil, bearer...), http.StatusBadRequest)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/periods/999/export/payments", nil, bearer...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodGet, "/api/admin/periods/1/export/payments", nil), http.StatusUnauthorized)
}

// AdminCaller is who calls the admin API in a test: a staff session or a
// key, and how the audit log must name them.
type AdminCaller struct {
	C       *http.Client
	Key     string // the API key; "" for a staff session
	Headers []string
	Actor   func(engine.AuditRecord) bool
}

// Call sends an admin API request as who (a key or a staff session), from the server's own origin.
func (env *StaffEnv) Call(who AdminCaller, method, path string, body any) Response {
	env.TB.Helper()
	return env.Do(who.C, method, path, body, append([]string{"Origin", env.Server.URL}, who.Headers...)...)
}

// InvitationDTO is the admin API's invitation as the tests read it.
type InvitationDTO struct {
	ID       int64    `json:"id"`
	UserKey  string   `json:"userKey"`
	State    string   `json:"state"`
	Link     string   `json:"link"`
	Persons  []string `json:"persons"`
	OpenedAt *string  `json:"openedAt"`
}

// CheckInvitationResponses produces every documented response of the
// invitation operations, for TestOpenAPIResponses (organisation 1's keys;
// period 1 is open, period 2 closed).
func CheckInvitationResponses(t *testing.T, ck *APIChecker, anon *http.Client, write, read string, crossSite []string) {
	t.Helper()
	invs := "/api/admin/periods/1/invitations"
	created := ck.Conforming(anon, http.MethodPost, invs, map[string]any{"userKeys": []string{"demo-2", "nobody"}, "send": true}, BearerOf(write)...)
	WantStatus(t, created, http.StatusCreated)
	var rep struct{ Created []InvitationDTO }
	created.JSON(t, &rep)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, invs, map[string]any{}, BearerOf(write)...), http.StatusUnprocessableEntity)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/periods/2/invitations", map[string]any{"all": true}, BearerOf(write)...), http.StatusConflict)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/periods/999/invitations", map[string]any{"all": true}, BearerOf(write)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodPost, invs, `{"all":`, BearerOf(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPost, invs, "x", BearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPost, invs, `{"userKeys":["`+strings.Repeat("k", adminapi.MaxBulkBytes)+`"]}`, BearerOf(write)...), http.StatusRequestEntityTooLarge)
	WantStatus(t, ck.Do(anon, http.MethodPost, invs, map[string]any{"all": true}, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, invs, map[string]any{"all": true}, BearerOf(write, crossSite...)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, invs, map[string]any{"all": true}), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, invs, nil, BearerOf(read)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/periods/999/invitations", nil, BearerOf(read)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodGet, invs, nil), http.StatusUnauthorized)

	revoke := fmt.Sprintf("/api/admin/invitations/%d/revoke", rep.Created[0].ID)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, revoke, nil, BearerOf(write)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/invitations/999/revoke", nil, BearerOf(write)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodPost, revoke, nil, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, revoke, nil), http.StatusUnauthorized)
}

// BearerOf is the Authorization header of an admin API key, with more headers.
func BearerOf(key string, more ...string) []string {
	return append([]string{"Authorization", "Bearer " + key}, more...)
}

// CheckAdminPaymentResponses walks the admin API's payment routes for
// TestOpenAPIResponses: organisation 1 switches to bank transfer, a
// registration commits, staff capture part of it, the member resets, the
// whole transfer arrives anyway and is owed back, staff mark it paid back.
// It runs while organisation 1 is the only one (its pages resolve).
func CheckAdminPaymentResponses(t *testing.T, ck *APIChecker, env *Env, anon *http.Client, crossSite []string) {
	t.Helper()
	write, _ := env.ApiKey(1, organisation.ScopeWrite)
	read, _ := env.ApiKey(1, organisation.ScopeRead)
	settings := "/api/admin/payment-settings"
	WantStatus(t, ck.Conforming(anon, http.MethodGet, settings, nil, Bearer(read)...), http.StatusOK)
	WantStatus(t, ck.Do(anon, http.MethodGet, settings, nil), http.StatusUnauthorized)
	bank := map[string]any{"provider": "bank_transfer", "bankCreditorName": "Riverside Rowing Club", "bankIban": "AT61 1904 3002 3457 3201"}
	WantStatus(t, ck.Do(anon, http.MethodPatch, settings, bank, Bearer(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPatch, settings, bank, Bearer(write, crossSite...)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPatch, settings, bank), http.StatusUnauthorized)
	WantStatus(t, ck.Do(anon, http.MethodPatch, settings, `{"provider":`, Bearer(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPatch, settings, "x", Bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	bad := ck.Conforming(anon, http.MethodPatch, settings, map[string]any{"provider": "stripe", "bankIban": "DE00 3704 0044 0532 0130 00"}, Bearer(write)...)
	WantStatus(t, bad, http.StatusUnprocessableEntity)
	for _, field := range []string{"stripeSecretKey", "stripeWebhookSecret", "bankIban"} {
		if !strings.Contains(string(bad.Body), `"field":"`+field+`"`) {
			t.Errorf("invalid payment settings do not name %s: %s", field, bad.Body)
		}
	}
	ok := ck.Conforming(anon, http.MethodPatch, settings, bank, Bearer(write)...)
	WantStatus(t, ok, http.StatusOK)
	if !strings.Contains(string(ok.Body), `"bankIban":"AT611904300234573201"`) {
		t.Fatalf("settings after the change: %s", ok.Body)
	}

	// A registration of organisation 1 now pays by bank transfer (Sam,
	// through the engine as the pages would: the demo user's first
	// registration is paid already).
	svc := engine.NewService(env.DB, env.Gateway, OrganisationPayments(env.DB, Options{}, env.Gateway)...)
	demo := &enginetest.Demo{T: t, DB: env.DB, Svc: svc}
	f := demo.Commit(2)
	u, err := url.Parse(f.PaymentURL)
	if err != nil {
		t.Fatal(err)
	}
	orderRef := strings.TrimPrefix(u.Path, "/pay/")
	var p engine.Payment
	if err := env.DB.NewSelect().Model(&p).Where("provider = 'bank_transfer'").Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
		t.Fatalf("no bank transfer attempt: %v", err)
	}
	// Its pay link shows the transfer to the club's own account, not the
	// environment's test gateway.
	if page := env.Get(env.NewClient(), u.RequestURI()); page.Status != http.StatusOK || !strings.Contains(string(page.Body), "AT61 1904 3002 3457 3201") {
		t.Fatalf("pay link of a club paid by bank transfer: %d\n%s", page.Status, page.Body)
	}
	capture := "/api/admin/payments/" + orderRef + "/capture"
	part := ck.Conforming(anon, http.MethodPost, capture, map[string]any{"amount": "1.00", "date": "2026-11-20", "note": "first part"}, Bearer(write)...)
	WantStatus(t, part, http.StatusOK)
	var res struct{ Result, Problem, Paid string }
	part.JSON(t, &res)
	if res.Result != "recorded" || res.Problem != "partial" || res.Paid != "EUR 1.00" {
		t.Fatalf("partial capture: %s", part.Body)
	}
	WantStatus(t, ck.Do(anon, http.MethodPost, capture, map[string]any{"amount": "-1", "date": "20.11.2026"}, Bearer(write)...), http.StatusUnprocessableEntity)
	WantStatus(t, ck.Do(anon, http.MethodPost, "/api/admin/payments/PR-NOTOURS/capture", map[string]any{"amount": "1.00"}, Bearer(write)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodPost, capture, `{"amount":`, Bearer(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPost, capture, "x", Bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPost, capture, map[string]any{"amount": "1.00"}, Bearer(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, capture, map[string]any{"amount": "1.00"}), http.StatusUnauthorized)

	// The member resets; the whole transfer arrives anyway: owed back by hand.
	if _, err := registration.Of(svc).Reset(context.Background(), engine.DemoUserKey, f.ProcessIDString()); err != nil {
		t.Fatal(err)
	}
	whole := ck.Conforming(anon, http.MethodPost, capture, map[string]any{"amount": engine.FormatAmount(p.AmountMinor), "id": "credit-2"}, Bearer(write)...)
	WantStatus(t, whole, http.StatusOK)
	if whole.JSON(t, &res); res.Result != "refund" {
		t.Fatalf("transfer for a cancelled order: %s", whole.Body)
	}
	attention := "/api/admin/payments/attention"
	list := ck.Conforming(anon, http.MethodGet, attention, nil, Bearer(read)...)
	WantStatus(t, list, http.StatusOK)
	if !strings.Contains(string(list.Body), `"action":"refundByHand"`) || !strings.Contains(string(list.Body), p.Reference) {
		t.Fatalf("payments needing attention: %s", list.Body)
	}
	WantStatus(t, ck.Do(anon, http.MethodGet, attention, nil), http.StatusUnauthorized)

	refunded := "/api/admin/payments/" + p.Reference + "/refunded"
	WantStatus(t, ck.Do(anon, http.MethodPost, refunded, map[string]any{"note": strings.Repeat("x", 501)}, Bearer(write)...), http.StatusUnprocessableEntity)
	WantStatus(t, ck.Do(anon, http.MethodPost, refunded, `{"note":`, Bearer(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPost, refunded, "x", Bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPost, refunded, map[string]any{}, Bearer(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, refunded, map[string]any{}), http.StatusUnauthorized)
	WantStatus(t, ck.Do(anon, http.MethodPost, "/api/admin/payments/PR-NOTOURS/refunded", map[string]any{}, Bearer(write)...), http.StatusNotFound)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, refunded, map[string]any{"note": "transferred back"}, Bearer(write)...), http.StatusOK)
	WantStatus(t, ck.Do(anon, http.MethodPost, refunded, map[string]any{}, Bearer(write)...), http.StatusConflict)
	if list := ck.Do(anon, http.MethodGet, attention, nil, Bearer(read)...); strings.TrimSpace(string(list.Body)) != "[]" {
		t.Fatalf("still needing attention: %s", list.Body)
	}
}

// Bearer is the admin API's Authorization header for key, with more headers.
func Bearer(key string, more ...string) []string {
	return append([]string{"Authorization", "Bearer " + key}, more...)
}

// ApiKey makes an admin API key of an organisation.
func (env *Env) ApiKey(orgID int64, scope organisation.APIKeyScope) (string, int64) {
	env.TB.Helper()
	key, k, err := organisation.Of(engine.NewService(env.DB, nil)).CreateAPIKey(context.Background(), orgID, "test", scope)
	if err != nil {
		env.TB.Fatal(err)
	}
	return key, k.ID
}

// Admin sends an admin API request with the API key key.
func (env *Env) Admin(key, method, path string, body any, headers ...string) Response {
	env.TB.Helper()
	return env.Do(env.NewClient(), method, path, body, append([]string{"Authorization", "Bearer " + key}, headers...)...)
}

// CheckMembershipTypeResponses produces every documented response of the
// membership type change and delete, for TestOpenAPIResponses
// (organisation 1's keys; its type 1 has memberships).
func CheckMembershipTypeResponses(t *testing.T, ck *APIChecker, anon *http.Client, write, read string, crossSite []string) {
	t.Helper()
	created := ck.Conforming(anon, http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "VETERAN", "name": "Veteran"}, BearerOf(write)...)
	var typ struct{ ID int64 }
	created.JSON(t, &typ)
	one := fmt.Sprintf("/api/admin/membership-types/%d", typ.ID)
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, map[string]any{"name": "Veterans", "minAge": 70}, BearerOf(write)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, map[string]any{"minAge": -1}, BearerOf(write)...), http.StatusUnprocessableEntity)
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, map[string]any{"code": "SENIOR"}, BearerOf(write)...), http.StatusConflict)
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, "/api/admin/membership-types/999", map[string]any{"name": "X"}, BearerOf(write)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, `{"name":`, BearerOf(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, "x", BearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, map[string]any{}, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, map[string]any{}, BearerOf(write, crossSite...)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, map[string]any{}), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodDelete, "/api/admin/membership-types/1", nil, BearerOf(write)...), http.StatusConflict)
	WantStatus(t, ck.Do(anon, http.MethodDelete, one, nil, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodDelete, one, nil), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodDelete, one, nil, BearerOf(write)...), http.StatusNoContent)
	WantStatus(t, ck.Conforming(anon, http.MethodDelete, one, nil, BearerOf(write)...), http.StatusNotFound)
}

// WebhookEndpointDTO is the admin API's webhook endpoint as the tests read it.
type WebhookEndpointDTO struct {
	ID     int64    `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Active bool     `json:"active"`
	Secret string   `json:"secret"`
}

// CheckWebhookResponses produces every documented response of the webhook
// endpoints' routes (TestOpenAPIResponses).
func CheckWebhookResponses(t *testing.T, ck *APIChecker, anon *http.Client, write, read string) {
	t.Helper()
	hooks := "/api/admin/webhooks"
	good := map[string]any{"url": "https://club.example/hooks", "events": []string{"registration.committed"}}
	created := ck.Conforming(anon, http.MethodPost, hooks, good, BearerOf(write)...)
	WantStatus(t, created, http.StatusCreated)
	var ep WebhookEndpointDTO
	created.JSON(t, &ep)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, hooks, map[string]any{"url": "ftp://x", "events": []string{}}, BearerOf(write)...), http.StatusUnprocessableEntity)
	WantStatus(t, ck.Do(anon, http.MethodPost, hooks, `{"url":`, BearerOf(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPost, hooks, "x", BearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPost, hooks, good, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, hooks, good), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, hooks, nil, BearerOf(read)...), http.StatusOK)
	WantStatus(t, ck.Do(anon, http.MethodGet, hooks, nil), http.StatusUnauthorized)

	one := hooks + "/" + strconv.FormatInt(ep.ID, 10)
	const missing = "/api/admin/webhooks/999"
	patch := map[string]any{"active": false}
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, patch, BearerOf(write)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, map[string]any{"url": "http://club.example/"}, BearerOf(write)...), http.StatusUnprocessableEntity)
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, missing, patch, BearerOf(write)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, `{"active":`, BearerOf(write)...), http.StatusBadRequest)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, "x", BearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, patch, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPatch, one, patch), http.StatusUnauthorized)

	WantStatus(t, ck.Conforming(anon, http.MethodPost, one+"/rotate-secret", nil, BearerOf(write)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, missing+"/rotate-secret", nil, BearerOf(write)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodPost, one+"/rotate-secret", nil, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, one+"/rotate-secret", nil), http.StatusUnauthorized)

	WantStatus(t, ck.Conforming(anon, http.MethodGet, one+"/deliveries", nil, BearerOf(read)...), http.StatusOK)
	WantStatus(t, ck.Conforming(anon, http.MethodGet, missing+"/deliveries", nil, BearerOf(read)...), http.StatusNotFound)
	WantStatus(t, ck.Do(anon, http.MethodGet, one+"/deliveries", nil), http.StatusUnauthorized)

	// A delivered event to replay, written as the engine would have.
	WantStatus(t, ck.Conforming(anon, http.MethodPatch, one, map[string]any{"active": true}, BearerOf(write)...), http.StatusOK)
	ctx := t.Context()
	db := ck.Env.DB
	if _, err := db.ExecContext(ctx, "INSERT INTO webhook_events (public_id, organisation_id, type, body, created_at) VALUES (?, 1, ?, ?, ?)",
		"evt_replay", engine.EventRegistrationCommitted, `{"id":"evt_replay"}`, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO webhook_deliveries (event_id, endpoint_id, job_key, status, attempts, created_at) "+
		"SELECT id, ?, 'webhook:evt_replay', ?, 1, ? FROM webhook_events WHERE public_id = 'evt_replay'", ep.ID, engine.DeliveryDelivered, clock.Now()); err != nil {
		t.Fatal(err)
	}
	var delivered int64
	if err := db.NewSelect().Table("webhook_deliveries").Column("id").Where("job_key = 'webhook:evt_replay'").Scan(ctx, &delivered); err != nil {
		t.Fatal(err)
	}
	replay := fmt.Sprintf("%s/deliveries/%d/replay", one, delivered)
	WantStatus(t, ck.Do(anon, http.MethodPost, replay, nil, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodPost, replay, nil), http.StatusUnauthorized)
	queued := ck.Conforming(anon, http.MethodPost, replay, nil, BearerOf(write)...)
	WantStatus(t, queued, http.StatusAccepted)
	var again struct {
		ID      int64  `json:"id"`
		EventID string `json:"eventId"`
		Status  string `json:"status"`
	}
	queued.JSON(t, &again)
	if again.EventID != "evt_replay" || again.Status != engine.DeliveryPending || again.ID == delivered {
		t.Fatalf("replay: %s", queued.Body)
	}
	WantStatus(t, ck.Conforming(anon, http.MethodPost, fmt.Sprintf("%s/deliveries/%d/replay", one, again.ID), nil, BearerOf(write)...), http.StatusConflict)
	WantStatus(t, ck.Conforming(anon, http.MethodPost, one+"/deliveries/999/replay", nil, BearerOf(write)...), http.StatusNotFound)

	WantStatus(t, ck.Do(anon, http.MethodDelete, one, nil, BearerOf(read)...), http.StatusForbidden)
	WantStatus(t, ck.Do(anon, http.MethodDelete, one, nil), http.StatusUnauthorized)
	WantStatus(t, ck.Conforming(anon, http.MethodDelete, one, nil, BearerOf(write)...), http.StatusNoContent)
	WantStatus(t, ck.Conforming(anon, http.MethodDelete, one, nil, BearerOf(write)...), http.StatusNotFound)
}

// BulkReads are the access log's export entries of organisation orgID
// whose record starts with prefix, oldest first.
func BulkReads(t *testing.T, db *bun.DB, orgID int64, prefix string) []privacy.AccessEntry {
	t.Helper()
	var rows []privacy.AccessEntry
	if err := db.NewSelect().Model(&rows).Where("organisation_id = ? AND kind = ?", orgID, privacy.AccessExport).Order("id").Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []privacy.AccessEntry
	for _, r := range rows {
		if strings.HasPrefix(r.RecordID, prefix) {
			out = append(out, r)
		}
	}
	return out
}
