package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/payment"
)

// checkAdminDebitResponses drives the admin API's collection runs through
// every documented response (TestOpenAPIResponses): organisation 1 now
// offers direct debit beside bank transfer, a household gives a mandate,
// the treasurer prepares a run, downloads its file twice (the same bytes),
// cancels it, prepares another and marks it sent, which completes the
// registration; a sent run cannot be cancelled. Another household's
// mandate for a Swiss account without its BIC (given before the form
// asked for it) is left out of each run, named in leftOut with why and
// listed among the payments needing attention.
func checkAdminDebitResponses(t *testing.T, ck *apiChecker, env *testEnv, anon *http.Client, crossSite []string) {
	t.Helper()
	write, _ := env.apiKey(1, organisation.ScopeWrite)
	read, _ := env.apiKey(1, organisation.ScopeRead)
	settings := ck.conforming(anon, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"bank_transfer", "direct_debit"},
		"debitCreditorId": "DE98ZZZ09999999999", "debitCollectionDay": 5, "debitReturnFeeMinor": 350}, bearer(write)...)
	wantStatus(t, settings, http.StatusOK)
	if !strings.Contains(string(settings.body), `"debitCollectionDay":5`) || !strings.Contains(string(settings.body), `"debitReturnFeeMinor":350`) {
		t.Fatalf("direct-debit settings: %s", settings.body)
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
		res := ck.conforming(anon, http.MethodPatch, "/api/admin/payment-settings", tc.patch, bearer(write)...)
		if res.status != http.StatusOK || !strings.Contains(string(res.body), tc.want) {
			t.Fatalf("%v: %d %s, want %s", tc.patch, res.status, res.body, tc.want)
		}
	}
	wantStatus(t, ck.do(anon, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"debitCollectionDay": 31}, bearer(write)...), http.StatusUnprocessableEntity)
	// A refused return fee names the API's own field.
	if res := ck.do(anon, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"debitReturnFeeMinor": 10001}, bearer(write)...); res.status != http.StatusUnprocessableEntity ||
		!strings.Contains(string(res.body), `"field":"debitReturnFeeMinor"`) {
		t.Fatalf("a return fee too high: %d %s", res.status, res.body)
	}

	svc := engine.NewService(env.db, env.gw, orgPayments(env.db, envOptions{}, env.gw)...)
	demo := &enginetest.Demo{T: t, DB: env.db, Svc: svc}
	demo.CommitPayingBy(payment.DirectDebitProvider, engine.DemoUserKey, 2)
	var order engine.Order
	if err := env.db.NewSelect().Model(&order).Where("payment_method = ?", payment.DirectDebitProvider).Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
		t.Fatalf("no direct-debit order: %v", err)
	}
	if _, err := directdebit.Of(svc).GiveMandate(context.Background(), order.PayReference, directdebit.MandateInput{Holder: "Sam Example", IBAN: "DE02120300000000202051",
		Consent: true, Language: "en"}); err != nil {
		t.Fatal(err)
	}

	demo.CommitPayingBy(payment.DirectDebitProvider, "demo-1", 5)
	var swissOrder engine.Order
	if err := env.db.NewSelect().Model(&swissOrder).Where("payment_method = ? AND user_key = ?", payment.DirectDebitProvider, "demo-1").Scan(context.Background()); err != nil {
		t.Fatalf("no direct-debit order of demo-1: %v", err)
	}
	swiss, err := directdebit.Of(svc).GiveMandate(context.Background(), swissOrder.PayReference, directdebit.MandateInput{Holder: "Kim Keller",
		IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A", Consent: true, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.db.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("bic = ''").Where("id = ?", swiss.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}

	runs := "/api/admin/debit-runs"
	wantStatus(t, ck.do(anon, http.MethodGet, runs, nil), http.StatusUnauthorized)
	if list := ck.conforming(anon, http.MethodGet, runs, nil, bearer(read)...); list.status != http.StatusOK || strings.TrimSpace(string(list.body)) != "[]" {
		t.Fatalf("runs before any: %d %s", list.status, list.body)
	}
	wantStatus(t, ck.do(anon, http.MethodPost, runs, map[string]any{}), http.StatusUnauthorized)
	wantStatus(t, ck.do(anon, http.MethodPost, runs, map[string]any{}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, runs, map[string]any{}, bearer(write, crossSite...)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, runs, `{"until":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, runs, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, runs, map[string]any{"until": "soon"}, bearer(write)...), http.StatusUnprocessableEntity)
	yesterday := clock.Now().AddDate(0, 0, -1).Format(time.DateOnly)
	wantStatus(t, ck.conforming(anon, http.MethodPost, runs, map[string]any{"until": yesterday}, bearer(write)...), http.StatusConflict)

	// Collection day 5: the order is due on the 5th after the 14 days.
	until := clock.Now().AddDate(0, 2, 0).Format(time.DateOnly)
	created := ck.conforming(anon, http.MethodPost, runs, map[string]any{"until": until}, bearer(write)...)
	wantStatus(t, created, http.StatusCreated)
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
	created.json(t, &run)
	if run.Status != "prepared" || run.DebitCount != 1 || run.TotalMinor != order.TotalMinor || len(run.LeftOut) != 1 ||
		run.LeftOut[0].OrderReference != swissOrder.PayReference || run.LeftOut[0].MandateReference != swiss.Reference ||
		run.LeftOut[0].RegistrationID != swissOrder.ProcessInstanceID || !strings.Contains(run.LeftOut[0].Reason, "BIC") {
		t.Fatalf("run: %s", created.body)
	}
	one := runs + "/" + strconv.FormatInt(run.ID, 10)
	got := ck.conforming(anon, http.MethodGet, one, nil, bearer(read)...)
	wantStatus(t, got, http.StatusOK)
	run.LeftOut = nil
	got.json(t, &run)
	if len(run.Debits) != 1 || run.Debits[0].SequenceType != "FRST" || !strings.HasSuffix(run.Debits[0].DueOn, "-05") && !isBusinessDayAfterFifth(run.Debits[0].DueOn) ||
		len(run.LeftOut) != 1 || run.LeftOut[0].OrderReference != swissOrder.PayReference {
		t.Fatalf("run with its debits: %s", got.body)
	}
	attention := ck.conforming(anon, http.MethodGet, "/api/admin/payments/attention", nil, bearer(read)...)
	var listed []struct{ OrderReference, Reason, Problem string }
	attention.json(t, &listed)
	if attention.status != http.StatusOK || !slices.ContainsFunc(listed, func(a struct{ OrderReference, Reason, Problem string }) bool {
		return a.OrderReference == swissOrder.PayReference && a.Reason == "debit_left_out" && strings.Contains(a.Problem, "left out of the collection file") && strings.Contains(a.Problem, "BIC")
	}) {
		t.Fatalf("the debit left out is not among the payments needing attention: %s", attention.body)
	}
	wantStatus(t, ck.do(anon, http.MethodGet, one, nil), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodGet, runs+"/999999", nil, bearer(read)...), http.StatusNotFound)
	file := ck.conforming(anon, http.MethodGet, one+"/file", nil, bearer(read)...)
	wantStatus(t, file, http.StatusOK)
	if again := ck.do(anon, http.MethodGet, one+"/file", nil, bearer(read)...); string(again.body) != string(file.body) ||
		!strings.Contains(file.header.Get("Content-Disposition"), run.FileName) || !strings.Contains(string(file.body), run.Debits[0].MandateReference) {
		t.Fatalf("the file again differs or lacks the mandate: %v\n%s", file.header, file.body)
	}
	wantStatus(t, ck.do(anon, http.MethodGet, one+"/file", nil), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodGet, runs+"/999999/file", nil, bearer(read)...), http.StatusNotFound)
	// Each download of every debtor's account is in the access log, by key.
	if rows := bulkReads(t, env.db, 1, "debit-runs/"); len(rows) != 2 || rows[0].RecordID != "debit-runs/"+strconv.FormatInt(run.ID, 10)+"/file" ||
		!strings.HasPrefix(rows[1].Actor, "API key ") {
		t.Fatalf("access log of the downloads: %+v", rows)
	}

	for _, action := range []string{"/cancel", "/sent"} {
		wantStatus(t, ck.do(anon, http.MethodPost, one+action, nil), http.StatusUnauthorized)
		wantStatus(t, ck.do(anon, http.MethodPost, one+action, nil, bearer(read)...), http.StatusForbidden)
		wantStatus(t, ck.conforming(anon, http.MethodPost, runs+"/999999"+action, nil, bearer(write)...), http.StatusNotFound)
	}
	wantStatus(t, ck.conforming(anon, http.MethodPost, one+"/cancel", nil, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, one+"/sent", nil, bearer(write)...), http.StatusConflict)
	// A cancelled run's file must not reach the bank: refused, as on the staff page.
	wantStatus(t, ck.conforming(anon, http.MethodGet, one+"/file", nil, bearer(read)...), http.StatusConflict)

	second := ck.conforming(anon, http.MethodPost, runs, map[string]any{"until": until}, bearer(write)...)
	wantStatus(t, second, http.StatusCreated)
	second.json(t, &run)
	two := runs + "/" + strconv.FormatInt(run.ID, 10)
	sent := ck.conforming(anon, http.MethodPost, two+"/sent", nil, bearer(write)...)
	wantStatus(t, sent, http.StatusOK)
	if !strings.Contains(string(sent.body), `"settled":1`) {
		t.Fatalf("marked sent: %s", sent.body)
	}
	wantStatus(t, ck.conforming(anon, http.MethodPost, two+"/cancel", nil, bearer(write)...), http.StatusConflict)
	if err := env.db.NewSelect().Model(&order).WherePK().Scan(context.Background()); err != nil || order.Status != engine.OrderPaid {
		t.Fatalf("order after the run was sent: %s %v", order.Status, err)
	}
}

// isBusinessDayAfterFifth says a due date is the first business day after
// a 5th that was none (a weekend or holiday).
func isBusinessDayAfterFifth(date string) bool {
	d, err := time.Parse(time.DateOnly, date)
	return err == nil && d.Day() > 5 && d.Day() <= 9
}
