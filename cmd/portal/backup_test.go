package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/relay/hashlink"
	"portal/relay/session"
)

// TestBackupRestoreMidSeason backs up a serving SQLite portal in the
// middle of a season while the server writes, and restores the copy into
// a fresh folder: a registration in each state the season has (started,
// committed unpaid, paid by a captured transfer, paid by direct debit in
// a collection run that was sent, cancelled), the credits of an imported
// bank statement, a mandate and the audit log are all there, a server
// starts on the restored file, exports the same registrations and
// payments as the original, opens an unpaid order's pay link and signs a
// member in with the club's own hash secret, which is sealed in the
// database: with the session key kept beside the backup, not with
// another. backup never overwrites a file; restore is refused while a server holds the
// database and for a file that is not a portal database.
func TestBackupRestoreMidSeason(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	e, db, demo := directDebitClubOnFile(t, live)
	states := seasonRegistrations(t, db, bothMethods(t, demo))
	db.Close()

	sessionKey := session.GenerateKey()
	cmdEnv := func(dbFile string) func(string) string {
		return env("PORTAL_DATABASE_URL", "sqlite:"+dbFile, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_SESSION_KEY", sessionKey)
	}
	fixture := filepath.Join("..", "..", "engine", "banking", "testdata", "camt053_v02.xml")
	for _, args := range [][]string{
		{"payments", "capture", states.captured.PayReference, "--amount", engine.FormatAmount(states.captured.TotalMinor)},
		{"payments", "import", fixture, "--org", "1"},
		{"debits", "collect", "--org", "1"},
		{"debits", "sent", "1", "--org", "1"},
	} {
		if out, err := runCmd(t, e, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	// The club's own hash secret, sealed in the database with the session key.
	ownSecret := filepath.Join(dir, "own-secret")
	if err := os.WriteFile(ownSecret, []byte("riverside-own-hash-secret-42"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, cmdEnv(live), "orgs", "set", "--org", "1", "--hash-secret-file", ownSecret); err != nil {
		t.Fatalf("orgs set: %v\n%s", err, out)
	}
	key, _, err := runSplit(t, cmdEnv(live), "apikeys", "create", "--org", "1", "--scope", "write", "--name", "ops")
	if err != nil {
		t.Fatal(err)
	}
	key = strings.TrimSpace(key)

	base, stop := serveFile(t, cmdEnv(live))
	// The server writes (organisation changes, each with its audit entry)
	// while the backup is taken: the copy is the database at one moment.
	writing := make(chan struct{})
	wrote := make(chan error, 1)
	first := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			if i == 1 {
				close(first)
			}
			select {
			case <-writing:
				wrote <- nil
				return
			default:
			}
			if status, body := apiCall(t, http.MethodPatch, base+"/api/admin/organisation", key, fmt.Sprintf(`{"contactEmail":"office%d@club.example"}`, i)); status != http.StatusOK {
				wrote <- fmt.Errorf("PATCH %d: %d %s", i, status, body)
				if i == 0 {
					close(first)
				}
				return
			}
		}
	}()
	<-first
	waitForDueJobs(t, "sqlite:"+live)
	before := tableCounts(t, "sqlite:"+live)
	backup := filepath.Join(dir, "backups", "portal-mid-season.db")
	if err := os.Mkdir(filepath.Dir(backup), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, cmdEnv(live), "backup", "--out", backup)
	close(writing)
	if werr := <-wrote; werr != nil {
		t.Fatalf("the server's writes beside the backup: %v", werr)
	}
	if err != nil || !strings.Contains(out, "backed up") || !strings.Contains(out, "PORTAL_SESSION_KEY") {
		t.Fatalf("backup beside the server: %v\n%s", err, out)
	}
	if info, err := os.Stat(backup); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the backup file: %v %v, want readable by its owner only", info.Mode(), err)
	}
	if out, err := runCmd(t, cmdEnv(live), "backup", "--out", backup); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Fatalf("a backup over an existing file: %v\n%s", err, out)
	}
	if out, err := runCmd(t, cmdEnv(live), "restore", backup); !errors.Is(err, errSQLiteInUse) {
		t.Fatalf("restore while the server holds the database: %v\n%s", err, out)
	}
	liveExports := exports(t, base, key)
	stop()
	after := tableCounts(t, "sqlite:"+live)

	// Refused: a file that is not SQLite, and a SQLite file that is not a
	// portal's; the fresh folder is left as it was.
	fresh := filepath.Join(t.TempDir(), "restored.db")
	notPortal := filepath.Join(dir, "other.db")
	other, err := engine.OpenDB("sqlite:" + notPortal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("not a database\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{notPortal, text} {
		if out, err := runCmd(t, cmdEnv(fresh), "restore", file); err == nil || !strings.Contains(err.Error(), "is not a portal database") {
			t.Fatalf("restore of %s: %v\n%s", filepath.Base(file), err, out)
		}
	}
	if left, _ := filepath.Glob(fresh + "*"); len(left) != 1 || left[0] != fresh+".lock" {
		t.Fatalf("refused restores left %v", left)
	}

	if out, err := runCmd(t, cmdEnv(fresh), "restore", backup); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	restored := tableCounts(t, "sqlite:"+fresh)
	for table, n := range after {
		switch table {
		case "audit_log", "staff_access_log", "jobs", "outbox_messages", "membership_cards", "sessions", "session_locks", "bun_migration_locks":
			// Written by the server during and after the backup (the access
			// log: the exports read after it; the others by its jobs).
			if restored[table] < before[table] || restored[table] > n {
				t.Errorf("%s: %d rows restored, want from %d (before the backup) to %d (after it)", table, restored[table], before[table], n)
			}
		default:
			if restored[table] != n {
				t.Errorf("%s: %d rows restored, %d in the database backed up", table, restored[table], n)
			}
		}
	}
	for _, table := range []string{"process_instances", "orders", "payments", "debit_mandates", "debit_runs", "debits", "bank_credits", "audit_log", "memberships"} {
		if restored[table] == 0 {
			t.Errorf("no %s in the restored database", table)
		}
	}
	want, got := registrationStatuses(t, "sqlite:"+live, "id"), registrationStatuses(t, "sqlite:"+fresh, "id")
	if got != want || got != "COMPLETED RUNNING DONE COMPLETED CANCELLED" {
		t.Errorf("registrations restored in the states %s, backed up in %s", got, want)
	}

	// A server on the restored file: the same exports, the pay link of the
	// unpaid order opens its transfer page.
	rbase, rstop := serveFile(t, cmdEnv(fresh))
	if got := exports(t, rbase, key); got != liveExports {
		t.Errorf("the restored server's exports differ:\n%s\nwant\n%s", got, liveExports)
	}
	status, body := get(t, rbase+server.PaymentLinks("").PayLink("", states.unpaid.PayReference, states.unpaid.TotalMinor))
	if status != http.StatusOK || !strings.Contains(strings.ReplaceAll(body, " ", ""), states.unpaid.PayReference) {
		t.Errorf("the unpaid order's pay link on the restored server: %d\n%.600s", status, body)
	}
	hashLink := fmt.Sprintf("/membership/register/%d?u=%s&h=%s", engine.DemoPeriodID, engine.DemoUserKey, hashlink.Sign("riverside-own-hash-secret-42", engine.DemoUserKey))
	signIn := func(base string) (int, string) {
		t.Helper()
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := c.Get(base + hashLink)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Location")
	}
	if status, where := signIn(rbase); status != http.StatusSeeOther || strings.Contains(where, "error") {
		t.Errorf("a hash link of the club's own secret on the restored server: %d %s, want signed in", status, where)
	}
	rstop()
	// Without the session key kept with the backup, the club's own secret
	// cannot be opened: its members' links no longer sign them in.
	otherKey := session.GenerateKey()
	obase, ostop := serveFile(t, func(k string) string {
		if k == "PORTAL_SESSION_KEY" {
			return otherKey
		}
		return cmdEnv(fresh)(k)
	})
	if status, where := signIn(obase); !strings.Contains(where, "error=invalid") {
		t.Errorf("the same link with another session key: %d %s, want refused", status, where)
	}
	ostop()
	if out, err := runCmd(t, cmdEnv(fresh), "debits", "list", "--org", "1"); err != nil || !strings.Contains(out, "sent") {
		t.Errorf("the collection run restored: %v\n%s", err, out)
	}
	// Restored over a database: the one replaced is kept beside it, and
	// no -wal of it is left to be replayed onto the restored file.
	out, err = runCmd(t, cmdEnv(fresh), "restore", backup)
	kept := regexp.MustCompile(`kept as (\S+):`).FindStringSubmatch(out)
	if err != nil || kept == nil {
		t.Fatalf("restore over a database: %v\n%s", err, out)
	}
	if _, err := os.Stat(kept[1]); err != nil {
		t.Errorf("the replaced database: %v", err)
	}
	if _, err := os.Stat(fresh + "-wal"); !os.IsNotExist(err) {
		t.Errorf("a -wal beside the restored database: %v", err)
	}
	if got := registrationStatuses(t, "sqlite:"+fresh, "id"); got != want {
		t.Errorf("registrations restored again in the states %s, want %s", got, want)
	}
}

// waitForDueJobs waits until the server's job runner has done what is due
// (the confirmation of the captured payment, the schedule's first runs),
// so that what it writes is not written in the middle of the comparison.
func waitForDueJobs(t *testing.T, databaseURL string) {
	t.Helper()
	db, err := engine.OpenDB(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		n, err := db.NewSelect().Table("jobs").Where("state IN ('queued', 'running') AND run_at <= ?", clock.Now().UTC()).Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still due after a minute", n)
		}
	}
}

// registrationStatuses are the states of a database's registrations, in
// the order of column (id, or user_key: demo-1, demo-2, ...).
func registrationStatuses(t *testing.T, databaseURL, column string) string {
	t.Helper()
	db, err := engine.OpenDB(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var states []string
	if err := db.NewSelect().Table("process_instances").Column("status").OrderExpr("?", bun.Ident(column)).Scan(context.Background(), &states); err != nil {
		t.Fatal(err)
	}
	return strings.Join(states, " ")
}

// season is what seasonRegistrations made.
type season struct {
	// unpaid awaits a bank transfer; captured is paid by the capture the
	// test records.
	unpaid, captured engine.Order
}

// seasonRegistrations registers the demo club's households in the states
// a season has: paying by direct debit with a mandate (the demo user),
// started only, committed unpaid, committed and to be captured, and
// cancelled by staff.
func seasonRegistrations(t *testing.T, db *bun.DB, d *enginetest.Demo) season {
	t.Helper()
	ctx := context.Background()
	if err := demodata.SeedDemo(ctx, db, 4, clock.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	firstPerson := func(key string) int64 {
		var ids []int64
		if err := db.NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").Where("user_key = ?", key).Order("person_id").Scan(ctx, &ids); err != nil || len(ids) == 0 {
			t.Fatalf("%s's persons %v: %v", key, ids, err)
		}
		return ids[0]
	}
	order := func(key string) engine.Order {
		var o engine.Order
		if err := db.NewSelect().Model(&o).Where("user_key = ?", key).Limit(1).Scan(ctx); err != nil {
			t.Fatalf("%s's order: %v", key, err)
		}
		return o
	}
	d.CommitPayingBy(payment.DirectDebitProvider, engine.DemoUserKey, 1, 2)
	if _, err := directdebit.Of(d.Svc).GiveMandate(ctx, order(engine.DemoUserKey).PayReference, directdebit.MandateInput{Holder: "Alex Example",
		IBAN: "DE02120300000000202051", Consent: true, Language: "de"}); err != nil {
		t.Fatal(err)
	}
	// Started: the first step answered, not committed.
	form, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, "demo-1", engine.DemoPeriodID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registration.Of(d.Svc).Next(ctx, "demo-1", registration.NextInput{ProcessID: form.ProcessIDString(), Step: form.Step,
		People: []registration.PersonInput{{ID: firstPerson("demo-1")}}}); err != nil {
		t.Fatal(err)
	}
	d.CommitPayingBy(payment.BankTransferProvider, "demo-2", firstPerson("demo-2"))
	d.CommitPayingBy(payment.BankTransferProvider, "demo-3", firstPerson("demo-3"))
	cancelled := d.CommitPayingBy(payment.BankTransferProvider, "demo-4", firstPerson("demo-4"))
	id, err := strconv.ParseInt(cancelled.ProcessIDString(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := staff.Of(d.Svc).CancelRegistration(ctx, engine.CommandLine, 1, id); err != nil {
		t.Fatal(err)
	}
	return season{unpaid: order("demo-2"), captured: order("demo-3")}
}

// bothMethods is demo with a service that has the club's two payment
// methods, bank transfer and direct debit, as a server has them.
func bothMethods(t *testing.T, demo *enginetest.Demo) *enginetest.Demo {
	t.Helper()
	creditor := banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: "DE89370400440532013000"}
	dd, err := directdebit.New(creditor, creditorID, relativePayLink)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := banktransfer.New(creditor, relativePayLink)
	if err != nil {
		t.Fatal(err)
	}
	// Bank transfer is the club's first method, so its provider: the
	// service's default.
	svc := engine.NewService(demo.DB, bt, payment.WithPaymentMethodProviders(func(_ int64, m string) engine.PaymentProvider {
		if m == payment.DirectDebitProvider {
			return dd
		}
		return nil
	}))
	return &enginetest.Demo{T: t, DB: demo.DB, Svc: svc, GW: demo.GW}
}

// serveFile starts serve with getenv and returns its address and its stop,
// which waits until it stopped (releasing the SQLite lock).
func serveFile(t *testing.T, getenv func(string) string) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	serveEnv := func(k string) string {
		switch k {
		case "PORTAL_PAYMENT_PROVIDER":
			return "test"
		case "PORTAL_COOKIE_SECURE":
			return "false"
		case "PORTAL_ADDR":
			return "127.0.0.1:0"
		}
		return getenv(k)
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, serveEnv, &stdout, &stderr) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil || t.Failed() {
			t.Logf("serve: %v\n%s", err, stderr.String())
		}
	}
	t.Cleanup(stop)
	return "http://" + waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))[1], stop
}

// apiCall sends an admin API request with key and returns its status and body.
func apiCall(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// exports are the demo period's registrations and payments as the admin
// API exports them.
func exports(t *testing.T, base, key string) string {
	t.Helper()
	var b strings.Builder
	for _, kind := range []string{"registrations", "payments"} {
		status, body := apiCall(t, http.MethodGet, fmt.Sprintf("%s/api/admin/periods/%d/export/%s", base, engine.DemoPeriodID, kind), key, "")
		if status != http.StatusOK || strings.Count(body, "\n") < 2 {
			t.Fatalf("export %s: %d\n%s", kind, status, body)
		}
		b.WriteString(body)
	}
	return b.String()
}

// tableCounts counts the rows of every table of a database (SQLite, or
// the PostgreSQL schema it connects to).
func tableCounts(t *testing.T, databaseURL string) map[string]int {
	t.Helper()
	db, err := engine.OpenDB(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tableNames := db.NewSelect().Table("sqlite_master").Column("name").Where("type = 'table' AND name NOT LIKE 'sqlite_%'")
	if !strings.HasPrefix(databaseURL, "sqlite:") {
		tableNames = db.NewSelect().Table("information_schema.tables").Column("table_name").
			Where("table_schema = current_schema() AND table_type = 'BASE TABLE'")
	}
	var tables []string
	if err := tableNames.Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, table := range tables {
		n, err := db.NewSelect().Table(table).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		counts[table] = int(n)
	}
	return counts
}
