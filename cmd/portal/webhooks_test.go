package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The webhooks commands end to end on a real (SQLite) database.
func TestWebhooksCommands(t *testing.T) {
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	e := env("PORTAL_DATABASE_URL", dbURL, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_SESSION_KEY", strings.Repeat("ab", 32),
		"PORTAL_BASE_URL", "https://portal.example")
	if out, err := runCmd(t, e, "seed", "demo"); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	noKey := env("PORTAL_DATABASE_URL", dbURL, "PORTAL_HASH_SECRET", "0123456789abcdef")
	if _, err := runCmd(t, noKey, "webhooks", "add", "--org", "1", "--url", "https://club.example/h"); err == nil || !strings.Contains(err.Error(), "PORTAL_SESSION_KEY") {
		t.Fatalf("add without a session key: %v", err)
	}
	if _, err := runCmd(t, e, "webhooks", "add", "--org", "1", "--url", "http://club.example/h", "--events", "payment.lost"); err == nil ||
		!strings.Contains(err.Error(), "url") || !strings.Contains(err.Error(), "events") {
		t.Fatalf("add with a bad url and event: %v", err)
	}
	if _, err := runCmd(t, e, "webhooks", "add", "--org", "1", "--url", "https://192.168.1.20/h"); err == nil || !strings.Contains(err.Error(), "public address") {
		t.Fatalf("add on a private address: %v", err)
	}
	out, err := runCmd(t, e, "webhooks", "add", "--org", "1", "--url", "https://club.example/h", "--events", "payment.succeeded")
	if err != nil || !regexp.MustCompile(`added endpoint 1: .*\nsigning secret \(shown once\): whsec_\S+`).MatchString(out) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "webhooks", "list", "--org", "1"); err != nil || !strings.Contains(out, "https://club.example/h") || strings.Contains(out, "whsec_") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "webhooks", "update", "--org", "1", "--active=false", "1"); err != nil || !strings.Contains(out, "active false") {
		t.Fatalf("update: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "webhooks", "rotate", "--org", "1", "1"); err != nil || !strings.Contains(out, "whsec_") {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "webhooks", "deliveries", "--org", "1", "1"); err != nil || !strings.Contains(out, "NEXT RETRY") {
		t.Fatalf("deliveries: %v\n%s", err, out)
	}
	if _, err = runCmd(t, e, "webhooks", "replay", "--org", "1", "1", "99"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("replay of an unknown delivery: %v", err)
	}
	if _, err = runCmd(t, e, "webhooks", "replay", "--org", "1", "1"); err == nil || !strings.Contains(err.Error(), "DELIVERY-ID") {
		t.Fatalf("replay without a delivery id: %v", err)
	}
	if _, err = runCmd(t, e, "webhooks", "remove", "--org", "2", "1"); err == nil {
		t.Fatal("another organisation removed the endpoint")
	}
	if out, err = runCmd(t, e, "webhooks", "remove", "--org", "1", "1"); err != nil || !strings.Contains(out, "removed endpoint 1") {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "webhooks", "list", "--org", "1"); err != nil || strings.Contains(out, "club.example") {
		t.Fatalf("list after remove: %v\n%s", err, out)
	}
}

// Only a portal on a loopback address delivers webhooks to private and
// loopback endpoints.
func TestBaseURLIsLoopback(t *testing.T) {
	for base, want := range map[string]bool{
		"http://localhost:8080": true, "http://127.0.0.1:8080": true, "http://[::1]:8080": true,
		"https://portal.club.example": false, "https://10.0.0.5": false, "": false,
	} {
		if got := baseURLIsLoopback(base); got != want {
			t.Errorf("baseURLIsLoopback(%q) = %v, want %v", base, got, want)
		}
	}
}
