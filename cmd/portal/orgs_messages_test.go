package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/message"
)

// TestOrgsSetMessageSettings: portal orgs set changes the message
// settings given; an invalid one is named and changes nothing, not even
// the organisation's other flags of the same command.
func TestOrgsSetMessageSettings(t *testing.T) {
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "p.db")
	e := env("PORTAL_DATABASE_URL", "sqlite:"+dbFile, "PORTAL_HASH_SECRET", "0123456789abcdef")
	if _, err := runCmd(t, e, "seed", "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, e, "orgs", "set", "--org", "1", "--name", "Renamed", "--renewal-lead-days", "999", "--reply-to", "nope"); err == nil ||
		!strings.Contains(err.Error(), "messages.renewalLeadDays") || !strings.Contains(err.Error(), "messages.replyTo") {
		t.Fatalf("invalid settings: %v", err)
	}
	if out, err := runCmd(t, e, "orgs", "set", "--org", "1", "--unpaid-reminder-days", "5,2", "--sender-name", "Riverside Office", "--renewal-lead-days", "45"); err != nil ||
		!strings.Contains(out, "updated organisation 1") {
		t.Fatalf("orgs set: %v %s", err, out)
	}
	cfg, _, err := config.Load(newFlagSet("test", io.Discard), nil, e)
	if err != nil {
		t.Fatal(err)
	}
	db, closeDB, err := openDatabase(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	s, err := message.SettingsOf(context.Background(), db, 1)
	org, _ := engine.NewService(db, nil).Organisation(context.Background(), 1)
	if err != nil || !slices.Equal(s.UnpaidReminderDays, []int{2, 5}) || s.SenderName != "Riverside Office" || s.RenewalLeadDays != 45 ||
		s.ExpiryReminderDays != 30 || org.Name == "Renamed" {
		t.Fatalf("stored: %+v %v, name %q", s, err, org.Name)
	}
}
