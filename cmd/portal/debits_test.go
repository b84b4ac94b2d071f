package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/engine/payment/settings"

	"portal/engine"
	"portal/engine/banking"
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
	e := env("PORTAL_DATABASE_URL", "sqlite:"+dbFile)
	if out, err := runCmd(t, e, "migrate", "up"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	const creditorID = "DE98ZZZ09999999999"
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
	ctx := context.Background()
	if _, err := settings.Of(demo.Svc).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{BankCreditorName: ptrTo("TV Demo 1848 e.V."),
		BankIBAN: ptrTo("DE89370400440532013000"), Methods: &[]string{payment.BankTransferProvider, payment.DirectDebitProvider},
		DebitCreditorID: ptrTo(creditorID)}); err != nil {
		t.Fatal(err)
	}
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
