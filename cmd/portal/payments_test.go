package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/cmd/portal/config"
	"portal/engine"
)

// TestBankTransferRequiresBankDetails: bank_transfer is refused at
// start-up without an account, and accepted with one.
func TestBankTransferRequiresBankDetails(t *testing.T) {
	_, err := runCmd(t, env("PORTAL_PAYMENT_PROVIDER", "bank_transfer", "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_ADDR", "127.0.0.1:0"), "serve")
	if err == nil || !strings.Contains(err.Error(), "PORTAL_BANK_IBAN") {
		t.Fatalf("serve with bank_transfer and no account: %v", err)
	}
	cfg, _, err := config.Load(newFlagSet("config", nil), nil, env("PORTAL_PAYMENT_PROVIDER", "bank_transfer",
		"PORTAL_BANK_CREDITOR_NAME", "TV Demo", "PORTAL_BANK_IBAN", "DE89 3704 0044 0532 0130 00"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.ValidatePayments(); err != nil {
		t.Fatalf("ValidatePayments: %v", err)
	}
	p, _, err := paymentProvider(cfg)
	if err != nil || p.Name() != "bank_transfer" {
		t.Fatalf("provider %v, %v", p, err)
	}
}

// TestPaymentsCommands runs capture and import against a migrated SQLite
// database without open payments (the engine's tests settle real ones):
// usage errors, an unknown reference, and the fixture statement listed
// with every credit unknown, nothing captured.
func TestPaymentsCommands(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_BANK_CREDITOR_NAME", "TV Demo",
		"PORTAL_BANK_IBAN", "DE89370400440532013000")
	if out, err := runCmd(t, e, "migrate", "up"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"payments"}, {"payments", "refund"}, {"payments", "capture", "RF18539007547034"}, {"payments", "import"}} {
		if _, err := runCmd(t, e, args...); err == nil || !strings.Contains(err.Error(), "usage") && !strings.Contains(err.Error(), "--amount") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if _, err := runCmd(t, e, "payments", "capture", "RF18539007547034", "--amount", "1.5x"); err == nil || !strings.Contains(err.Error(), "amount") {
		t.Errorf("bad amount: %v", err)
	}
	if _, err := runCmd(t, e, "payments", "capture", "RF18539007547034", "--amount", "184.50", "--date", "yesterday"); err == nil || !strings.Contains(err.Error(), "--date") {
		t.Errorf("bad date: %v", err)
	}
	if _, err := runCmd(t, e, "payments", "capture", "RF18 5390 0754 7034", "--amount", "184.50"); err == nil || !strings.Contains(err.Error(), "no bank transfer has the reference") {
		t.Errorf("unknown reference: %v", err)
	}
	if _, err := runCmd(t, env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db")), "payments", "import", "x.xml"); err == nil || !strings.Contains(err.Error(), "PORTAL_BANK_IBAN") {
		t.Errorf("import without bank details: %v", err)
	}
	fixture := filepath.Join("..", "..", "engine", "banking", "testdata", "camt053_v02.xml")
	for _, dry := range []bool{true, false} {
		args := []string{"payments", "import", fixture}
		if dry {
			args = append(args, "--dry-run")
		}
		out, err := runCmd(t, e, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if !strings.Contains(out, "camt.053.001.02 STMT-2026-11-0001") || !strings.Contains(out, "2026110300001") ||
			strings.Contains(out, "captured, completed") || strings.Contains(out, "recorded, not") || strings.Contains(out, "would capture") || strings.Count(out, " unknown ") != 8 {
			t.Errorf("%v:\n%s", args, out)
		}
		if dry != strings.Contains(out, "dry run") {
			t.Errorf("%v: dry run not said:\n%s", args, out)
		}
		if !dry && strings.Count(out, "kept unmatched") != 8 {
			t.Errorf("%v: credits not kept:\n%s", args, out)
		}
	}

	// The kept credits: listed, resolved from the command line, and skipped by a second import.
	out, err := runCmd(t, e, "payments", "credits")
	if err != nil || strings.Count(out, " unmatched ") != 8 || !strings.Contains(out, "Udo Unbekannt") || !strings.Contains(out, "RF35PRUNKNO2345UNKNO234") {
		t.Fatalf("credits: %v\n%s", err, out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	if _, err := runCmd(t, e, "payments", "credits", "--resolve", id); err == nil || !strings.Contains(err.Error(), "--as") {
		t.Errorf("resolve without --as: %v", err)
	}
	if _, err := runCmd(t, e, "payments", "credits", "--resolve", id, "--as", "returned"); err == nil || !strings.Contains(err.Error(), "note") {
		t.Errorf("return without a note: %v", err)
	}
	if out, err := runCmd(t, e, "payments", "credits", "--resolve", id, "--as", "returned", "--note", "sent back 2026-11-23"); err != nil || !strings.Contains(out, "returned") {
		t.Errorf("return: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "payments", "credits", "--state", "returned"); err != nil || !strings.Contains(out, "sent back 2026-11-23") || strings.Contains(out, " unmatched ") {
		t.Errorf("returned credits: %v\n%s", err, out)
	}
	if _, err := runCmd(t, e, "payments", "credits", "--state", "lost"); err == nil || !strings.Contains(err.Error(), "--state") {
		t.Errorf("bad state: %v", err)
	}
	if out, err := runCmd(t, e, "payments", "import", fixture); err != nil || !strings.Contains(out, "8 imported before") {
		t.Errorf("second import: %v\n%s", err, out)
	}
	// Returned direct debits naming no debit of the account's clubs: each
	// reported, nothing changed, the statement's credit still imported.
	returns := filepath.Join("..", "..", "engine", "banking", "testdata", "camt053_v08_returns.xml")
	out, err = runCmd(t, e, "payments", "import", returns)
	if err != nil || !strings.Contains(out, "unknown direct debit return ORDER-102 (EUR 45.50): nothing changed") ||
		!strings.Contains(out, "unknown direct debit return ORDER-103") || !strings.Contains(out, "unknown direct debit return ORDER-106") ||
		!strings.Contains(out, "2026121500001") {
		t.Errorf("import of returns: %v\n%s", err, out)
	}
}

// TestPaymentSettingsCommand: an organisation's own payment settings on
// the command line: refused with the field named, set with keys read from
// files and never printed, listed; and the staff commands' refusals.
func TestPaymentSettingsCommand(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_SESSION_KEY", strings.Repeat("ab", 32))
	for _, args := range [][]string{{"migrate", "up"}, {"orgs", "create", "--name", "Riverside", "--slug", "riverside"}} {
		if out, err := runCmd(t, e, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if _, err := runCmd(t, e, "payments", "settings"); err == nil || !strings.Contains(err.Error(), "--org") {
		t.Errorf("settings without --org: %v", err)
	}
	_, err := runCmd(t, e, "payments", "settings", "--org", "1", "--provider", "bank_transfer", "--creditor-name", "Riverside RC", "--iban", "DE00 3704 0044 0532 0130 00")
	if err == nil || !strings.Contains(err.Error(), "bankIban") {
		t.Errorf("bad IBAN: %v", err)
	}
	keyFile, hookFile := filepath.Join(dir, "key"), filepath.Join(dir, "hook")
	if err := os.WriteFile(keyFile, []byte("sk_test_riverside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookFile, []byte("whsec_riverside"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, e, "payments", "settings", "--org", "1", "--provider", "stripe", "--stripe-key-file", keyFile, "--stripe-webhook-secret-file", hookFile,
		"--creditor-name", "Riverside RC", "--iban", "DE89 3704 0044 0532 0130 00")
	if err != nil {
		t.Fatalf("set: %v\n%s", err, out)
	}
	if !strings.Contains(out, "stripe") || !strings.Contains(out, "DE89370400440532013000") || strings.Contains(out, "sk_test") || strings.Contains(out, "whsec_") ||
		!strings.Contains(out, "set (write-only)") {
		t.Errorf("settings shown:\n%s", out)
	}
	if out, err = runCmd(t, e, "payments", "settings", "--org", "1"); err != nil || !strings.Contains(out, "stripe") {
		t.Errorf("settings listed: %v\n%s", err, out)
	}
	// Payment methods (issue 29): an invalid Creditor Identifier is named,
	// then the methods and direct-debit settings are stored and shown.
	if _, err = runCmd(t, e, "payments", "settings", "--org", "1", "--methods", "stripe,direct_debit", "--creditor-id", "DE97ZZZ09999999999"); err == nil ||
		!strings.Contains(err.Error(), "debitCreditorId") {
		t.Errorf("invalid creditor identifier: %v", err)
	}
	out, err = runCmd(t, e, "payments", "settings", "--org", "1", "--methods", "stripe, direct_debit", "--creditor-id", "DE98ZZZ09999999999",
		"--prenotification-days", "7", "--debit-file-version", "pain.008.001.02")
	if err != nil || !strings.Contains(out, "stripe, direct_debit") || !strings.Contains(out, "DE98ZZZ09999999999") || !strings.Contains(out, "pain.008.001.02") {
		t.Errorf("methods set: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "payments", "attention"); err != nil || !strings.Contains(out, "TO DO") {
		t.Errorf("attention: %v\n%s", err, out)
	}
	if _, err = runCmd(t, e, "payments", "refunded", "PR-NOTOURS"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("refunded unknown: %v", err)
	}
	if _, err = runCmd(t, e, "payments", "import", "x.xml", "--org", "1"); err == nil || strings.Contains(err.Error(), "no bank account") {
		t.Errorf("import for an organisation with an account should get past the account: %v", err)
	}
}

// TestCommandLinksNameTheClubsHost: the service the payment commands
// (payments import, debits, books) and the organisation commands work with
// knows the portal's public address, so the links they queue (a returned
// debit's pay link in the member's e-mail) name each club's own host, as
// the server's do: the tennis club's members are sent to 127.0.0.1, where
// their order is found, not to the portal's base address (the rowing
// club's).
func TestCommandLinksNameTheClubsHost(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "l.db"), "PORTAL_BASE_URL", "http://localhost:8080",
		"PORTAL_HASH_SECRET", "a-development-secret-0123")
	if out, err := runCmd(t, e, "seed", "demo", "--tenants"); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	cfg, _, err := loadConfigAround(newFlagSet("test", io.Discard), nil, e)
	if err != nil {
		t.Fatal(err)
	}
	svc, closeDB, err := paymentService(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	if got := svc.OrgBase(context.Background(), svc.DB(), 2); got != "http://127.0.0.1:8080" {
		t.Errorf("payment commands: the tennis club's links go to %q, want its own host http://127.0.0.1:8080", got)
	}
	if err := withService(context.Background(), cfg, func(s *engine.Service) error {
		if got := s.OrgBase(context.Background(), s.DB(), 2); got != "http://127.0.0.1:8080" {
			t.Errorf("organisation commands: the tennis club's links go to %q", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPaymentSettingsDirectDebitOnlyInEuro: the demo tennis club's season
// is in Swiss francs, so `payments settings` refuses direct debit for it
// with the reason at the methods, and changes nothing; the rowing club,
// whose season is in euro, may offer it.
func TestPaymentSettingsDirectDebitOnlyInEuro(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"))
	for _, args := range [][]string{{"migrate", "up"}, {"seed", "demo", "--tenants"}} {
		if out, err := runCmd(t, e, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	_, err := runCmd(t, e, "payments", "settings", "--org", "2", "--methods", "bank_transfer,direct_debit", "--creditor-id", "DE98ZZZ09999999999")
	if err == nil || !strings.Contains(err.Error(), "methods: direct_debit collects in EUR only") || !strings.Contains(err.Error(), "CHF") {
		t.Fatalf("direct debit for the CHF club: %v", err)
	}
	if out, err := runCmd(t, e, "payments", "settings", "--org", "2"); err != nil || strings.Contains(out, "direct_debit") || strings.Contains(out, "DE98ZZZ09999999999") {
		t.Fatalf("the refused change was stored (%v):\n%s", err, out)
	}
	if out, err := runCmd(t, e, "payments", "settings", "--org", "1", "--methods", "bank_transfer,direct_debit", "--creditor-id", "DE98ZZZ09999999999",
		"--creditor-name", "Riverside RC", "--iban", "DE89 3704 0044 0532 0130 00"); err != nil || !strings.Contains(out, "bank_transfer, direct_debit") {
		t.Fatalf("direct debit for the EUR club: %v\n%s", err, out)
	}
}
