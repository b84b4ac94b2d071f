package privacy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/bankstatement"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/internal/store"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/privacy"
	"portal/engine/registration"
	"portal/engine/report"
	"portal/engine/staff"
)

// The person the data-protection tests register and erase: names,
// address, birth date and a free-text answer found nowhere else.
var quirin = struct {
	first, last, email, born, phone, external string
}{"Quirinus", "Zabelthorn", "Q.Zabelthorn@example.net", "1990-07-19", "0799988877", "ext-quirin-1"}

// quirinIBAN is the account the person paid from.
const quirinIBAN = "CH9300762011623852957"

// quirinNeedles are what must be gone after the erasure.
func quirinNeedles() []string {
	return []string{quirin.first, quirin.last, quirin.email, strings.ToLower(quirin.email), quirin.born, quirin.phone, quirinIBAN}
}

// addQuirin adds the person to the demo household (by the person import,
// so that they have an external id) and returns their id.
func addQuirin(t *testing.T, d *enginetest.Demo) int64 {
	t.Helper()
	rep, err := organisation.Of(d.Svc).ImportPersons(context.Background(), 1, []organisation.PersonRow{{ExternalID: quirin.external, FirstName: quirin.first,
		LastName: quirin.last, DateOfBirth: quirin.born, Email: quirin.email, UserKeys: []string{engine.DemoUserKey}}}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return rep.Rows[0].PersonID
}

// registerQuirin walks a registration of the person alone to its commit,
// with their own emergency phone number.
func registerQuirin(t *testing.T, d *enginetest.Demo, id int64) *registration.Form {
	t.Helper()
	return registerQuirinAs(t, d, engine.DemoUserKey, id)
}

// registerQuirinAs is registerQuirin in the household of userKey.
func registerQuirinAs(t *testing.T, d *enginetest.Demo, userKey string, id int64) *registration.Form {
	t.Helper()
	ctx := context.Background()
	form, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, userKey, engine.DemoPeriodID, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := form.ProcessIDString()
	in := []registration.PersonInput{{ID: id}}
	for form.State != engine.StateDone {
		if form.Step > 0 {
			var a string
			switch form.Question.Name {
			case "emergency_phone":
				a = quirin.phone
			case "shirt_size":
				a = "M"
			default:
				a = "1"
			}
			in = []registration.PersonInput{{ID: id, Answer: &a}}
		}
		if form, err = registration.Of(d.Svc).Next(ctx, userKey, registration.NextInput{ProcessID: pid, Step: form.Step, People: in}); err != nil {
			t.Fatalf("step %d: %v", form.Step, err)
		}
	}
	return form
}

// personalColumns are column names that hold a person's or a household's
// data, or point at them.
var personalColumns = []string{"person_id", "user_key", "email", "recipient", "address", "first_name", "debtor_name"}

// schemaColumns reads every table's columns from the schema itself.
func schemaColumns(t *testing.T, db *bun.DB) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	if db.Dialect().Name() == dialect.PG {
		var rows []struct {
			Table  string `bun:"table_name"`
			Column string `bun:"column_name"`
		}
		if err := db.NewRaw("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position").
			Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out[r.Table] = append(out[r.Table], r.Column)
		}
		return out
	}
	var tables []string
	if err := db.NewRaw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		var cols []struct {
			Name string `bun:"name"`
		}
		if err := db.NewRaw("SELECT name FROM pragma_table_info(?)", tb).Scan(ctx, &cols); err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			out[tb] = append(out[tb], c.Name)
		}
	}
	return out
}

// TestPersonalDataExportCoversEveryPersonTable fails for a table with a
// person or household column that neither the export nor the erasure
// names: a new table holding members' data must join both.
func TestPersonalDataExportCoversEveryPersonTable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		exported, erased := map[string]bool{}, map[string]bool{}
		for _, tables := range privacy.PersonalDataTables() {
			for _, tb := range tables {
				exported[tb] = true
			}
		}
		for _, tables := range privacy.ErasureTables() {
			for _, tb := range tables {
				erased[tb] = true
			}
		}
		found := 0
		for table, cols := range schemaColumns(t, db) {
			if !slices.ContainsFunc(cols, func(c string) bool { return slices.Contains(personalColumns, c) }) && table != "persons" {
				continue
			}
			found++
			if _, ok := privacy.NotPersonalDataTables[table]; ok {
				continue
			}
			if !exported[table] {
				t.Errorf("table %s (columns %v) holds a person's or household's data and is in no section of the export (engine/privacy/personal_data.go)", table, cols)
			}
			if !erased[table] {
				t.Errorf("table %s (columns %v) holds a person's or household's data and is in no step of the erasure (engine/privacy/personal_erasure.go)", table, cols)
			}
		}
		if found < 10 {
			t.Fatalf("only %d tables with personal columns: the schema was not read", found)
		}
	})
}

// scanFor finds needles in any column of any table, each column read as
// text: the places where erased data survived.
func scanFor(t *testing.T, db *bun.DB, needles []string) []string {
	t.Helper()
	return hitsOf(columnCounts(t, db, needles, nil))
}

// columnNeedle is one column of one table and one needle looked for in it.
type columnNeedle struct{ column, needle string }

// columnCounts counts, for every column of every table read as text, the
// rows holding each needle, in one query per table (thousands of
// one-count queries made the erasure's checks the slowest tests of the
// package); rows, when not nil, gives a table's filter (SQL and its
// arguments, empty for every row). Only the counts above zero are kept,
// keyed by "table.column".
func columnCounts(t *testing.T, db *bun.DB, needles []string, rows func(table string) (string, []any)) map[columnNeedle]int {
	t.Helper()
	ctx := context.Background()
	out := map[columnNeedle]int{}
	for table, cols := range schemaColumns(t, db) {
		var exprs []string
		var args []any
		var keys []columnNeedle
		for _, c := range cols {
			for _, n := range needles {
				exprs = append(exprs, "COUNT(CASE WHEN CAST(? AS TEXT) LIKE ? THEN 1 END)")
				args = append(args, bun.Ident(c), "%"+n+"%")
				keys = append(keys, columnNeedle{table + "." + c, n})
			}
		}
		if len(exprs) == 0 {
			continue
		}
		query := "SELECT " + strings.Join(exprs, ", ") + " FROM ?"
		args = append(args, bun.Ident(table))
		if rows != nil {
			if where, whereArgs := rows(table); where != "" {
				query += " WHERE " + where
				args = append(args, whereArgs...)
			}
		}
		counts := make([]int, len(keys))
		dest := make([]any, len(keys))
		for i := range counts {
			dest[i] = &counts[i]
		}
		if err := db.QueryRowContext(ctx, query, args...).Scan(dest...); err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		for i, n := range counts {
			if n > 0 {
				out[keys[i]] = n
			}
		}
	}
	return out
}

// hitsOf names each column and needle found, sorted.
func hitsOf(counts map[columnNeedle]int) []string {
	var hits []string
	for k := range counts {
		hits = append(hits, fmt.Sprintf("%s has %q", k.column, k.needle))
	}
	slices.Sort(hits)
	return hits
}

// seasonFigures are what the erasure must leave as they were: the staff
// overview's counts and money, and the period's payments export.
func seasonFigures(t *testing.T, d *enginetest.Demo) (staff.SeasonOverview, string) {
	t.Helper()
	ctx := context.Background()
	o, err := staff.Of(d.Svc).SeasonOverview(ctx, 1, engine.DemoPeriodID)
	if err != nil {
		t.Fatal(err)
	}
	o.Days = nil
	var b bytes.Buffer
	if err := report.Of(d.Svc).ExportPeriod(ctx, 1, engine.DemoPeriodID, report.ExportPayments, report.CSVExport(&b)); err != nil {
		t.Fatal(err)
	}
	return *o, b.String()
}

func TestErasePersonLeavesNothingAndKeepsTheBooks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		form := registerQuirin(t, d, id)
		d.Pay(form)

		// Traces of the person outside their own rows: a staff audit entry
		// naming them, an opt-out, a transfer they made, a job's error, a
		// request they wrote.
		admin := engine.Actor{Name: "admin@club.example"}
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return d.Svc.Audit(ctx, tx, admin, engine.AuditEntry{OrganisationID: 1, Action: "test.note", TargetType: "person", TargetID: fmt.Sprint(id),
				After: map[string]string{"name": quirin.first + " " + quirin.last, "email": quirin.email, "said": "call " + quirin.first}})
		}); err != nil {
			t.Fatal(err)
		}
		if err := message.OptOut(ctx, db, 1, message.OptOutReminders, []string{quirin.email}, clock.Now()); err != nil {
			t.Fatal(err)
		}
		var ref string
		if err := db.NewSelect().Model((*engine.Payment)(nil)).Column("reference").Where("order_id IN (SELECT id FROM orders WHERE process_instance_id = ?)", form.ProcessID).
			Limit(1).Scan(ctx, &ref); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewInsert().Model(&bankstatement.BankCredit{Account: "CH00", CreditID: "c1", CreditKey: "k1", AmountMinor: 100, Currency: "EUR",
			DebtorName: quirin.last + ", " + quirin.first, PayerPersonID: &id, DebtorIBAN: quirinIBAN, Remittance: "for " + quirin.first,
			State: bankstatement.CreditAssigned, PaymentReference: &ref, CreatedAt: clock.Now()}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewRaw("UPDATE jobs SET last_error = ? WHERE id = (SELECT MIN(id) FROM jobs)", "550 no mailbox "+quirin.email).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, engine.DemoUserKey, privacy.NewDataRequest{Kind: privacy.DataRequestCorrection, PersonID: &id,
			Message: "My name is " + quirin.first + " " + quirin.last + ", born " + quirin.born}); err != nil {
			t.Fatal(err)
		}
		// A direct-debit mandate they signed for the household.
		if _, err := db.NewInsert().Model(&directdebit.DebitMandate{OrganisationID: 1, UserKey: engine.DemoUserKey, CreditorID: "DE98ZZZ09999999999",
			Reference: "DEMO-1", Holder: quirin.first + " " + quirin.last, HolderPersonID: &id, IBAN: quirinIBAN, Language: "en", TextVersion: "test",
			Text: "I, " + quirin.first + " " + quirin.last + ", authorise the club.", SignedAt: clock.Now()}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if hits := scanFor(t, db, quirinNeedles()); len(hits) < 8 {
			t.Fatalf("the person's data is not where the test put it: %v", hits)
		}
		before, payments := seasonFigures(t, d)

		// An active membership refuses the erasure, naming why; nothing changes.
		_, err := privacy.Of(d.Svc).ErasePerson(ctx, admin, 1, id, privacy.ErasureOptions{})
		if engine.ErrorCode(err) != engine.CodeConflict || !strings.Contains(err.Error(), "active membership") {
			t.Fatalf("erasure of an active member: %v, want a conflict naming the membership", err)
		}
		var p engine.Person
		if err := db.NewSelect().Model(&p).Where("id = ?", id).Scan(ctx); err != nil || p.FirstName != quirin.first || p.ErasedAt != nil {
			t.Fatalf("a refused erasure changed the person: %+v %v", p, err)
		}

		rep, err := privacy.Of(d.Svc).ErasePerson(ctx, admin, 1, id, privacy.ErasureOptions{Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Forced || !strings.Contains(rep.Overrode, "active membership") {
			t.Fatalf("report %+v: want forced over the membership", rep)
		}
		if hits := scanFor(t, db, quirinNeedles()); len(hits) > 0 {
			t.Fatalf("after the erasure the person's data is still stored:\n%s", strings.Join(hits, "\n"))
		}
		after, paymentsAfter := seasonFigures(t, d)
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("the season's figures changed:\nbefore %+v\nafter  %+v", before, after)
		}
		if payments != paymentsAfter {
			t.Fatalf("the payments export changed:\n%s\n%s", payments, paymentsAfter)
		}
		p = engine.Person{}
		if err := db.NewSelect().Model(&p).Where("id = ?", id).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if p.FirstName+" "+p.LastName != privacy.ErasedLabel(id) || p.Email != "" || p.ExternalID != nil || p.ErasedAt == nil {
			t.Fatalf("erased person: %+v", p)
		}
		var lines []engine.OrderLine
		if err := db.NewSelect().Model(&lines).Where("person_id = ?", id).Scan(ctx); err != nil || len(lines) == 0 {
			t.Fatalf("the order lines went: %v %v", lines, err)
		}
		var credit bankstatement.BankCredit
		if err := db.NewSelect().Model(&credit).Where("credit_key = 'k1'").Scan(ctx); err != nil || credit.DebtorIBAN != "" || credit.AmountMinor != 100 {
			t.Fatalf("the transfer kept its payer's account or lost its amount: %+v %v", credit, err)
		}

		// Audited, with the override; an erased person is not erased twice.
		log, err := d.Svc.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1})
		if err != nil || log[0].Action != "person.erase" || !strings.Contains(log[0].AfterJSON, `"forced":true`) || log[0].Actor != admin.Name {
			t.Fatalf("erasure audit: %+v %v", log[0], err)
		}
		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, admin, 1, id, privacy.ErasureOptions{Force: true}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("second erasure: %v", err)
		}
		// The audit log stays append-only for everything but erased details.
		if _, err := db.NewUpdate().Model((*engine.AuditRecord)(nil)).Set("action = 'forged'").Set("erased_at = ?", clock.Now()).Where("id = ?", log[0].ID).Exec(ctx); err == nil {
			t.Fatal("an audit row's action was changed")
		}

		// Imported again from the backend, the person is a new record.
		rep2, err := organisation.Of(d.Svc).ImportPersons(ctx, 1, []organisation.PersonRow{{ExternalID: quirin.external, FirstName: quirin.first, LastName: quirin.last,
			DateOfBirth: quirin.born, Email: quirin.email, UserKeys: []string{engine.DemoUserKey}}}, func(string) bool { return true })
		if err != nil || rep2.Rows[0].Outcome != organisation.RowCreated || rep2.Rows[0].PersonID == id {
			t.Fatalf("re-import after erasure: %+v %v", rep2, err)
		}
	})
}

func TestErasureRefusedWhilePaymentOpen(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		registerQuirin(t, d, id) // committed, not paid
		_, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, id, privacy.ErasureOptions{})
		if engine.ErrorCode(err) != engine.CodeConflict || !strings.Contains(err.Error(), "payment is open") {
			t.Fatalf("erasure with an unpaid order: %v", err)
		}
		// The refusal names the person, still whole, by their name, not by
		// the label an erasure would give them.
		if msg := err.Error(); !strings.Contains(msg, quirin.first+" "+quirin.last+" cannot be erased yet") || strings.Contains(msg, privacy.ErasedLabel(id)) {
			t.Errorf("the refusal names the person as %q", msg)
		}
		// Another organisation's scope does not find the person.
		if _, err := privacy.Of(d.Svc).ErasePerson(engine.WithOrganisation(ctx, 2), engine.CommandLine, 1, id, privacy.ErasureOptions{Force: true}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("erasure across organisations: %v", err)
		}
		if _, err := privacy.Of(d.Svc).ExportPerson(engine.WithOrganisation(ctx, 2), 1, id); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("export across organisations: %v", err)
		}
	})
}

func TestExportHouseholdHoldsItsOwnDataOnly(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := engine.WithLanguage(context.Background(), "de")
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		form := registerQuirin(t, d, id)
		d.Pay(form)
		// Another household of the same club, with a message and an opt-out.
		if _, err := organisation.Of(d.Svc).ImportPersons(ctx, 1, []organisation.PersonRow{{ExternalID: "other-1", FirstName: "Bertha", LastName: "Otherfamily",
			DateOfBirth: "1970-01-02", Email: "bertha@other.example", UserKeys: []string{"other"}}}, func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		if err := message.OptOut(ctx, db, 1, message.OptOutRenewals, []string{"bertha@other.example"}, clock.Now()); err != nil {
			t.Fatal(err)
		}

		x, err := privacy.Of(d.Svc).ExportHousehold(ctx, 1, engine.DemoUserKey)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		for _, other := range []string{"Otherfamily", "bertha@other.example", `"other"`} {
			if strings.Contains(doc, other) {
				t.Fatalf("the demo household's export holds another household's %s", other)
			}
		}
		if x.Format != privacy.PersonalDataFormat || x.Subject.Kind != "household" || len(x.Persons) != 5 {
			t.Fatalf("export head: %s %+v, %d persons", x.Format, x.Subject, len(x.Persons))
		}
		var reg *privacy.ExportRegistration
		for i := range x.Registrations {
			if slices.Contains(x.Registrations[i].PersonIDs, id) {
				reg = &x.Registrations[i]
			}
		}
		if reg == nil {
			t.Fatalf("the person's registration is missing: %+v", x.Registrations)
		}
		phone, shirt := false, false
		for _, a := range reg.Answers {
			phone = phone || (a.Value == quirin.phone && a.Question != "" && a.Step == "emergency_phone")
			shirt = shirt || (a.Step == "shirt_size" && a.Label != "" && a.Label != a.Value)
		}
		if !phone || !shirt {
			t.Fatalf("answers as the member saw them (question, choice label): %+v", reg.Answers)
		}
		if len(x.Orders) == 0 || len(x.Orders[0].Payments) == 0 || len(x.Memberships) < 3 {
			t.Fatalf("orders %+v memberships %+v", x.Orders, x.Memberships)
		}
		msgs := 0
		for _, m := range x.Messages {
			if strings.EqualFold(m.Recipient, quirin.email) {
				msgs++
			}
		}
		if msgs == 0 {
			t.Fatalf("the confirmation to the person is not among the messages: %+v", x.Messages)
		}

		// The other household sees only its own.
		y, err := privacy.Of(d.Svc).ExportHousehold(ctx, 1, "other")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(y)
		if strings.Contains(string(b), quirin.last) || strings.Contains(string(b), "Morgan") || len(y.OptOuts) != 1 || len(y.Persons) != 1 {
			t.Fatalf("the other household's export: %s", b)
		}
		// A person's export: the person, not their household's others.
		z, err := privacy.Of(d.Svc).ExportPerson(ctx, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(z)
		if len(z.Persons) != 1 || strings.Contains(string(b), "Morgan") || len(z.Registrations) != 1 || len(z.Orders) != 1 {
			t.Fatalf("the person's export: %s", b)
		}
		// An unknown household is not found, not an empty export.
		if _, err := privacy.Of(d.Svc).ExportHousehold(ctx, 1, ""); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("export of no household: %v", err)
		}
	})
}

func TestDataRequests(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("contact_email = 'office@riverside.example'").Where("id = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		other := addQuirin(t, d)
		if _, err := db.NewDelete().Model((*engine.UserPerson)(nil)).Where("person_id = ?", other).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]privacy.NewDataRequest{
			"unknown kind":          {Kind: "delete-everything"},
			"correction of nothing": {Kind: privacy.DataRequestCorrection, Message: "  "},
			"another's person":      {Kind: privacy.DataRequestErasure, PersonID: &other},
			"too long":              {Kind: privacy.DataRequestCorrection, Message: strings.Repeat("x", privacy.MaxDataRequestText+1)},
		} {
			if _, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, engine.DemoUserKey, r); engine.ErrorCode(err) != engine.CodeInvalid {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
		if _, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, "nobody", privacy.NewDataRequest{Kind: privacy.DataRequestErasure}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("a request of no household: %v", err)
		}
		if n, _ := db.NewSelect().Model((*privacy.DataRequest)(nil)).Count(ctx); n != 0 {
			t.Fatalf("refused requests stored %d rows", n)
		}
		alex := int64(1)
		req, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, engine.DemoUserKey, privacy.NewDataRequest{Kind: privacy.DataRequestCorrection, PersonID: &alex, Message: "My birthday is the 13th."})
		if err != nil {
			t.Fatal(err)
		}
		msg, err := store.OutboxMessageByKey(ctx, db, "data_request:"+fmt.Sprint(req.ID))
		if err != nil || msg.Recipient != "office@riverside.example" {
			t.Fatalf("the club's e-mail: %+v %v", msg, err)
		}
		list, err := privacy.Of(d.Svc).DataRequests(ctx, 1, privacy.DataRequestOpen)
		if err != nil || len(list) != 1 || list[0].Message != "My birthday is the 13th." {
			t.Fatalf("open requests: %+v %v", list, err)
		}
		if other, _ := privacy.Of(d.Svc).DataRequests(ctx, 2, ""); len(other) != 0 {
			t.Fatalf("another organisation lists %+v", other)
		}
		staff := engine.Actor{Name: "registrar@club.example"}
		if err := privacy.Of(d.Svc).CompleteDataRequest(ctx, staff, 2, req.ID, ""); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("completed from another organisation: %v", err)
		}
		if err := privacy.Of(d.Svc).CompleteDataRequest(ctx, staff, 1, req.ID, "Corrected."); err != nil {
			t.Fatal(err)
		}
		if err := privacy.Of(d.Svc).CompleteDataRequest(ctx, staff, 1, req.ID, ""); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("completed twice: %v", err)
		}
		done, err := store.OutboxMessageByKey(ctx, db, "data_request_done:"+fmt.Sprint(req.ID))
		if err != nil || !strings.Contains(done.Recipient, "alex.morgan@example.org") || !strings.Contains(done.Recipient, "sam.morgan@example.org") {
			t.Fatalf("the household's e-mail: %+v %v", done, err)
		}
		log, err := d.Svc.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1})
		if err != nil || len(log) < 2 || log[0].Action != "data_request.done" || log[0].Actor != staff.Name || log[1].Action != "data_request.create" {
			t.Fatalf("audit: %+v %v", log, err)
		}
		x, err := privacy.Of(d.Svc).ExportHousehold(ctx, 1, engine.DemoUserKey)
		if err != nil || len(x.Requests) != 1 || x.Requests[0].Status != privacy.DataRequestDone {
			t.Fatalf("the request in the export: %+v %v", x, err)
		}
	})
}

// A person unlinked from the household they registered in is still found
// in its registrations and orders by their export and their erasure.
func TestErasureFindsAnUnlinkedPersonsRegistrations(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		d.Pay(registerQuirin(t, d, id))
		if _, err := organisation.Of(d.Svc).UnlinkPersons(ctx, 1, []organisation.PersonLink{{ExternalID: quirin.external, UserKey: engine.DemoUserKey}}); err != nil {
			t.Fatal(err)
		}
		x, err := privacy.Of(d.Svc).ExportPerson(ctx, 1, id)
		if err != nil || len(x.Orders) != 1 || len(x.Registrations) != 1 {
			t.Fatalf("export of an unlinked person: %+v %v", x, err)
		}
		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, id, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		if hits := scanFor(t, db, quirinNeedles()); len(hits) > 0 {
			t.Fatalf("after the erasure of an unlinked person:\n%s", strings.Join(hits, "\n"))
		}
	})
}

// TestDataRequestsPerHouseholdBounded: a household makes at most
// MaxDataRequestsPerDay requests in any 24 hours; the one over it is
// refused (too_many), stored nowhere and mailed to no one, while another
// household still may ask; a day later the household may ask again.
func TestDataRequestsPerHouseholdBounded(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		clk := enginetest.NewClock(time.Date(2031, 3, 4, 9, 0, 0, 0, time.UTC))
		d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("contact_email = 'office@riverside.example'").Where("id = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		const otherKey = "other-home"
		if _, err := organisation.Of(d.Svc).ImportPersons(ctx, 1, []organisation.PersonRow{{ExternalID: "X-9", FirstName: "Oda", LastName: "Other",
			DateOfBirth: "1980-02-03", UserKeys: []string{otherKey}}}, func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		ask := func(key string) error {
			_, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, key, privacy.NewDataRequest{Kind: privacy.DataRequestErasure})
			return err
		}
		mails := func() int {
			return enginetest.CountRows(t, db, (*engine.OutboxMessage)(nil), "kind = ?", string(privacy.KindDataRequest))
		}
		for i := range privacy.MaxDataRequestsPerDay {
			if err := ask(engine.DemoUserKey); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
			clk.Advance(time.Hour)
		}
		for range 2 {
			if err := ask(engine.DemoUserKey); engine.ErrorCode(err) != engine.CodeTooMany {
				t.Fatalf("a request over the day's bound: %v, want too_many", err)
			}
		}
		if n := enginetest.CountRows(t, db, (*privacy.DataRequest)(nil), "user_key = ?", engine.DemoUserKey); n != privacy.MaxDataRequestsPerDay {
			t.Fatalf("%d requests stored, want %d", n, privacy.MaxDataRequestsPerDay)
		}
		if n := mails(); n != privacy.MaxDataRequestsPerDay {
			t.Fatalf("%d e-mails to the club, want %d", n, privacy.MaxDataRequestsPerDay)
		}
		if err := ask(otherKey); err != nil {
			t.Fatalf("another household's request: %v", err)
		}
		// 24 hours after the first request, one more is allowed.
		clk.Advance(24*time.Hour - time.Duration(privacy.MaxDataRequestsPerDay)*time.Hour + time.Minute)
		if err := ask(engine.DemoUserKey); err != nil {
			t.Fatalf("a request a day later: %v", err)
		}
		if err := ask(engine.DemoUserKey); engine.ErrorCode(err) != engine.CodeTooMany {
			t.Fatalf("the next one within the day: %v", err)
		}
	})
}
