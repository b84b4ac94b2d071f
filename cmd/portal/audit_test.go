package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/engine"
	"portal/engine/dbtest"
)

// TestChangingCommandsAudit runs the commands that change a club's data,
// one after another on one database, and finds each one's audit entry
// written as "command line", on SQLite and PostgreSQL. A command that
// changes data and is not in this list must say why (changingCommandsNotRun).
func TestChangingCommandsAudit(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { changingCommandsAudit(t, "sqlite:"+filepath.Join(t.TempDir(), "p.db")) })
	t.Run("postgres", func(t *testing.T) {
		dbtest.SkipWithoutPostgres(t)
		changingCommandsAudit(t, postgresURL(t))
	})
}

// changingCommandsNotRun are the changing commands this test does not run,
// with where their "command line" audit is checked instead or why they
// write none.
var changingCommandsNotRun = map[string]string{
	"migrate up|down":                "the schema, not a club's data",
	"seed demo":                      "development data only",
	"jobs retry|run":                 "the portal's job queue; the staff jobs page audits its own",
	"payments capture|refunded":      "Actor: engine.CommandLine (payments.go); audited as the staff pages' (engine/payment)",
	"payments import|credits":        "Actor: engine.CommandLine; TestPaymentsCommands resolves a credit as the command line",
	"debits collect|sent|cancel":     "TestDebitsCommands",
	"invite create|revoke ID":        "TestInviteCommands",
	"webhooks add|update|rotate|...": "engine.CommandLine (webhooks.go), audited in engine/webhook",
	"restore FILE":                   "replaces the whole database, no server running; the audit log is the backup's (TestBackupRestoreMidSeason)",
}

func changingCommandsAudit(t *testing.T, databaseURL string) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", databaseURL, "PORTAL_SESSION_KEY", strings.Repeat("ab", 32), "PORTAL_HASH_SECRET", "0123456789abcdef")
	for _, args := range [][]string{{"migrate", "up"}, {"seed", "demo"}} {
		if out, err := runCmd(t, e, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	db, err := engine.OpenDB(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	csv := filepath.Join(dir, "members.csv")
	def := filepath.Join(dir, "def.json")
	for path, text := range map[string]string{
		csv: "externalId,firstName,lastName,dateOfBirth,email,userKeys\nH1,Ann,Able,1980-01-01,,fam-1\n",
		def: `{"key":"membership","name":"Membership","category":"MEMBERSHIP","organisationId":1,
			"steps":[{"name":"phone","questionText":"Phone","questionType":"TXT","required":true}]}`,
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		args   []string
		action string
	}{
		{[]string{"orgs", "create", "--name", "Hill", "--slug", "hill"}, "organisation.create"},
		{[]string{"orgs", "set", "--org", "1", "--contact", "board@club.example"}, "organisation.update"},
		{[]string{"apikeys", "create", "--org", "1", "--scope", "read", "--name", "sync"}, "api_key.create"},
		{[]string{"apikeys", "revoke", "--org", "1", "1"}, "api_key.revoke"},
		{[]string{"payments", "settings", "--org", "1", "--creditor-name", "TV Demo", "--iban", "DE89370400440532013000"}, "payment_settings.update"},
		{[]string{"definitions", "import", def}, "definition.import"},
		{[]string{"persons", "import", csv, "--org", "1"}, "persons.import"},
		{[]string{"persons", "unlink", "--org", "1", "H1", "fam-1"}, "persons.unlink"},
		{[]string{"invite", "--org", "1", "--period", "1", "--user-keys", engine.DemoUserKey, "--mail=false"}, "invitation.create"},
		{[]string{"invite", "revoke", "--org", "1", "--period", "1", "--user-key", engine.DemoUserKey}, "invitation.revoke"},
		{[]string{"staff", "add", "--org", "1", "--email", "ops@club.example", "--name", "Ops", "--role", "admin"}, "staff.add"},
		{[]string{"staff", "remove", "--org", "1", "--email", "ops@club.example"}, "staff.remove"},
		{[]string{"persons", "erase", "--org", "1", "--force", "4"}, "person.erase"},
	}
	for _, s := range steps {
		count := func() int64 {
			n, err := db.NewSelect().Table("audit_log").Where("action = ? AND actor = ?", s.action, engine.CommandLine.Name).Count(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := count()
		if out, err := runCmd(t, e, s.args...); err != nil {
			t.Fatalf("%v: %v\n%s", s.args, err, out)
		}
		if count() != before+1 {
			t.Errorf("%s: no %s entry by the command line", strings.Join(s.args[:2], " "), s.action)
		}
	}
}

// TestChangingCommandsNotRunAreCommands holds the list above to the
// program: each names a command the usage lists, with its reason, so a
// renamed or removed command cannot stay listed as covered.
func TestChangingCommandsNotRunAreCommands(t *testing.T) {
	for cmd, why := range changingCommandsNotRun {
		if name := strings.Fields(cmd)[0]; why == "" || !strings.Contains(usage(), "\n  "+name+" ") {
			t.Errorf("%q: not a command of the usage, or no reason given (%q)", cmd, why)
		}
	}
}
