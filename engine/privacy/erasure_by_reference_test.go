package privacy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/bankstatement"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/internal/store"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/payment/settings"
	"portal/engine/privacy"
	"portal/engine/registration"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

// The demo household's persons (engine/demodata): Alex and Sam are the
// parents, Robin (whose address is Alex's) and Jamie the children.
const (
	demoAlex  = int64(1)
	demoRobin = int64(3)
	alexIBAN  = "DE89370400440532013000"
)

// giveAlexsMandate stores the SEPA mandate Alex gives for the demo
// household, as GiveMandate stores it.
func giveAlexsMandate(t *testing.T, db *bun.DB) *directdebit.DebitMandate {
	t.Helper()
	m := &directdebit.DebitMandate{OrganisationID: 1, UserKey: engine.DemoUserKey, CreditorID: "DE98ZZZ09999999999",
		Reference: "DEMO-ALEX", Holder: "Alex Morgan", HolderPersonID: store.PersonRef(demoAlex, true), IBAN: alexIBAN, BIC: "COBADEFFXXX", Language: "en", TextVersion: "test",
		Text: "I authorise the club to collect payments from my account.", SignedAt: clock.Now()}
	if _, err := db.NewInsert().Model(m).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestErasingOnePersonLeavesAnothersRecords: erasing Robin changes
// Robin's records only. Alex's mandate keeps its holder, account and
// validity; Alex's order lines keep Alex's name; the confirmation that
// went to Alex's address (also Robin's) keeps it and Alex's name.
func TestErasingOnePersonLeavesAnothersRecords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		form := d.Commit(demoAlex, demoRobin)
		d.Pay(form)
		mandate := giveAlexsMandate(t, db)

		var alexLinesBefore []engine.OrderLine
		if err := db.NewSelect().Model(&alexLinesBefore).Where("person_id = ?", demoAlex).Order("id").Scan(ctx); err != nil || len(alexLinesBefore) == 0 {
			t.Fatalf("Alex's lines: %v %v", alexLinesBefore, err)
		}
		var confirmation engine.OutboxMessage
		if err := db.NewSelect().Model(&confirmation).Where("kind = 'membership_confirmation'").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(confirmation.Payload, "Alex Morgan") || !strings.Contains(confirmation.Payload, "Robin Morgan") {
			t.Fatalf("the confirmation's payload does not name both: %s", confirmation.Payload)
		}

		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, demoRobin, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}

		var m directdebit.DebitMandate
		if err := db.NewSelect().Model(&m).Where("id = ?", mandate.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if m.Holder != "Alex Morgan" || m.IBAN != alexIBAN || m.BIC != "COBADEFFXXX" || m.RevokedAt != nil || m.EndReason != "" {
			t.Fatalf("erasing Robin changed Alex's mandate: holder %q iban %q bic %q revoked %v end %q", m.Holder, m.IBAN, m.BIC, m.RevokedAt, m.EndReason)
		}
		var alexLines []engine.OrderLine
		if err := db.NewSelect().Model(&alexLines).Where("person_id = ?", demoAlex).Order("id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for i, l := range alexLines {
			if l.Description != alexLinesBefore[i].Description {
				t.Errorf("erasing Robin changed Alex's line %q to %q", alexLinesBefore[i].Description, l.Description)
			}
		}
		var robinLines []engine.OrderLine
		if err := db.NewSelect().Model(&robinLines).Where("person_id = ?", demoRobin).Scan(ctx); err != nil || len(robinLines) == 0 {
			t.Fatalf("Robin's lines: %v %v", robinLines, err)
		}
		for _, l := range robinLines {
			if strings.Contains(l.Description, "Robin") || !strings.HasSuffix(l.Description, " – "+privacy.ErasedLabel(demoRobin)) {
				t.Errorf("Robin's line after the erasure: %q", l.Description)
			}
		}
		var after engine.OutboxMessage
		if err := db.NewSelect().Model(&after).Where("id = ?", confirmation.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if after.Recipient != confirmation.Recipient || !strings.Contains(after.Payload, `"Alex Morgan"`) || strings.Contains(after.Payload, "Robin") {
			t.Fatalf("the confirmation after erasing Robin: to %q (was %q), payload %s", after.Recipient, confirmation.Recipient, after.Payload)
		}
	})
}

// TestPersonExportListsOnlyMandatesAboutThem: a person's export lists
// the mandates they hold and those that paid their own memberships, not
// another holder's mandate of the household, nor one given after they
// left it.
func TestPersonExportListsOnlyMandatesAboutThem(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		form := registerQuirin(t, d, id)
		d.Pay(form)
		mandate := func(ref, holder, iban string) *directdebit.DebitMandate {
			// The holder's id as GiveMandate records it.
			h, ok, err := store.HouseholdPersonNamed(ctx, db, 1, engine.DemoUserKey, holder)
			if err != nil {
				t.Fatal(err)
			}
			m := &directdebit.DebitMandate{OrganisationID: 1, UserKey: engine.DemoUserKey, CreditorID: "DE98ZZZ09999999999", Reference: ref,
				Holder: holder, HolderPersonID: store.PersonRef(h, ok), IBAN: iban, Language: "en", TextVersion: "test", Text: "I authorise the club.", SignedAt: clock.Now()}
			if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			return m
		}
		mandate("OWN", "Zabelthorn, Quirinus", quirinIBAN)
		paid := mandate("PAID", "Sam Morgan", "DE02120300000000202051")
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_mandate_id = ?", paid.ID).
			Where("process_instance_id = ?", form.ProcessID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		mandate("OTHER", "Sam Morgan", "DE75512108001245126199")
		if _, err := organisation.Of(d.Svc).UnlinkPersons(ctx, 1, []organisation.PersonLink{{ExternalID: quirin.external, UserKey: engine.DemoUserKey}}); err != nil {
			t.Fatal(err)
		}
		mandate("AFTER", "Alex Morgan", alexIBAN)

		x, err := privacy.Of(d.Svc).ExportPerson(ctx, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, m := range x.Mandates {
			refs = append(refs, m.Reference)
		}
		if strings.Join(refs, ",") != "OWN,PAID" {
			t.Fatalf("the person's export lists mandates %v, want OWN (they hold it) and PAID (it paid their membership)", refs)
		}
		// The household's own export still lists every mandate it gave.
		h, err := privacy.Of(d.Svc).ExportHousehold(ctx, 1, engine.DemoUserKey)
		if err != nil || len(h.Mandates) != 4 {
			t.Fatalf("the household's export: %d mandates, %v", len(h.Mandates), err)
		}
	})
}

// valueCounts counts, per table and column, the rows that hold each
// value (every column of every table read as text, the outbox
// included), leaving out the erased persons' own rows: their e-mail
// column is theirs even where the address is another's too.
func valueCounts(t *testing.T, db *bun.DB, erased []int64, values []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	counts := columnCounts(t, db, values, func(table string) (string, []any) {
		if table == "persons" {
			return "id NOT IN (?)", []any{bun.List(erased)}
		}
		return "", nil
	})
	for k, n := range counts {
		out[k.column+" "+k.needle] = n
	}
	return out
}

// scanForExcept is scanFor leaving out, per table, the rows that except
// selects (SQL): rows that hold a value like the erased person's and are
// not theirs.
func scanForExcept(t *testing.T, db *bun.DB, needles []string, except map[string]string) []string {
	t.Helper()
	return hitsOf(columnCounts(t, db, needles, func(table string) (string, []any) {
		if x, ok := except[table]; ok {
			return "NOT (" + x + ")", nil
		}
		return "", nil
	}))
}

// TestErasureLeavesNoValueOfThePersonAndEveryValueOfTheOthers is the
// erasure's whole promise on both databases. Robin is erased from the
// demo household, where Alex holds a mandate and paid the household's
// registration by bank transfer (both recorded as Alex's by id). Quirin,
// alone in a household of their own, is erased too, emptying it: they
// registered and paid by transfer, wrote a data request whose answer went
// to their address, signed in, were looked at by staff, and share their
// household's user key with a household of another club (with its own
// session), and the club's bank account holder has Quirin's name.
// Robin, with an address of their own, wrote a data request for the
// demo household; Sam wrote another, answered to every address.
// Afterwards no column of any table (nor the outbox) holds a value of
// Robin's or Quirin's, nor Quirin's household's key: the sessions
// (issue 38, 1) and the settings' audit entry (2) of others excepted,
// which keep theirs; the answers lost Quirin's and Robin's addresses
// (3), the requests
// the texts Robin and Quirin typed (4), the household's key is one label
// in every record (5), and every value of the others is where it was, as
// often as it was (Sam's request; 6: Alex's mandate and transfer, theirs
// by id).
func TestErasureLeavesNoValueOfThePersonAndEveryValueOfTheOthers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		form := d.Commit(demoAlex, demoRobin)
		d.Pay(form)
		giveAlexsMandate(t, db)
		var err error
		const robinPhone = "0799000333"
		if _, err := db.NewUpdate().Model((*engine.ProcessData)(nil)).Set("data_value = ?", robinPhone).
			Where("person_id = ? AND data_value = '0612345678'", demoRobin).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// Alex's transfer for the household's order, as a statement names
		// it and the treasurer's assignment records its payer.
		paymentRef := func(form *registration.Form) string {
			var ref string
			if err := db.NewSelect().Model((*engine.Payment)(nil)).Column("reference").Where("order_id IN (SELECT id FROM orders WHERE process_instance_id = ?)", form.ProcessID).
				Limit(1).Scan(ctx, &ref); err != nil {
				t.Fatal(err)
			}
			return ref
		}
		ref := paymentRef(form)
		if _, err := db.NewInsert().Model(&bankstatement.BankCredit{Account: "CH00", CreditID: "c-alex", CreditKey: "k-alex", AmountMinor: 100, Currency: "EUR",
			DebtorName: "MORGAN ALEX", PayerPersonID: store.PersonRef(demoAlex, true), DebtorIBAN: alexIBAN, Remittance: "Membership Morgan family",
			State: bankstatement.CreditAssigned, PaymentReference: &ref, CreatedAt: clock.Now()}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// Staff wrote about Robin; Sam unsubscribed from reminders.
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return d.Svc.Audit(ctx, tx, engine.CommandLine, engine.AuditEntry{OrganisationID: 1, Action: "test.note", TargetType: "person", TargetID: "3",
				After: map[string]string{"name": "Robin Morgan", "born": "2014-06-02", "note": "Robin's guardian is Alex Morgan"}})
		}); err != nil {
			t.Fatal(err)
		}
		if err := message.OptOut(ctx, db, 1, message.OptOutReminders, []string{"sam.morgan@example.org"}, clock.Now()); err != nil {
			t.Fatal(err)
		}
		// Robin, with an address of their own now, writes for the whole
		// household a request naming no one; Sam writes another, whose
		// answer goes to every address of the household.
		const robinsAddress = "robin.m@example.net"
		if _, err := db.NewUpdate().Model((*engine.Person)(nil)).Set("email = ?", robinsAddress).Where("id = ?", demoRobin).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		robinID, samID := demoRobin, int64(2)
		var samsRequest *privacy.DataRequest
		for _, r := range []privacy.NewDataRequest{{Kind: privacy.DataRequestCorrection, WriterID: &robinID, Message: "Our street is Birkenallee 5 now"},
			{Kind: privacy.DataRequestCorrection, WriterID: &samID, Message: "Membership Morgan family: please check the fee"}} {
			if samsRequest, err = privacy.Of(d.Svc).RequestDataChange(ctx, 1, engine.DemoUserKey, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := privacy.Of(d.Svc).CompleteDataRequest(ctx, engine.CommandLine, 1, samsRequest.ID, "Checked."); err != nil {
			t.Fatal(err)
		}

		// Quirin, alone in their household, and what they leave.
		quirinID := quirinAlone(t, d)
		var quirinsForm engine.ProcessInstance
		if err := db.NewSelect().Model(&quirinsForm).Where("user_key = ?", quirinsHome).Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		qref := paymentRef(&registration.Form{ProcessID: quirinsForm.ID})
		if _, err := db.NewInsert().Model(&bankstatement.BankCredit{Account: "CH00", CreditID: "c-quirin", CreditKey: "k-quirin", AmountMinor: 100, Currency: "EUR",
			DebtorName: "ZABELTHORN QUIRINUS", PayerPersonID: &quirinID, DebtorIBAN: quirinIBAN, Remittance: "Zabelthorn",
			State: bankstatement.CreditAssigned, PaymentReference: &qref, CreatedAt: clock.Now()}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		const typed = "Lindenweg 12 is my street now"
		req, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, quirinsHome, privacy.NewDataRequest{Kind: privacy.DataRequestCorrection, Message: typed})
		if err != nil {
			t.Fatal(err)
		}
		if err := privacy.Of(d.Svc).CompleteDataRequest(ctx, engine.CommandLine, 1, req.ID, "Corrected."); err != nil {
			t.Fatal(err)
		}
		// The club's account holder is named as Quirin is: not Quirin's data.
		treasurer := engine.Actor{Name: "treasurer@club.example"}
		if _, err := settings.Of(d.Svc).StaffSetPaymentSettings(ctx, treasurer, 1, settings.PaymentSettingsChange{BankCreditorName: enginetest.Str(quirin.first + " " + quirin.last),
			BankIBAN: enginetest.Str("DE02120300000000202051")}); err != nil {
			t.Fatal(err)
		}
		// Another club's household of the same user key, signed in.
		club, err := organisation.Of(d.Svc).CreateOrganisation(ctx, organisation.OrganisationChange{Name: enginetest.Str("Lakeside"), Slug: enginetest.Str("lakeside")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := organisation.Of(d.Svc).ImportPersons(ctx, club.ID, []organisation.PersonRow{{ExternalID: "lake-1", FirstName: "Lena", LastName: "Lakeside",
			DateOfBirth: "1980-05-06", Email: "lena@lake.example", UserKeys: []string{quirinsHome}}}, func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		now := clock.Now()
		lakeSession := &session.Session{ID: sessiontest.NewID(), UserKey: quirinsHome, Values: map[string]string{session.AttrOrganisation: strconv.FormatInt(club.ID, 10)},
			CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := session.NewDBStore(db).Create(ctx, lakeSession); err != nil {
			t.Fatal(err)
		}

		robins := []string{"Robin", "2014-06-02", robinPhone, "Birkenallee", robinsAddress}
		quirins := append(quirinNeedles(), quirinsHome, "Lindenweg")
		others := []string{"Alex Morgan", "MORGAN ALEX", "alex.morgan@example.org", alexIBAN, "Sam", "sam.morgan@example.org", "Jamie", "1985-04-12", "1987-09-30",
			"2011-02-17", "Membership Morgan family", "Lena Lakeside", "lena@lake.example"}
		// Rows that hold Quirin's name or household key and are not theirs:
		// the club's account holder, its audit entry, the other club's
		// household (its link and session).
		notQuirins := map[string]string{
			"organisation_payment_settings": "1 = 1",
			"audit_log":                     "action = 'payment_settings.update'",
			"user_persons":                  fmt.Sprintf("organisation_id = %d", club.ID),
			"sessions":                      fmt.Sprintf("COALESCE(organisation_id, 0) = %d", club.ID),
		}
		if hits := scanFor(t, db, robins); len(hits) < 5 {
			t.Fatalf("Robin's values are not where the test put them: %v", hits)
		}
		if hits := scanForExcept(t, db, quirins, notQuirins); len(hits) < 12 {
			t.Fatalf("Quirin's values are not where the test put them: %v", hits)
		}
		if hits := scanFor(t, db, []string{quirin.first + " " + quirin.last}); !slices.Contains(hits, "audit_log.after_json has \""+quirin.first+" "+quirin.last+"\"") {
			t.Fatalf("the settings' audit entry does not name the account holder: %v", hits)
		}
		settingsEntry := auditDetails(t, db)[firstAudit(auditDetails(t, db), "payment_settings.update")]
		done, err := store.OutboxMessageByKey(ctx, db, "data_request_done:"+strconv.FormatInt(req.ID, 10))
		if err != nil || !strings.Contains(done.Recipient, quirin.email) {
			t.Fatalf("the answer to Quirin's request: %+v %v", done, err)
		}
		before := valueCounts(t, db, []int64{demoRobin, quirinID}, others)

		for _, id := range []int64{demoRobin, quirinID} {
			if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, id, privacy.ErasureOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		}

		if hits := scanFor(t, db, robins); len(hits) > 0 {
			t.Errorf("after the erasure Robin's values are still stored:\n%s", strings.Join(hits, "\n"))
		}
		if hits := scanForExcept(t, db, quirins, notQuirins); len(hits) > 0 {
			t.Errorf("after the erasure Quirin's values or household key are still stored:\n%s", strings.Join(hits, "\n"))
		}
		after := valueCounts(t, db, []int64{demoRobin, quirinID}, others)
		for k, n := range before {
			if after[k] != n {
				t.Errorf("%s: %d rows before the erasure, %d after", k, n, after[k])
			}
		}
		for k, n := range after {
			if before[k] == 0 {
				t.Errorf("%s: %d rows after the erasure, none before", k, n)
			}
		}
		// 1: the other club's household keeps its session.
		if _, err := session.NewDBStore(db).Load(ctx, lakeSession.ID); err != nil {
			t.Errorf("the other club's session of the same user key: %v", err)
		}
		// 2: the settings' entry is as it was.
		if e := auditDetails(t, db)[settingsEntry.ID]; e.AfterJSON != settingsEntry.AfterJSON || e.ErasedAt != nil {
			t.Errorf("the settings' audit entry changed: %s", e.AfterJSON)
		}
		// 3: the answer keeps no address of Quirin's and is not sent again.
		if m, err := store.OutboxMessageByKey(ctx, db, done.DedupKey); err != nil || strings.Contains(m.Recipient, "@") {
			t.Errorf("the answer's recipients after the erasure: %q %v", m.Recipient, err)
		}
		// 5: the household's records carry its label.
		label := privacy.ErasedHouseholdLabel(quirinID, 1)
		for _, table := range []string{"orders", "process_instances", "data_requests", "staff_access_log"} {
			if n, err := db.NewSelect().Table(table).Where("user_key = ?", label).Count(ctx); err != nil || n == 0 {
				t.Errorf("%s: no row carries the household's label %q (%v)", table, label, err)
			}
		}
	})
}

// TestHouseholdSessionsBelongToTheirClub: club A and club B each have a
// household of user key demo. Club B's export of its household lists
// its own sessions, not when club A's demo signed in; club B erasing its
// household's last person ends club B's sessions, not club A's.
func TestHouseholdSessionsBelongToTheirClub(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		club, err := organisation.Of(d.Svc).CreateOrganisation(ctx, organisation.OrganisationChange{Name: enginetest.Str("Lakeside"), Slug: enginetest.Str("lakeside")})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := organisation.Of(d.Svc).ImportPersons(ctx, club.ID, []organisation.PersonRow{{ExternalID: "lake-1", FirstName: "Lena", LastName: "Lakeside",
			DateOfBirth: "1980-05-06", UserKeys: []string{engine.DemoUserKey}}}, func(string) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		lena := rep.Rows[0].PersonID
		// Sessions as the gateway starts them: the organisation is one of
		// the session's values (server.StartValues).
		st := session.NewDBStore(db)
		start := func(orgID int64, at time.Time) *session.Session {
			t.Helper()
			s := &session.Session{ID: sessiontest.NewID(), UserKey: engine.DemoUserKey, Values: map[string]string{session.AttrOrganisation: strconv.FormatInt(orgID, 10)},
				CreatedAt: at, LastSeenAt: at, ExpiresAt: clock.Now().Add(time.Hour)}
			if err := st.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		now := clock.Now().UTC().Truncate(time.Second)
		a := start(1, now.Add(-2*time.Hour))
		b := start(club.ID, now.Add(-time.Minute))

		x, err := privacy.Of(d.Svc).ExportHousehold(ctx, club.ID, engine.DemoUserKey)
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Sessions) != 1 || !x.Sessions[0].CreatedAt.Equal(b.CreatedAt) {
			t.Fatalf("club B's export of its household lists sessions %+v, want only its own, started %s", x.Sessions, b.CreatedAt)
		}
		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, club.ID, lena, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Load(ctx, a.ID); err != nil {
			t.Fatalf("club B's erasure ended club A's session of the same user key: %v", err)
		}
		if _, err := st.Load(ctx, b.ID); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("club B's own session after the erasure of its household: %v", err)
		}
	})
}

// TestErasureRewritesOnlyAuditEntriesAboutThePerson: the club's treasurer
// Kim Kassier becomes the bank account's holder (payment_settings.update)
// and staff note about Alex that Kim Kassier called; then a member of
// the same name is imported and erased. Only the entries about the
// erased person change: the settings' and Alex's entries keep the name.
func TestErasureRewritesOnlyAuditEntriesAboutThePerson(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		staff := engine.Actor{Name: "treasurer@club.example"}
		if _, err := settings.Of(d.Svc).StaffSetPaymentSettings(ctx, staff, 1, settings.PaymentSettingsChange{BankCreditorName: enginetest.Str("Kim Kassier"),
			BankIBAN: enginetest.Str(alexIBAN)}); err != nil {
			t.Fatal(err)
		}
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return d.Svc.Audit(ctx, tx, staff, engine.AuditEntry{OrganisationID: 1, Action: "test.note", TargetType: "person", TargetID: strconv.FormatInt(demoAlex, 10),
				After: map[string]string{"note": "Kim Kassier called about Alex's fee", "by": "Kim Kassier"}})
		}); err != nil {
			t.Fatal(err)
		}
		rep, err := organisation.Of(d.Svc).StaffImportPersons(ctx, 1, []organisation.PersonRow{{ExternalID: "kim-1", FirstName: "Kim", LastName: "Kassier",
			DateOfBirth: "1979-03-04", Email: "kim.k@example.net", UserKeys: []string{"kassier-home"}}}, func(string) bool { return true },
			organisation.PersonImportOptions{Actor: &staff})
		if err != nil {
			t.Fatal(err)
		}
		kim := rep.Rows[0].PersonID
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return d.Svc.Audit(ctx, tx, staff, engine.AuditEntry{OrganisationID: 1, Action: "test.note", TargetType: "person", TargetID: strconv.FormatInt(kim, 10),
				After: map[string]string{"note": "Kim Kassier asked to be erased"}})
		}); err != nil {
			t.Fatal(err)
		}
		before := auditDetails(t, db)

		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, staff, 1, kim, privacy.ErasureOptions{}); err != nil {
			t.Fatal(err)
		}
		after := auditDetails(t, db)
		for id, b := range before {
			a := after[id]
			switch {
			case b.TargetType == "person" && b.TargetID == strconv.FormatInt(kim, 10):
				if strings.Contains(a.AfterJSON, "Kassier") || a.ErasedAt == nil {
					t.Errorf("the entry about the erased person still names them: %s %s", a.Action, a.AfterJSON)
				}
			case a.BeforeJSON != b.BeforeJSON || a.AfterJSON != b.AfterJSON || a.ErasedAt != nil:
				t.Errorf("the erasure rewrote %s about %s %s:\nbefore %s %s\nafter  %s %s", b.Action, b.TargetType, b.TargetID, b.BeforeJSON, b.AfterJSON, a.BeforeJSON, a.AfterJSON)
			}
		}
		if !strings.Contains(before[firstAudit(before, "payment_settings.update")].AfterJSON, "Kim Kassier") {
			t.Fatal("the settings' entry does not name the account holder: the test proves nothing")
		}
	})
}

// auditDetails reads every audit entry by id.
func auditDetails(t *testing.T, db *bun.DB) map[int64]engine.AuditRecord {
	t.Helper()
	var rows []engine.AuditRecord
	if err := db.NewSelect().Model(&rows).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[int64]engine.AuditRecord{}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out
}

// firstAudit is the id of an entry of the action.
func firstAudit(entries map[int64]engine.AuditRecord, action string) int64 {
	for id, e := range entries {
		if e.Action == action {
			return id
		}
	}
	return 0
}

// TestErasureTakesTheAddressOutOfEveryMessageToIt: the answer to the
// household's data request (data_request_done) names only the request,
// yet went to every address of the household, the erased person's too.
// After the erasure no message of the club keeps that address; the
// others' addresses stay, and another club's message to it is not this
// club's to change.
func TestErasureTakesTheAddressOutOfEveryMessageToIt(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		req, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, engine.DemoUserKey, privacy.NewDataRequest{Kind: privacy.DataRequestErasure})
		if err != nil {
			t.Fatal(err)
		}
		if err := privacy.Of(d.Svc).CompleteDataRequest(ctx, engine.CommandLine, 1, req.ID, "Done."); err != nil {
			t.Fatal(err)
		}
		done, err := store.OutboxMessageByKey(ctx, db, "data_request_done:"+strconv.FormatInt(req.ID, 10))
		if err != nil || !strings.Contains(done.Recipient, quirin.email) {
			t.Fatalf("the answer did not go to the person's address: %+v %v", done, err)
		}
		if _, err := db.NewUpdate().Model((*engine.OutboxMessage)(nil)).Set("sent_at = ?", clock.Now()).Where("id = ?", done.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		other := &engine.OutboxMessage{Kind: privacy.KindDataRequestDone, DedupKey: "data_request_done:other-club", Recipient: quirin.email,
			Payload: `{"requestId":999,"organisationId":2}`, CreatedAt: clock.Now()}
		if _, err := db.NewInsert().Model(other).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, id, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		var after engine.OutboxMessage
		if err := db.NewSelect().Model(&after).Where("id = ?", done.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(after.Recipient), strings.ToLower(quirin.email)) ||
			!strings.Contains(after.Recipient, "alex.morgan@example.org") || !strings.Contains(after.Recipient, "sam.morgan@example.org") {
			t.Fatalf("the answer's recipients after the erasure: %q (were %q)", after.Recipient, done.Recipient)
		}
		if err := db.NewSelect().Model(&after).Where("id = ?", other.ID).Scan(ctx); err != nil || after.Recipient != quirin.email {
			t.Fatalf("another club's message to the address: %q %v", after.Recipient, err)
		}
	})
}

// TestErasureTakesTheTextItsWriterTyped: Quirin writes, for the whole
// household, what should change (no name in it); Alex writes another.
// Quirin's erasure takes the text Quirin typed, not Alex's. A household
// of one person is its own request's writer.
func TestErasureTakesTheTextItsWriterTyped(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		const typed = "Our street is Lindenweg 12 now, please correct it."
		ask := func(writer int64, text string) *privacy.DataRequest {
			t.Helper()
			r, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, engine.DemoUserKey, privacy.NewDataRequest{Kind: privacy.DataRequestCorrection,
				WriterID: &writer, Message: text})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		mine, alexs := ask(id, typed), ask(demoAlex, "Please send the card to Alex.")
		x, err := privacy.Of(d.Svc).ExportPerson(ctx, 1, id)
		if err != nil || len(x.Requests) != 1 || x.Requests[0].ID != mine.ID {
			t.Fatalf("the writer's export lists requests %+v (%v), want theirs", x.Requests, err)
		}
		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, id, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		var after []privacy.DataRequest
		if err := db.NewSelect().Model(&after).Order("id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for _, r := range after {
			switch r.ID {
			case mine.ID:
				if strings.Contains(r.Message, "Lindenweg") {
					t.Errorf("the text the erased person typed is still stored: %q", r.Message)
				}
			case alexs.ID:
				if r.Message != alexs.Message {
					t.Errorf("Alex's request changed: %q", r.Message)
				}
			}
		}
		// One person, no writer said: the person wrote it.
		if _, err := organisation.Of(d.Svc).ImportPersons(ctx, 1, []organisation.PersonRow{{ExternalID: "solo-1", FirstName: "Solo", LastName: "Single",
			DateOfBirth: "1970-01-02", UserKeys: []string{"solo-home"}}}, func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		solo, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, "solo-home", privacy.NewDataRequest{Kind: privacy.DataRequestErasure})
		if err != nil || solo.WriterID == nil {
			t.Fatalf("a one-person household's request has no writer: %+v %v", solo, err)
		}
		// A writer must be of the household.
		if _, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, "solo-home", privacy.NewDataRequest{Kind: privacy.DataRequestErasure, WriterID: &id}); engine.ErrorCode(err) != engine.CodeInvalid {
			t.Fatalf("a writer of another household: %v, want invalid", err)
		}
	})
}

// quirinsHome is the household Quirin is alone in, for the tests that
// empty a household: a user key found nowhere else.
const quirinsHome = "zabelthorn-home-77"

// quirinAlone imports Quirin into a household of their own, registers
// and pays, and leaves the household's key in every kind of record: a
// data request, a session, a staff look at the registration, a renewal
// prompt naming the household. It returns Quirin's id.
func quirinAlone(t *testing.T, d *enginetest.Demo) int64 {
	t.Helper()
	ctx := context.Background()
	rep, err := organisation.Of(d.Svc).ImportPersons(ctx, 1, []organisation.PersonRow{{ExternalID: quirin.external, FirstName: quirin.first,
		LastName: quirin.last, DateOfBirth: quirin.born, Email: quirin.email, UserKeys: []string{quirinsHome}}}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	id := rep.Rows[0].PersonID
	form := registerQuirinAs(t, d, quirinsHome, id)
	d.Pay(form)
	if _, err := privacy.Of(d.Svc).RequestDataChange(ctx, 1, quirinsHome, privacy.NewDataRequest{Kind: privacy.DataRequestErasure}); err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	if err := session.NewDBStore(d.DB).Create(ctx, &session.Session{ID: sessiontest.NewID(), UserKey: quirinsHome,
		Values: map[string]string{session.AttrOrganisation: "1"}, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := privacy.Of(d.Svc).RecordAccess(ctx, engine.Actor{Name: "registrar@club.example"}, privacy.Access{OrganisationID: 1,
		Kind: privacy.AccessRegistration, RecordID: strconv.FormatInt(form.ProcessID, 10), UserKey: quirinsHome}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB.NewInsert().Model(&engine.OutboxMessage{Kind: "renewal_prompt", DedupKey: "renewal_prompt:period:2:household:5eed0f2a", // hashed, as renewalKey writes it Recipient: quirin.email,
		Payload:   `{"organisationId":1,"endingPeriodId":1,"nextPeriodId":2,"userKey":"` + quirinsHome + `","personIds":[` + strconv.FormatInt(id, 10) + `]}`,
		CreatedAt: now}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestErasedHouseholdsKeyIsReplacedEverywhere: once the last person of a
// household is erased, its user key is nowhere (orders, registrations,
// requests, payloads, sessions, access log), replaced by the one label
// of the household; a later staff export of the erased person records
// the label, not the key, in the access log.
func TestErasedHouseholdsKeyIsReplacedEverywhere(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := quirinAlone(t, d)
		if hits := scanFor(t, db, []string{quirinsHome}); len(hits) < 6 {
			t.Fatalf("the household's key is not where the test put it: %v", hits)
		}
		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, id, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		if hits := scanFor(t, db, []string{quirinsHome}); len(hits) > 0 {
			t.Fatalf("after the erasure of the household's last person its key is still stored:\n%s", strings.Join(hits, "\n"))
		}
		label := privacy.ErasedHouseholdLabel(id, 1)
		for _, table := range []string{"orders", "process_instances", "data_requests", "staff_access_log"} {
			if n, err := db.NewSelect().Table(table).Where("user_key = ?", label).Count(ctx); err != nil || n == 0 {
				t.Errorf("%s: no row carries the household's label %q (%v)", table, label, err)
			}
		}
		// Staff open the erased person's data afterwards, as the staff page
		// records it (the export's first user key).
		x, err := privacy.Of(d.Svc).ExportPerson(ctx, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Subject.UserKeys) != 1 || x.Subject.UserKeys[0] != label {
			t.Fatalf("the erased person's export names households %v, want the label %q", x.Subject.UserKeys, label)
		}
		if err := privacy.Of(d.Svc).RecordAccess(ctx, engine.Actor{Name: "admin@club.example"}, privacy.Access{OrganisationID: 1, Kind: privacy.AccessExport,
			RecordID: strconv.FormatInt(id, 10), UserKey: x.Subject.UserKeys[0], PersonID: id}); err != nil {
			t.Fatal(err)
		}
		if hits := scanFor(t, db, []string{quirinsHome}); len(hits) > 0 {
			t.Fatalf("a later export wrote the household's key back:\n%s", strings.Join(hits, "\n"))
		}
	})
}

// renamePerson changes a person's first name, as staff correct it.
func renamePerson(t *testing.T, db *bun.DB, id int64, first string) {
	t.Helper()
	if _, err := db.NewUpdate().Model((*engine.Person)(nil)).Set("first_name = ?", first).Where("id = ?", id).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestMandateHolderFoundByIDNotByName: Alex gives the household's mandate
// as "MORGAN, Alex"; the mandate records Alex's id. Alex's first name is
// corrected to Alexandra afterwards. Alex's erasure takes the mandate's
// holder and account all the same: it is found by id, not by a name
// that no longer matches.
func TestMandateHolderFoundByIDNotByName(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.DirectDebitFixture(t, db, 0)
		order := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "MORGAN, Alex", IBAN: enginetest.DemoIBAN, Consent: true, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		if m.HolderPersonID == nil || *m.HolderPersonID != enginetest.Alex {
			t.Fatalf("the mandate's holder is person %v, want Alex (%d)", m.HolderPersonID, enginetest.Alex)
		}
		renamePerson(t, db, enginetest.Alex, "Alexandra")
		if _, err := privacy.Of(f.Svc).ErasePerson(f.Ctx, engine.CommandLine, 1, enginetest.Alex, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		var after directdebit.DebitMandate
		if err := db.NewSelect().Model(&after).Where("id = ?", m.ID).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if after.Holder != privacy.ErasedLabel(enginetest.Alex) || after.IBAN != "" || after.RevokedAt == nil {
			t.Fatalf("Alex's mandate after Alex's erasure: holder %q iban %q revoked %v", after.Holder, after.IBAN, after.RevokedAt)
		}
	})
}

// TestTransferPayerFoundByIDNotByName: a transfer from "MORGAN ALEX" is
// assigned by the treasurer to the household's registration; the credit
// records Alex as its payer. Renamed Alexandra since, Alex is erased:
// the transfer's payer goes all the same.
func TestTransferPayerFoundByIDNotByName(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.Commit()
		org := int64(1)
		bc := &bankstatement.BankCredit{OrganisationID: &org, Account: enginetest.DemoIBAN, CreditID: "C-ALEX", CreditKey: "k-alex", AmountMinor: f.Payments(r.ID)[0].AmountMinor,
			Currency: "EUR", DebtorName: "MORGAN ALEX", DebtorIBAN: alexIBAN, Remittance: "Morgan family", State: bankstatement.CreditUnmatched, CreatedAt: clock.Now()}
		if _, err := db.NewInsert().Model(bc).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		res, err := bankstatement.Of(f.Svc).ResolveCredit(f.Ctx, engine.Actor{Name: "treasurer@club.test"}, org, bc.ID,
			bankstatement.CreditResolution{State: bankstatement.CreditAssigned, Payment: strconv.FormatInt(r.ID, 10)})
		if err != nil {
			t.Fatal(err)
		}
		if p := res.Credit.PayerPersonID; p == nil || *p != enginetest.Alex {
			t.Fatalf("the assigned credit's payer is person %v, want Alex (%d)", p, enginetest.Alex)
		}
		renamePerson(t, db, enginetest.Alex, "Alexandra")
		if _, err := privacy.Of(f.Svc).ErasePerson(f.Ctx, engine.CommandLine, 1, enginetest.Alex, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		var after bankstatement.BankCredit
		if err := db.NewSelect().Model(&after).Where("id = ?", bc.ID).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if after.DebtorName != privacy.ErasedLabel(enginetest.Alex) || after.DebtorIBAN != "" || after.Remittance != "" || after.AmountMinor != bc.AmountMinor {
			t.Fatalf("Alex's transfer after Alex's erasure: payer %q iban %q remittance %q amount %d", after.DebtorName, after.DebtorIBAN, after.Remittance, after.AmountMinor)
		}
	})
}
