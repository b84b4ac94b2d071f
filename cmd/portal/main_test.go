package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/cmd/portal/config"
)

// env builds a getenv from pairs.
func env(pairs ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return func(k string) string { return m[k] }
}

func runCmd(t *testing.T, getenv func(string) string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, getenv, &out, &errOut)
	return out.String() + errOut.String(), err
}

func TestConfig(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("from-a-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		getenv  func(string) string
		args    []string
		want    []string
		notWant []string
		wantErr string
	}{
		{name: "defaults", getenv: env(),
			want: []string{"PORTAL_ADDR=:8080", "PORTAL_DATABASE_URL=sqlite:portal.db", "PORTAL_COOKIE_SECURE=true", "PORTAL_BASE_URL=http://localhost:8080", "PORTAL_AUTO_MIGRATE=true"}},
		{name: "environment", getenv: env("PORTAL_ADDR", ":9000", "PORTAL_COOKIE_SECURE", "false", "PORTAL_LOG_FORMAT", "json"),
			want: []string{"PORTAL_ADDR=:9000", "PORTAL_BASE_URL=http://localhost:9000", "PORTAL_COOKIE_SECURE=false", "PORTAL_LOG_FORMAT=json"}},
		{name: "flags win over environment", getenv: env("PORTAL_ADDR", ":9000"), args: []string{"--addr", ":7000"},
			want: []string{"PORTAL_ADDR=:7000"}},
		{name: "secrets are masked", getenv: env("PORTAL_HASH_SECRET", "super-secret-value-123", "PORTAL_DATABASE_URL", "postgres://u:pw-123@db:5432/x?password=pw-456"),
			want: []string{"PORTAL_HASH_SECRET=****", "PORTAL_DATABASE_URL=postgres://u:xxxxx@db:5432/x"}, notWant: []string{"super-secret", "pw-123", "pw-456"}},
		{name: "secret from a file", getenv: env("PORTAL_HASH_SECRET_FILE", secretFile), want: []string{"PORTAL_HASH_SECRET=****"}, notWant: []string{"from-a-file"}},
		{name: "missing secret file", getenv: env("PORTAL_HASH_SECRET_FILE", "/nonexistent/secret"), wantErr: "PORTAL_HASH_SECRET_FILE"},
		{name: "bad boolean", getenv: env("PORTAL_COOKIE_SECURE", "maybe"), wantErr: "PORTAL_COOKIE_SECURE"},
		{name: "bad database url", getenv: env("PORTAL_DATABASE_URL", "mysql://x"), wantErr: "PORTAL_DATABASE_URL"},
		{name: "bad log format", getenv: env("PORTAL_LOG_FORMAT", "xml"), wantErr: "PORTAL_LOG_FORMAT"},
		{name: "bad base url", getenv: env("PORTAL_BASE_URL", "localhost"), wantErr: "PORTAL_BASE_URL"},
		{name: "hsts default a year", getenv: env(), want: []string{"PORTAL_HSTS_MAX_AGE=31536000", "PORTAL_SHUTDOWN_DELAY=0s", "PORTAL_METRICS_ADDR="}},
		{name: "hsts as a duration", getenv: env("PORTAL_HSTS_MAX_AGE", "720h"), want: []string{"PORTAL_HSTS_MAX_AGE=720h"}},
		{name: "bad hsts", getenv: env("PORTAL_HSTS_MAX_AGE", "-5"), wantErr: "PORTAL_HSTS_MAX_AGE"},
		{name: "bad shutdown delay", getenv: env("PORTAL_SHUTDOWN_DELAY", "forever"), wantErr: "PORTAL_SHUTDOWN_DELAY"},
		{name: "bank details", getenv: env("PORTAL_BANK_CREDITOR_NAME", "TV Köln 1848 e.V.", "PORTAL_BANK_IBAN", "de89 3704 0044 0532 0130 00", "PORTAL_BANK_BIC", "COBADEFFXXX"),
			want: []string{"PORTAL_BANK_CREDITOR_NAME=TV Köln 1848 e.V.", "PORTAL_BANK_IBAN=de89 3704 0044 0532 0130 00", "PORTAL_BANK_BIC=COBADEFFXXX", "PORTAL_BANK_CREDITOR_ADDRESS="}},
		{name: "Swiss bank details with address", getenv: env("PORTAL_BANK_CREDITOR_NAME", "FC Biel", "PORTAL_BANK_IBAN", "CH9300762011623852957", "PORTAL_BANK_CREDITOR_ADDRESS", "Rue du Lac;1268;2501;Biel;CH"),
			want: []string{"PORTAL_BANK_CREDITOR_ADDRESS=Rue du Lac;1268;2501;Biel;CH"}},
		{name: "bad IBAN", getenv: env("PORTAL_BANK_CREDITOR_NAME", "Club", "PORTAL_BANK_IBAN", "DE88370400440532013000"), wantErr: "PORTAL_BANK_IBAN: IBAN \"DE88370400440532013000\": check digits"},
		{name: "IBAN without name", getenv: env("PORTAL_BANK_IBAN", "DE89370400440532013000"), wantErr: "PORTAL_BANK_CREDITOR_NAME is required"},
		{name: "name without IBAN", getenv: env("PORTAL_BANK_CREDITOR_NAME", "Club"), wantErr: "PORTAL_BANK_IBAN is required"},
		{name: "bad BIC", getenv: env("PORTAL_BANK_CREDITOR_NAME", "Club", "PORTAL_BANK_IBAN", "DE89370400440532013000", "PORTAL_BANK_BIC", "COBA"), wantErr: "PORTAL_BANK_BIC"},
		{name: "Swiss account without address", getenv: env("PORTAL_BANK_CREDITOR_NAME", "FC Biel", "PORTAL_BANK_IBAN", "CH9300762011623852957"), wantErr: "PORTAL_BANK_CREDITOR_ADDRESS is required for a CH account"},
		{name: "Swiss QR-IBAN", getenv: env("PORTAL_BANK_CREDITOR_NAME", "FC Biel", "PORTAL_BANK_IBAN", "CH4431999123000889012", "PORTAL_BANK_CREDITOR_ADDRESS", "Rue du Lac;1268;2501;Biel;CH"), wantErr: "PORTAL_BANK_IBAN is a QR-IBAN"},
		{name: "address in free form", getenv: env("PORTAL_BANK_CREDITOR_NAME", "FC Biel", "PORTAL_BANK_IBAN", "CH9300762011623852957", "PORTAL_BANK_CREDITOR_ADDRESS", "Rue du Lac 1268, 2501 Biel"), wantErr: "PORTAL_BANK_CREDITOR_ADDRESS: address must be street;number;postcode;town;country"},
		{name: "name too long", getenv: env("PORTAL_BANK_CREDITOR_NAME", strings.Repeat("x", 71), "PORTAL_BANK_IBAN", "DE89370400440532013000"), wantErr: "PORTAL_BANK_CREDITOR_NAME has 71 characters"},
		{name: "metrics on the public address", getenv: env("PORTAL_ADDR", ":8080", "PORTAL_METRICS_ADDR", ":8080"), wantErr: "PORTAL_METRICS_ADDR"},
		{name: "metrics address without a port", getenv: env("PORTAL_METRICS_ADDR", "localhost"), wantErr: "PORTAL_METRICS_ADDR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCmd(t, tc.getenv, append([]string{"config"}, tc.args...)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w+"\n") {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(out, nw) {
					t.Errorf("output shows %q:\n%s", nw, out)
				}
			}
		})
	}
}

func TestServeRefusesWithoutSecret(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	_, err := runCmd(t, env("PORTAL_DATABASE_URL", db), "serve")
	if err == nil || !strings.Contains(err.Error(), "PORTAL_HASH_SECRET") {
		t.Fatalf("serve without a secret: %v", err)
	}
	_, err = runCmd(t, env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "short"), "serve")
	if err == nil || !strings.Contains(err.Error(), "16 characters") {
		t.Fatalf("serve with a short secret: %v", err)
	}
}

// TestServeRefusesTestPaymentsInProduction: the test gateway marks paid
// whatever it is told, so it must be chosen explicitly and runs only on an
// http loopback base URL, whatever the cookie setting; Stripe needs its keys.
func TestServeRefusesTestPaymentsInProduction(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"no provider", []string{"PORTAL_COOKIE_SECURE", "false"}, "PORTAL_PAYMENT_PROVIDER is required"},
		{"unknown provider", []string{"PORTAL_PAYMENT_PROVIDER", "acme"}, "is unknown"},
		{"test gateway on https", []string{"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_BASE_URL", "https://localhost:8443"}, "development only"},
		{"test gateway on a public host", []string{"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false", "PORTAL_BASE_URL", "http://portal.example.org"}, "loopback"},
		{"test gateway on a private address", []string{"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false", "PORTAL_BASE_URL", "http://10.0.0.5:8080"}, "loopback"},
		{"stripe without keys", []string{"PORTAL_PAYMENT_PROVIDER", "stripe"}, "PORTAL_STRIPE_SECRET_KEY"},
		{"stripe without webhook secret", []string{"PORTAL_PAYMENT_PROVIDER", "stripe", "PORTAL_STRIPE_SECRET_KEY", "sk_test_123"}, "PORTAL_STRIPE_WEBHOOK_SECRET"},
		{"stripe with a bad api url", []string{"PORTAL_PAYMENT_PROVIDER", "stripe", "PORTAL_STRIPE_SECRET_KEY", "sk_test_123",
			"PORTAL_STRIPE_WEBHOOK_SECRET", "whsec_123", "PORTAL_STRIPE_API_URL", "ftp://x"}, "PORTAL_STRIPE_API_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCmd(t, env(append([]string{"PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_ADDR", "127.0.0.1:0"}, tc.env...)...), "serve")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestStripeSecretsMasked: the Stripe keys come from *_FILE too and never print.
func TestStripeSecretsMasked(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("sk_test_from_file_123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(newFlagSet("config", io.Discard), nil, env("PORTAL_STRIPE_SECRET_KEY_FILE", keyFile, "PORTAL_STRIPE_WEBHOOK_SECRET", "whsec_secret_456",
		"PORTAL_PAYMENT_PROVIDER", "stripe"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StripeSecretKey != "sk_test_from_file_123" {
		t.Errorf("secret key from file = %q", cfg.StripeSecretKey)
	}
	if err := cfg.ValidatePayments(); err != nil {
		t.Errorf("ValidatePayments: %v", err)
	}
	out := cfg.String()
	for _, secret := range []string{"sk_test_from_file_123", "whsec_secret_456"} {
		if strings.Contains(out, secret) {
			t.Errorf("config prints the secret %q:\n%s", secret, out)
		}
	}
}

func TestServeRefusesStaleSchemaWithoutAutoMigrate(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	_, err := runCmd(t, env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_AUTO_MIGRATE", "false", "PORTAL_ADDR", "127.0.0.1:0",
		"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false"), "serve")
	if err == nil || !strings.Contains(err.Error(), "not up to date") {
		t.Fatalf("serve on an empty database without migrations: %v", err)
	}
}

func TestMigrateSeedAndImport(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef")
	out, err := runCmd(t, e, "migrate", "status")
	if err != nil || !strings.Contains(out, "pending") {
		t.Fatalf("status before: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "migrate", "up"); err != nil || !strings.Contains(out, "applied") {
		t.Fatalf("up: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "migrate", "up"); err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("second up: %v\n%s", err, out)
	}
	for range 2 { // idempotent
		out, err = runCmd(t, e, "seed", "demo", "--members", "2")
		if err != nil || !strings.Contains(out, "demo link: http://localhost:8080/membership/register/1?u=demo&h=") {
			t.Fatalf("seed: %v\n%s", err, out)
		}
	}
	def := filepath.Join(dir, "def.json")
	os.WriteFile(def, []byte(`{"key":"membership","name":"Membership","category":"MEMBERSHIP","organisationId":1,
		"steps":[{"name":"phone","questionText":"Phone","questionType":"TXT","required":true}]}`), 0o600)
	if out, err = runCmd(t, e, "definitions", "import", def); err != nil || !strings.Contains(out, "version 2") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "definitions", "import", def); err != nil || !strings.Contains(out, "unchanged") {
		t.Fatalf("import again: %v\n%s", err, out)
	}
	// The exported demo (version 1, with its conditions) imports unchanged.
	out, err = runCmd(t, e, "definitions", "export", "1", "membership", "1")
	if err != nil || !strings.Contains(out, "conditions:") || !strings.Contains(out, "step: transfer") {
		t.Fatalf("export: %v\n%s", err, out)
	}
	os.WriteFile(def, []byte(out), 0o600)
	if out, err = runCmd(t, e, "definitions", "import", def); err != nil || !strings.Contains(out, "version 3") {
		t.Fatalf("import of the export (version 2 is newer, so it comes back as 3): %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "definitions", "export", "--json", "1", "membership"); err != nil || !strings.Contains(out, `"conditions": [`) {
		t.Fatalf("export --json: %v\n%s", err, out)
	}
	os.WriteFile(def, []byte(out), 0o600)
	if out, err = runCmd(t, e, "definitions", "import", def); err != nil || !strings.Contains(out, "unchanged (version 3)") {
		t.Fatalf("import of the JSON export: %v\n%s", err, out)
	}
	if _, err = runCmd(t, e, "definitions", "export", "1", "nonexistent"); err == nil {
		t.Fatalf("export of an unknown definition succeeded")
	}
	os.WriteFile(def, []byte(`{"key":"membership","steps":[]}`), 0o600)
	if _, err = runCmd(t, e, "definitions", "import", def); err == nil {
		t.Fatalf("an invalid definition was imported")
	}
	if out, err = runCmd(t, e, "migrate", "down"); err != nil || !strings.Contains(out, "rolled back") {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if _, err = runCmd(t, e, "nonsense"); err == nil {
		t.Fatalf("an unknown command succeeded")
	}
}
