package privacy_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/privacy"
	"portal/engine/registration"
	"portal/engine/staff"
)

// Consent records, the access log and retention (issue 30).

const demoTermsEN = "I accept the club rules and the privacy notice"

func consentsOf(t *testing.T, svc *engine.Service, instanceID int64) []engine.ConsentView {
	t.Helper()
	out, err := svc.RegistrationConsents(context.Background(), 1, instanceID)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConsentsRecordTheirTextVersion: a commit records each consent given
// on the path with the text shown; a changed definition text is a new
// version, and the records given before keep theirs.
func TestConsentsRecordTheirTextVersion(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		form := d.Commit(enginetest.Alex, enginetest.Robin)
		first := consentsOf(t, d.Svc, form.ProcessID)
		// terms for both, the guardian's consent for the junior only.
		if len(first) != 3 {
			t.Fatalf("%d consents recorded, want 3: %+v", len(first), first)
		}
		kinds := map[string]int{}
		var terms engine.ConsentView
		for _, c := range first {
			kinds[fmt.Sprintf("%s/%d", c.Kind, c.PersonID)]++
			if c.Language != "en" || c.GivenAt.IsZero() {
				t.Fatalf("consent %+v: want language en and a time", c)
			}
			if c.Kind == engine.ConsentClubRules {
				terms = c
			}
		}
		if kinds[fmt.Sprintf("club_rules/%d", enginetest.Alex)] != 1 || kinds[fmt.Sprintf("club_rules/%d", enginetest.Robin)] != 1 || kinds[fmt.Sprintf("guardian/%d", enginetest.Robin)] != 1 {
			t.Fatalf("consents by kind and person: %v", kinds)
		}
		if terms.Text != demoTermsEN || terms.Source != "membership/terms" {
			t.Fatalf("terms consent %+v", terms)
		}

		// The club changes the terms' text: a new definition version.
		spec, err := definition.ExportDefinition(ctx, db, 1, "membership", 0)
		if err != nil {
			t.Fatal(err)
		}
		const newTerms = "I accept the club rules of 2027 and the privacy notice"
		for i := range spec.Steps {
			if spec.Steps[i].Name == "terms" {
				if spec.Steps[i].Consent != engine.ConsentClubRules {
					t.Fatalf("the export lost the consent mark: %q", spec.Steps[i].Consent)
				}
				spec.Steps[i].Question["en"] = newTerms
			}
		}
		if res, err := definition.ImportDefinition(ctx, db, spec); err != nil || res.Unchanged {
			t.Fatalf("import: %+v, %v", res, err)
		}
		// Another household registers Sam under the new version.
		if _, err := db.NewInsert().Model(&engine.UserPerson{UserKey: "other-household", PersonID: enginetest.Sam, OrganisationID: 1}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		f := &enginetest.Fixture{T: t, Ctx: ctx, DB: db, Svc: d.Svc, GW: d.GW}
		r := f.Start("other-household", enginetest.Sam)
		r.Commit()
		second := consentsOf(t, d.Svc, r.ID)
		if len(second) != 1 || second[0].Text != newTerms || second[0].TextVersion == terms.TextVersion {
			t.Fatalf("consents under the new text: %+v (old version %s)", second, terms.TextVersion)
		}
		// The old records keep their text.
		again := consentsOf(t, d.Svc, form.ProcessID)
		for i := range again {
			a, b := again[i], first[i]
			a.InstanceID, b.InstanceID = nil, nil
			if a != b || !a.GivenAt.Equal(b.GivenAt) {
				t.Fatalf("an old consent changed: %+v, was %+v", again[i], first[i])
			}
		}
		if n := enginetest.CountRows(t, db, (*engine.ConsentText)(nil), "organisation_id = 1"); n != 3 {
			t.Fatalf("%d consent texts stored, want 3 (old terms, guardian, new terms)", n)
		}
		// The export of a person's consents.
		mine, err := engine.PersonConsents(ctx, db, 1, []int64{enginetest.Robin})
		if err != nil || len(mine) != 2 {
			t.Fatalf("Robin's consents: %+v, %v", mine, err)
		}
	})
}

// TestConsentsInTheMembersLanguage: a member answering in German
// consents to the German text, recorded as German.
func TestConsentsInTheMembersLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		f.Ctx = engine.WithLanguage(f.Ctx, "de")
		r := f.Start(engine.DemoUserKey, enginetest.Alex)
		r.Commit()
		got := consentsOf(t, f.Svc, r.ID)
		if len(got) != 1 || got[0].Language != "de" || got[0].Text != "Ich akzeptiere die Vereinsstatuten und die Datenschutzerklärung" {
			t.Fatalf("consents in German: %+v", got)
		}
	})
}

// TestConsentMarkIsValidated: a consent mark names a known kind, on an
// ITC or BCB step.
func TestConsentMarkIsValidated(t *testing.T) {
	for _, tc := range []struct {
		name, step string
		ok         bool
	}{
		{"checkbox marked", "{name: photos, questionText: Photos may be published, questionType: BCB, consent: other}", true},
		{"accept unmarked", "{name: terms, questionText: Terms, questionType: ITC, required: true}", true},
		{"unknown kind", "{name: terms, questionText: Terms, questionType: ITC, consent: everything}", false},
		{"text step", "{name: phone, questionText: Phone, questionType: TXT, consent: privacy_notice}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := definition.ParseDefinition([]byte("key: k\nname: K\ncategory: MEMBERSHIP\norganisationId: 1\nsteps:\n  - " + tc.step + "\n"))
			if (err == nil) != tc.ok {
				t.Fatalf("parse: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "consent") {
				t.Fatalf("the refusal does not name the consent: %v", err)
			}
		})
	}
}

// TestAccessLogFilters: entries by staff member and record, and those
// about a household for its export.
func TestAccessLogFilters(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		ann, bob := engine.Actor{Name: "ann@club.example"}, engine.Actor{Name: "bob@club.example"}
		for _, x := range []struct {
			who engine.Actor
			a   privacy.Access
		}{
			{ann, privacy.Access{OrganisationID: 1, Kind: privacy.AccessRegistration, RecordID: "7", UserKey: engine.DemoUserKey}},
			{bob, privacy.Access{OrganisationID: 1, Kind: privacy.AccessPerson, RecordID: "2", PersonID: enginetest.Sam}},
			{bob, privacy.Access{OrganisationID: 1, Kind: privacy.AccessRegistration, RecordID: "9", UserKey: "someone-else"}},
		} {
			if err := privacy.Of(d.Svc).RecordAccess(ctx, x.who, x.a); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name string
			q    privacy.AccessQuery
			want int
		}{
			{"all", privacy.AccessQuery{OrganisationID: 1}, 3},
			{"by staff member", privacy.AccessQuery{OrganisationID: 1, Actor: bob.Name}, 2},
			{"by record", privacy.AccessQuery{OrganisationID: 1, Kind: privacy.AccessRegistration, RecordID: "7"}, 1},
			{"another organisation", privacy.AccessQuery{OrganisationID: 2}, 0},
		} {
			got, err := privacy.Of(d.Svc).AccessLog(ctx, tc.q)
			if err != nil || len(got) != tc.want {
				t.Fatalf("%s: %d entries (%v), want %d", tc.name, len(got), err, tc.want)
			}
		}
		about, err := privacy.AccessLogAbout(ctx, db, 1, []string{engine.DemoUserKey}, []int64{enginetest.Alex, enginetest.Sam, enginetest.Robin, enginetest.Jamie})
		if err != nil || len(about) != 2 {
			t.Fatalf("about the demo household: %+v, %v; want the registration and Sam", about, err)
		}
	})
}

// addSeasons adds n periods after the demo period, each a year.
func addSeasons(t *testing.T, db *bun.DB, n int) []engine.MembershipPeriod {
	t.Helper()
	ctx := context.Background()
	var cur engine.MembershipPeriod
	if err := db.NewSelect().Model(&cur).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var out []engine.MembershipPeriod
	for i := range n {
		start := cur.EndDate.AddDate(0, 0, 1)
		p := engine.MembershipPeriod{ID: int64(10 + i), OrganisationID: 1, Name: fmt.Sprint("Season ", start.Year()), StartDate: start,
			EndDate: start.AddDate(1, 0, -1), Status: engine.PeriodClosed, Currency: "EUR", DefinitionKey: "membership"}
		if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		out, cur = append(out, p), p
	}
	return out
}

func applyRetention(t *testing.T, svc *engine.Service, at time.Time) privacy.RetentionResult {
	t.Helper()
	res, err := privacy.Of(svc).ApplyRetention(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRetentionErasesLapsedPersons: nobody inside three seasons
// without a membership, everybody past them (erased as on request, by the
// retention), and a second run changes nothing; the books stay.
func TestRetentionErasesLapsedPersons(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		clk := enginetest.NewClock(clock.Now().UTC())
		d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		form := d.Commit(enginetest.Alex, enginetest.Robin)
		d.Pay(form)
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("process_instance_id = ?", form.ProcessID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		seasons := addSeasons(t, db, 3)
		lastEnd := seasons[2].EndDate
		// Every person's last membership (or record) is in or before the
		// demo period: the third season after it ends at lastEnd.
		if res := applyRetention(t, d.Svc, lastEnd); res.Persons != 0 {
			t.Fatalf("inside the retention: %d persons erased", res.Persons)
		}
		if n := enginetest.CountRows(t, db, (*engine.Person)(nil), "erased_at IS NOT NULL"); n != 0 {
			t.Fatalf("%d persons erased inside the retention", n)
		}
		past := lastEnd.AddDate(0, 0, 2)
		clk.Advance(past.Sub(clk.Now())) // the erasure's own clock: the memberships are over
		if res := applyRetention(t, d.Svc, past); res.Persons != 4 {
			t.Fatalf("past the retention: %d persons erased, want 4", res.Persons)
		}
		if res := applyRetention(t, d.Svc, past.AddDate(0, 0, 1)); res.Total() != 0 {
			t.Fatalf("a second run changed %+v", res)
		}
		for _, table := range []struct {
			model any
			where string
		}{
			{(*engine.Person)(nil), "first_name = 'Alex' OR last_name = 'Morgan' OR email LIKE '%morgan%'"},
			{(*engine.ProcessData)(nil), "instance_id = " + fmt.Sprint(form.ProcessID)},
			{(*engine.ConsentRecord)(nil), "organisation_id = 1"},
			{(*engine.UserPerson)(nil), "organisation_id = 1"},
			{(*engine.OrderLine)(nil), "description LIKE '%Morgan%'"},
			{(*engine.OutboxMessage)(nil), "recipient LIKE '%morgan%' OR payload LIKE '%Morgan%'"},
		} {
			if n := enginetest.CountRows(t, db, table.model, table.where); n != 0 {
				t.Fatalf("%T: %d rows left where %s", table.model, n, table.where)
			}
		}
		if n := enginetest.CountRows(t, db, (*engine.AuditRecord)(nil), "action = 'person.erase' AND actor = ?", privacy.RetentionActor.Name); n != 4 {
			t.Fatalf("%d erasures audited as the retention's, want 4", n)
		}
		var after engine.Order
		if err := db.NewSelect().Model(&after).Where("id = ?", order.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if after.TotalMinor != order.TotalMinor || after.Status != engine.OrderPaid || after.PayReference != order.PayReference {
			t.Fatalf("the order changed: %+v, was %+v", after, order)
		}
		if n := enginetest.CountRows(t, db, (*engine.Membership)(nil), "process_instance_id = ?", form.ProcessID); n != 2 {
			t.Fatalf("%d memberships left, want 2", n)
		}
	})
}

// TestRetentionOfAnswersMessagesAndAccessLog: each goes past its own
// retention, not before, once; an organisation's setting wins over the default.
func TestRetentionOfAnswersMessagesAndAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		clk := enginetest.NewClock(clock.Now().UTC())
		d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		form := d.Commit(enginetest.Alex, enginetest.Robin)
		d.Pay(form)
		archivedAt := clk.Now().Add(registration.ArchiveAfter + time.Hour)
		if n, err := registration.ArchiveFinished(ctx, db, archivedAt, registration.ArchiveKeep); err != nil || n != 1 {
			t.Fatalf("archive: %d, %v", n, err)
		}
		// Messages: one sent now.
		var msg engine.OutboxMessage
		if err := db.NewSelect().Model(&msg).OrderExpr("id").Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		sent := clk.Now()
		if err := engine.MarkMessageSent(ctx, db, msg.ID, sent); err != nil {
			t.Fatal(err)
		}
		if err := privacy.Of(d.Svc).RecordAccess(ctx, engine.Actor{Name: "ann@club.example"}, privacy.Access{OrganisationID: 1, Kind: privacy.AccessRegistration, RecordID: "1"}); err != nil {
			t.Fatal(err)
		}
		payload := func() string {
			var m engine.OutboxMessage
			if err := db.NewSelect().Model(&m).Where("id = ?", msg.ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return m.Payload
		}
		archived := func() int {
			return enginetest.CountRows(t, db, (*staff.ProcessArchive)(nil), "instance_id = ? AND data IS NOT NULL", form.ProcessID)
		}
		day := 24 * time.Hour
		// Inside every default retention.
		if res := applyRetention(t, d.Svc, sent.Add(engine.DefaultMessageDays*day-day)); res.Total() != 0 || payload() == "{}" || archived() != 1 {
			t.Fatalf("inside the retention: %+v", res)
		}
		// Past the messages' 90 days.
		if res := applyRetention(t, d.Svc, sent.Add(engine.DefaultMessageDays*day+day)); res.Messages != 1 || payload() != "{}" || res.Answers != 0 {
			t.Fatalf("past the messages' retention: %+v", res)
		}
		// Answers a year after the archive.
		if res := applyRetention(t, d.Svc, archivedAt.AddDate(0, engine.DefaultAnswerMonths, 0).Add(-day)); res.Answers != 0 || archived() != 1 {
			t.Fatalf("inside the answers' retention: %+v", res)
		}
		if res := applyRetention(t, d.Svc, archivedAt.AddDate(0, engine.DefaultAnswerMonths, 0).Add(day)); res.Answers != 1 || archived() != 0 {
			t.Fatalf("past the answers' retention: %+v", res)
		}
		if n := enginetest.CountRows(t, db, (*staff.ProcessArchive)(nil), "instance_id = ? AND mode = ?", form.ProcessID, registration.ArchiveRemove); n != 1 {
			t.Fatalf("the archive's mode is not remove")
		}
		// The access log: shortened to 60 days by the organisation.
		sixty := 60
		if _, err := d.Svc.StaffUpdateRetentionSettings(ctx, engine.CommandLine, 1, engine.RetentionSettingsChange{AccessLogDays: &sixty}); err != nil {
			t.Fatal(err)
		}
		if n := enginetest.CountRows(t, db, (*privacy.AccessEntry)(nil), "organisation_id = 1"); n != 1 {
			t.Fatalf("the access log was pruned before its 60 days: %d rows", n)
		}
		if res := applyRetention(t, d.Svc, clk.Now().Add(61*day)); res.AccessLog != 1 {
			t.Fatalf("past the access log's retention: %+v", res)
		}
		if res := applyRetention(t, d.Svc, clk.Now().Add(62*day)); res.Total() != 0 {
			t.Fatalf("a second run changed %+v", res)
		}
	})
}

// TestRetentionSettingsAreValidatedAndAudited: a bad value changes
// nothing; a good one is stored and audited; 0 returns to the default.
func TestRetentionSettingsAreValidatedAndAudited(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		bad, two, zero := 0, 2, 0
		bad = -1
		if _, err := d.Svc.StaffUpdateRetentionSettings(ctx, engine.CommandLine, 1, engine.RetentionSettingsChange{PersonSeasons: &two, MessageDays: &bad}); engine.ErrorCode(err) != engine.CodeValidation {
			t.Fatalf("a negative day count: %v", err)
		}
		if got, _ := d.Svc.RetentionSettings(ctx, 1); got != engine.DefaultRetentionSettings() {
			t.Fatalf("a refused change changed %+v", got)
		}
		got, err := d.Svc.StaffUpdateRetentionSettings(ctx, engine.CommandLine, 1, engine.RetentionSettingsChange{PersonSeasons: &two})
		if err != nil || got.PersonSeasons != 2 || got.MessageDays != engine.DefaultMessageDays {
			t.Fatalf("update: %+v, %v", got, err)
		}
		if n := enginetest.CountRows(t, db, (*engine.AuditRecord)(nil), "action = 'retention_settings.update'"); n != 1 {
			t.Fatalf("%d audit entries", n)
		}
		if got, _ = d.Svc.StaffUpdateRetentionSettings(ctx, engine.CommandLine, 1, engine.RetentionSettingsChange{PersonSeasons: &zero}); got.PersonSeasons != engine.DefaultPersonSeasons {
			t.Fatalf("0 did not return to the default: %+v", got)
		}
	})
}

// syncBuffer is a log destination for concurrent runners.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestRetentionRunsOnceInACluster: two runners on PostgreSQL, both with
// the schedule, run a due retention job once.
func TestRetentionRunsOnceInACluster(t *testing.T) {
	dbtest.SkipWithoutPostgres(t)
	db := dbtest.Postgres(t)
	ctx := context.Background()
	d := enginetest.Seed(t, db)
	if err := privacy.Of(d.Svc).RecordAccess(ctx, engine.Actor{Name: "ann@club.example"}, privacy.Access{OrganisationID: 1, Kind: privacy.AccessPerson, RecordID: "1", PersonID: enginetest.Alex}); err != nil {
		t.Fatal(err)
	}
	later := clock.Now().Add(3 * 365 * 24 * time.Hour) // the access log's two years are past
	var out syncBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	var runners []*jobs.Runner
	for i := range 2 {
		r := jobs.New(db, jobs.Config{Instance: fmt.Sprint("node", i), Now: func() time.Time { return later }})
		privacy.Of(d.Svc).ScheduleRetention(r, func() time.Time { return later }, log)
		if err := r.EnqueueSchedules(ctx); err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
	}
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(func() {
			if _, err := r.Work(ctx, 5); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(out.String(), "retention applied"); n != 1 {
		t.Fatalf("the retention ran %d times:\n%s", n, out.String())
	}
	if n := enginetest.CountRows(t, db, (*jobs.Job)(nil), "kind = ? AND state = ?", engine.KindApplyRetention, jobs.StateSucceeded); n != 1 {
		t.Fatalf("%d retention jobs succeeded, want 1", n)
	}
}
