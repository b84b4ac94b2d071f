package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/payment/settings"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/privacy"
)

// TestDebitsCommands: the treasurer's collection from the command line on
// a SQLite file: a direct-debit registration with its mandate is gathered
// by `debits collect` into a file written where asked (never over an
// existing one), listed and shown, written again unchanged, marked sent
// (the registration completes, once), a sent run cannot be cancelled, and
// nothing is due afterwards. Usage and unknown runs are clear errors.
func TestDebitsCommands(t *testing.T) {
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "d.db")
	e, db, demo := directDebitClubOnFile(t, dbFile)
	ctx := context.Background()
	demo.CommitPayingBy(payment.DirectDebitProvider, engine.DemoUserKey, 1, 2)
	var order engine.Order
	if err := db.NewSelect().Model(&order).Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := directdebit.Of(demo.Svc).GiveMandate(ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: "DE02120300000000202051",
		Consent: true, Language: "de"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, args := range [][]string{{"debits"}, {"debits", "nope"}, {"debits", "collect"}, {"debits", "show", "--org", "1"}, {"debits", "sent", "x", "--org", "1"},
		{"debits", "collect", "--org", "1", "--until", "soon"}} {
		if _, err := runCmd(t, e, args...); err == nil || !strings.Contains(err.Error(), "usage") && !strings.Contains(err.Error(), "--org") &&
			!strings.Contains(err.Error(), "run id") && !strings.Contains(err.Error(), "--until") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if _, err := runCmd(t, e, "debits", "show", "99", "--org", "1"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown run: %v", err)
	}
	file := filepath.Join(dir, "run.xml")
	out, err := runCmd(t, e, "debits", "collect", "--org", "1", "--out", file)
	if err != nil || !strings.Contains(out, "run 1 (DD-1-1): 1 debits") || !strings.Contains(out, "pain.008.001.08") {
		t.Fatalf("collect: %v\n%s", err, out)
	}
	written, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(written), "<MndtId>") || !strings.Contains(string(written), creditorID) {
		t.Fatalf("the file: %v\n%s", err, written)
	}
	if out, err := runCmd(t, e, "debits", "file", "1", "--org", "1", "--out", file); err == nil {
		t.Fatalf("the file written over an existing one:\n%s", out)
	}
	again, err := runCmd(t, e, "debits", "file", "1", "--org", "1")
	if err != nil || again != string(written) {
		t.Fatalf("the file again differs (%v):\n%s", err, again)
	}
	if out, err := runCmd(t, e, "debits", "list", "--org", "1"); err != nil || !strings.Contains(out, "prepared") || !strings.Contains(out, "dd-1-1-pain.008.001.08.xml") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "debits", "show", "1", "--org", "1"); err != nil || !strings.Contains(out, "FRST") || !strings.Contains(out, "DE02 … 2051") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "debits", "show", "1", "--org", "2"); err == nil {
		t.Fatalf("another organisation's run shown:\n%s", out)
	}
	if out, err := runCmd(t, e, "debits", "sent", "1", "--org", "1"); err != nil || !strings.Contains(out, "1 payments settled") {
		t.Fatalf("sent: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "debits", "sent", "1", "--org", "1"); err != nil || !strings.Contains(out, "0 payments settled, 1 unchanged (settled before)") {
		t.Fatalf("sent again: %v\n%s", err, out)
	}
	if _, err := runCmd(t, e, "debits", "cancel", "1", "--org", "1"); err == nil || !strings.Contains(err.Error(), "cannot be cancelled") {
		t.Fatalf("cancel a sent run: %v", err)
	}
	if _, err := runCmd(t, e, "debits", "collect", "--org", "1"); err == nil || !strings.Contains(err.Error(), "no direct debit is due") {
		t.Fatalf("collect with nothing due: %v", err)
	}
	db, err = engine.OpenDB("sqlite:" + dbFile)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.NewSelect().Model(&order).WherePK().Scan(ctx); err != nil || order.Status != engine.OrderPaid {
		t.Fatalf("order after the run was sent: %s %v", order.Status, err)
	}
	// The file was read twice (collect --out, file to standard output):
	// twice in the access log, as the command line; the refused write
	// over an existing file read nothing.
	var reads []privacy.AccessEntry
	if err := db.NewSelect().Model(&reads).Where("kind = ?", privacy.AccessExport).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(reads) != 2 || reads[0].RecordID != "debit-runs/1/file" || reads[1].Actor != engine.CommandLine.Name || reads[0].OrganisationID != 1 {
		t.Fatalf("access log of the run's file: %+v", reads)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestDebitsCollectLeavesOutBadDebit: a mandate for a Swiss account
// without its bank's BIC (given before the form asked for it) does not
// make `debits collect` fail for the club: the run is written with the
// other debit, and the command names the one left out with why, as do
// `debits show` and `payments attention`; when it is the only debit due,
// collect fails saying so, and writes no run.
func TestDebitsCollectLeavesOutBadDebit(t *testing.T) {
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "d.db")
	e, db, demo := directDebitClubOnFile(t, dbFile)
	ctx := context.Background()
	mandates := map[string]directdebit.MandateInput{
		engine.DemoUserKey: {Holder: "Alex Example", IBAN: "DE02120300000000202051", Consent: true, Language: "en"},
		"demo-1":           {Holder: "Kim Keller", IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A", Consent: true, Language: "en"},
	}
	// A second household, demo-1.
	if err := demodata.SeedDemo(ctx, db, 1, clock.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	var second []int64
	if err := db.NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").Where("user_key = ?", "demo-1").Order("person_id").Scan(ctx, &second); err != nil || len(second) == 0 {
		t.Fatalf("demo-1's persons %v: %v", second, err)
	}
	persons := map[string][]int64{engine.DemoUserKey: {1, 2}, "demo-1": second[:1]}
	var swiss engine.Order
	for _, key := range []string{engine.DemoUserKey, "demo-1"} {
		demo.CommitPayingBy(payment.DirectDebitProvider, key, persons[key]...)
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("user_key = ?", key).Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := directdebit.Of(demo.Svc).GiveMandate(ctx, order.PayReference, mandates[key])
		if err != nil {
			t.Fatal(err)
		}
		if key == "demo-1" {
			swiss = order
			// Given before the form asked for the BIC of an account outside the EEA.
			if _, err := db.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("bic = ''").Where("id = ?", m.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()

	out, err := runCmd(t, e, "debits", "collect", "--org", "1")
	if err != nil || !strings.Contains(out, "run 1 (DD-1-1): 1 debits") || !strings.Contains(out, "left out of the file") ||
		!strings.Contains(out, "order "+swiss.PayReference) || !strings.Contains(out, "BIC is required for an account in CH") || strings.Contains(out, "CH9300762011623852957") {
		t.Fatalf("collect with one mandate without its BIC: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "debits", "show", "1", "--org", "1"); err != nil || !strings.Contains(out, "order "+swiss.PayReference) {
		t.Fatalf("show: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "payments", "attention", "--org", "1"); err != nil || !strings.Contains(out, swiss.PayReference) ||
		!strings.Contains(out, "direct debit left out of the collection file: ") || !strings.Contains(out, "BIC") {
		t.Fatalf("attention: %v\n%s", err, out)
	}
	if _, err := runCmd(t, e, "debits", "collect", "--org", "1"); err == nil || !strings.Contains(err.Error(), "can go into a collection file, so no run was written") ||
		!strings.Contains(err.Error(), swiss.PayReference) {
		t.Fatalf("collect with only the Swiss debit due: %v", err)
	}
	if out, err := runCmd(t, e, "debits", "list", "--org", "1"); err != nil || strings.Count(out, "prepared") != 1 {
		t.Fatalf("list: %v\n%s", err, out)
	}
}

// creditorID is the demo club's SEPA Creditor Identifier in these tests.
const creditorID = "DE98ZZZ09999999999"

// directDebitClubOnFile migrates a SQLite file for the commands (the
// environment e names it), seeds the demo and lets its club collect by
// direct debit beside bank transfer.
func directDebitClubOnFile(t *testing.T, dbFile string) (func(string) string, *bun.DB, *enginetest.Demo) {
	t.Helper()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+dbFile)
	if out, err := runCmd(t, e, "migrate", "up"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	db, err := engine.OpenDB("sqlite:" + dbFile)
	if err != nil {
		t.Fatal(err)
	}
	dd, err := directdebit.New(banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: "DE89370400440532013000"}, creditorID,
		func(ref string, _ int64) string { return "/pay/" + ref })
	if err != nil {
		t.Fatal(err)
	}
	demo := enginetest.Seed(t, db, payment.WithPaymentMethodProviders(func(_ int64, m string) engine.PaymentProvider {
		if m == payment.DirectDebitProvider {
			return dd
		}
		return nil
	}))
	if _, err := settings.Of(demo.Svc).SetPaymentSettings(context.Background(), 1, settings.PaymentSettingsChange{BankCreditorName: ptrTo("TV Demo 1848 e.V."),
		BankIBAN: ptrTo("DE89370400440532013000"), Methods: &[]string{payment.BankTransferProvider, payment.DirectDebitProvider},
		DebitCreditorID: ptrTo(creditorID)}); err != nil {
		t.Fatal(err)
	}
	return e, db, demo
}
