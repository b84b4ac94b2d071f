package config

import (
	"flag"
	"log/slog"
	"slices"
	"testing"
	"time"

	"portal/engine/banking"
	"portal/relay/session"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "1048576": 1 << 20, "64KiB": 64 << 10, "10MiB": 10 << 20, "1GiB": 1 << 30} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "10MB", "x", "99999999GiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

// Each setting is parsed once, as it is read: the typed fields hold the
// values, and a flag that replaces text which did not parse replaces its
// problem too.
func TestLoadConfigTyped(t *testing.T) {
	key := session.GenerateKey()
	cfg, _, err := Load(flag.NewFlagSet("test", flag.ContinueOnError), []string{"--relay-connect-timeout", "2s", "--hsts-max-age", "720h"},
		env("PORTAL_RELAY_CONNECT_TIMEOUT", "soon", "PORTAL_RELAY_RESPONSE_TIMEOUT", "1m", "PORTAL_RELAY_MAX_BODY", "64KiB",
			"PORTAL_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.10", "PORTAL_SESSION_KEY", key, "PORTAL_ADMIN_BACKEND_URL", "https://admin.example/root", "PORTAL_API_KEY", "k",
			"PORTAL_OIDC_SCOPES", "openid,email groups", "PORTAL_BANK_CREDITOR_NAME", "FC Biel", "PORTAL_BANK_IBAN", "ch93 0076 2011 6238 5295 7",
			"PORTAL_BANK_BIC", "pofi chbe xxx", "PORTAL_BANK_CREDITOR_ADDRESS", "Rue du Lac;1268;2501;Biel;ch", "PORTAL_SESSION_CACHE", "0", "PORTAL_LOG_LEVEL", "warn", "PORTAL_BASE_URL", "https://portal.example/"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RelayConnectTimeout != 2*time.Second || cfg.RelayResponseTimeout != time.Minute || cfg.RelayMaxBody != 64<<10 ||
		cfg.HSTSMaxAge != 720*time.Hour || cfg.SessionCache != 0 || cfg.LogLevel != slog.LevelWarn {
		t.Errorf("typed settings: connect %s response %s body %d hsts %s cache %s level %s", cfg.RelayConnectTimeout, cfg.RelayResponseTimeout,
			cfg.RelayMaxBody, cfg.HSTSMaxAge, cfg.SessionCache, cfg.LogLevel)
	}
	if len(cfg.TrustedProxies) != 2 || cfg.TrustedProxies[1].String() != "192.168.1.10/32" {
		t.Errorf("TrustedProxies %v", cfg.TrustedProxies)
	}
	if cfg.SessionKey == nil || cfg.AdminBackendURL == nil || cfg.AdminBackendURL.Path != "/root" || cfg.PublicURL == nil || cfg.PublicURL.Host != "portal.example" {
		t.Errorf("SessionKey %v, AdminBackendURL %v, PublicURL %v", cfg.SessionKey, cfg.AdminBackendURL, cfg.PublicURL)
	}
	if b := cfg.BankCreditor; b.Name != "FC Biel" || b.IBAN != "CH9300762011623852957" || b.BIC != "POFICHBEXXX" || b.Address == nil ||
		*b.Address != (banking.Address{Street: "Rue du Lac", Number: "1268", PostCode: "2501", Town: "Biel", Country: "CH"}) {
		t.Errorf("BankCreditor %+v (address %+v)", b, b.Address)
	}
	if !slices.Equal(cfg.OIDCScopes, []string{"openid", "email", "groups"}) {
		t.Errorf("OIDCScopes %q", cfg.OIDCScopes)
	}
	if problems := cfg.validateGateway(); len(problems) > 0 {
		t.Errorf("the flag's valid timeout left a problem: %q", problems)
	}
}

// env is a getenv of the variables given as name, value pairs.
func env(pairs ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return func(k string) string { return m[k] }
}
