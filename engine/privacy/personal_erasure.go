package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/invitation"
	"portal/engine/message"
	"portal/engine/registration"
)

// Erasure of a person (issue 30): their personal data is replaced or
// removed wherever it is stored, while the books stay whole: the person's
// row, memberships, orders, order lines and payments keep their ids,
// amounts, states and references, with the names replaced by
// "erased person N". The external id is cleared, so that the same person
// imported again from the backend is a new record.
//
// Like the export, the erasure is table-driven: erasureSteps is one step
// per table (or column group), each saying which tables it covers; the
// erasure test scans every text column of every table for what it erased.
//
// Refused (conflict, with the reason) while the person has an active
// membership of a period not yet over, or a payment is open (an unpaid
// order, a pending attempt, a refund due), unless forced; forcing is for
// administrators, and the audit entry says it was forced and why.

// ErasureOptions are how an erasure is asked for.
type ErasureOptions struct {
	// Force erases despite an active membership or an open payment.
	Force bool
}

// ErasureReport says what an erasure changed, as counts of rows per step.
type ErasureReport struct {
	PersonID int64            `json:"personId"`
	Label    string           `json:"label"`
	Forced   bool             `json:"forced"`
	Overrode string           `json:"overrode,omitempty"`
	Rows     map[string]int64 `json:"rows"`
}

// ErasedLabel is the name an erased person's records carry.
func ErasedLabel(personID int64) string { return "erased person " + strconv.FormatInt(personID, 10) }

// erasure is one erasure under way.
type erasure struct {
	org    *engine.Organisation
	person engine.Person
	label  string
	now    time.Time
	// strong are texts that identify the person wherever they appear
	// (the e-mail address, the full name, the date of birth); weak those
	// that do only in rows about them (a first name, an answer).
	strong, weak []string
	// scope is the person's export scope: their registrations, orders
	// and payment references.
	scope *exportScope
	// gone are the user keys no person is linked to any more: the whole
	// household is erased, with its sessions.
	gone []string
}

// erasureStep erases one kind of stored data.
type erasureStep struct {
	Name   string
	Tables []string
	run    func(ctx context.Context, tx bun.Tx, e *erasure) (int64, error)
}

// erasureSteps run in order, in one transaction.
var erasureSteps = []erasureStep{
	{"answers", []string{"process_data"}, eraseAnswers},
	{"archives", []string{"process_archives"}, eraseArchivedAnswers},
	{"orderLines", []string{"order_lines"}, eraseOrderLines},
	{"payments", []string{"payments", "payment_events"}, erasePaymentNotes},
	{"bankCredits", []string{"bank_credits"}, eraseBankCredits},
	{"mandates", []string{"debit_mandates"}, eraseMandates},
	{"messages", []string{"outbox_messages"}, eraseMessages},
	{"jobs", []string{"jobs"}, eraseJobErrors},
	{"optOuts", []string{"message_opt_outs"}, eraseOptOuts},
	{"requests", []string{"data_requests"}, eraseRequests},
	{"webhookEvents", []string{"webhook_events", "webhook_deliveries"}, eraseWebhookBodies},
	{"audit", []string{"audit_log"}, eraseAuditDetails},
	{"consents", []string{"consent_records"}, eraseConsents},
	{"accessLog", []string{"staff_access_log"}, eraseAccessLog},
	{"links", []string{"user_persons"}, eraseLinks},
	{"sessions", []string{"sessions", "invitations"}, eraseHouseholdSessions},
	{"person", []string{"persons", "memberships", "membership_cards", "orders", "process_instances"}, erasePersonRow},
}

// ErasureTables lists the tables the erasure steps cover, by step.
func ErasureTables() map[string][]string {
	out := map[string][]string{}
	for _, s := range erasureSteps {
		out[s.Name] = slices.Clone(s.Tables)
	}
	return out
}

// ErasePerson erases a person of an organisation as the actor asks; see
// the package comment above. Audited in the same transaction.
func (s *Service) ErasePerson(ctx context.Context, actor engine.Actor, orgID, personID int64, opt ErasureOptions) (rep *ErasureReport, err error) {
	defer engine.ClassifyUnavailable(&err)
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		sc, err := s.personScope(ctx, tx, orgID, personID)
		if err != nil {
			return err
		}
		p := sc.persons[0]
		if p.ErasedAt != nil {
			return engine.Errorf(engine.CodeConflict, "Person %d is already erased.", personID)
		}
		// The registrations, orders and references come from the export's
		// own sections, so what is erased is what was exported.
		if _, err := s.exportScoped(ctx, tx, sc, ExportSubject{Kind: "person"}); err != nil {
			return err
		}
		reason, err := erasureBlocked(ctx, tx, sc, s.Clock())
		if err != nil {
			return err
		}
		if reason != "" && !opt.Force {
			return engine.Errorf(engine.CodeConflict, "%s cannot be erased yet: %s. An administrator can force the erasure.", ErasedLabel(personID), reason)
		}
		rep = &ErasureReport{PersonID: personID, Label: ErasedLabel(personID), Forced: opt.Force && reason != "", Rows: map[string]int64{}}
		if rep.Forced {
			rep.Overrode = reason
		}
		e := &erasure{org: sc.org, person: p, label: rep.Label, now: s.Clock().UTC(), scope: sc}
		e.strong, e.weak, err = erasureNeedles(ctx, tx, p, sc)
		if err != nil {
			return err
		}
		for _, k := range sc.userKeys {
			n, err := tx.NewSelect().Model((*engine.UserPerson)(nil)).Where("user_key = ? AND organisation_id = ? AND person_id <> ?", k, orgID, personID).Count(ctx)
			if err != nil {
				return fmt.Errorf("count household: %w", err)
			}
			if n == 0 {
				e.gone = append(e.gone, k)
			}
		}
		for _, step := range erasureSteps {
			n, err := step.run(ctx, tx, e)
			if err != nil {
				return fmt.Errorf("erase %s: %w", step.Name, err)
			}
			rep.Rows[step.Name] = n
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "person.erase", TargetType: "person",
			TargetID: strconv.FormatInt(personID, 10), After: rep})
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// erasureBlocked says why the person should not be erased yet, or "".
func erasureBlocked(ctx context.Context, db bun.IDB, sc *exportScope, now time.Time) (string, error) {
	id := sc.personIDs[0]
	var active []string
	if err := db.NewSelect().TableExpr("memberships AS m").Join("JOIN membership_periods AS p ON p.id = m.period_id").
		ColumnExpr("p.name").Where("m.person_id = ? AND m.status = ? AND p.end_date >= ?", id, engine.MembershipActive, now.UTC().Truncate(24*time.Hour)).
		OrderExpr("p.start_date").Scan(ctx, &active); err != nil {
		return "", fmt.Errorf("check memberships: %w", err)
	}
	if len(active) > 0 {
		return fmt.Sprintf("an active membership (%s)", strings.Join(active, ", ")), nil
	}
	if len(sc.orderIDs) == 0 {
		return "", nil
	}
	open, err := db.NewSelect().Model((*engine.Order)(nil)).Where("id IN (?) AND status = ?", bun.List(sc.orderIDs), engine.OrderUnpaid).Count(ctx)
	if err != nil {
		return "", fmt.Errorf("check orders: %w", err)
	}
	pending, err := db.NewSelect().Model((*engine.Payment)(nil)).Where("order_id IN (?) AND (status = ? OR refund_status = ?)", bun.List(sc.orderIDs), engine.PaymentPending, engine.RefundDue).Count(ctx)
	if err != nil {
		return "", fmt.Errorf("check payments: %w", err)
	}
	if open+pending > 0 {
		return "a payment is open", nil
	}
	return "", nil
}

// erasureNeedles are the texts to replace: strong ones (e-mail, full
// names, date of birth) and weak ones (single names, free-text answers),
// longest first so that "Anna Muster" goes before "Anna".
func erasureNeedles(ctx context.Context, db bun.IDB, p engine.Person, sc *exportScope) (strong, weak []string, err error) {
	add := func(list *[]string, s string) {
		if s = strings.TrimSpace(s); len([]rune(s)) >= 2 && !slices.Contains(strong, s) && !slices.Contains(weak, s) {
			*list = append(*list, s)
		}
	}
	if p.Email != "" {
		add(&strong, p.Email)
		add(&strong, strings.ToLower(p.Email))
	}
	add(&strong, p.FirstName+" "+p.LastName)
	add(&strong, p.LastName+", "+p.FirstName)
	add(&strong, p.LastName+" "+p.FirstName)
	add(&strong, p.DateOfBirth.Format(time.DateOnly))
	add(&weak, p.FirstName)
	add(&weak, p.LastName)
	var answers []string
	if err := db.NewSelect().Model((*engine.ProcessData)(nil)).Column("data_value").Where("person_id = ? AND data_key = ?", p.ID, engine.DataAnswer).
		Scan(ctx, &answers); err != nil {
		return nil, nil, fmt.Errorf("load answers: %w", err)
	}
	for _, a := range answers {
		if len([]rune(a)) >= 4 { // a short answer ("yes", "12") says nothing of a person and is everywhere
			add(&weak, a)
		}
	}
	byLength := func(list []string) {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	}
	byLength(strong)
	byLength(weak)
	return strong, weak, nil
}

// replaceIn replaces every needle in the columns of table's rows that
// where selects (SQL with its args), and counts the rows changed; extra
// adds to each update (erased_at of the audit log).
func replaceIn(ctx context.Context, tx bun.Tx, table string, columns []string, needles []string, label string, where string, args []any, extra ...func(*bun.UpdateQuery) *bun.UpdateQuery) (int64, error) {
	var total int64
	for _, needle := range needles {
		q := tx.NewUpdate().Table(table)
		for _, c := range columns {
			q = q.Set("? = REPLACE(?, ?, ?)", bun.Ident(c), bun.Ident(c), needle, label)
		}
		for _, x := range extra {
			q = x(q)
		}
		q = q.Where(where, args...)
		q = q.WhereGroup(" AND ", func(w *bun.UpdateQuery) *bun.UpdateQuery {
			for _, c := range columns {
				w = w.WhereOr("? LIKE ?"+engine.LikeEscape, bun.Ident(c), engine.ContainsPattern(needle))
			}
			return w
		})
		res, err := q.Exec(ctx)
		if err != nil {
			return total, fmt.Errorf("replace in %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

func (e *erasure) all() []string { return append(slices.Clone(e.strong), e.weak...) }

func eraseAnswers(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	q := tx.NewDelete().Model((*engine.ProcessData)(nil)).WhereGroup(" AND ", func(w *bun.DeleteQuery) *bun.DeleteQuery {
		w = w.Where("person_id = ?", e.person.ID)
		if len(e.gone) > 0 {
			// The household's own answers go with its last person.
			w = w.WhereOr("person_id IS NULL AND instance_id IN (?)", tx.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("id").
				Where("organisation_id = ? AND user_key IN (?)", e.org.ID, bun.List(e.gone)))
		}
		return w
	})
	res, err := q.Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func eraseArchivedAnswers(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.userKeys) == 0 {
		return 0, nil
	}
	var rows []archiveRow
	if err := tx.NewSelect().Model(&rows).Where("data IS NOT NULL AND instance_id IN (?)", tx.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("id").
		Where("organisation_id = ? AND user_key IN (?)", e.org.ID, bun.List(e.scope.userKeys))).Scan(ctx); err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		var kept []registration.ArchivedAnswer
		if err := json.Unmarshal([]byte(*r.Data), &kept); err != nil {
			return n, fmt.Errorf("archive of %d: %w", r.InstanceID, err)
		}
		gone := func(a registration.ArchivedAnswer) bool {
			return (a.PersonID != nil && *a.PersonID == e.person.ID) || (a.PersonID == nil && len(e.gone) > 0)
		}
		left := slices.DeleteFunc(slices.Clone(kept), gone)
		if len(left) == len(kept) {
			continue
		}
		data, err := json.Marshal(left)
		if err != nil {
			return n, err
		}
		if _, err := tx.NewUpdate().Model((*archiveRow)(nil)).Set("data = ?", string(data)).Where("instance_id = ?", r.InstanceID).Exec(ctx); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func eraseOrderLines(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.orderIDs) == 0 {
		return 0, nil
	}
	return replaceIn(ctx, tx, "order_lines", []string{"description"}, e.all(), e.label, "order_id IN (?)", []any{bun.List(e.scope.orderIDs)})
}

func erasePaymentNotes(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.references) == 0 {
		return 0, nil
	}
	n, err := replaceIn(ctx, tx, "payments", []string{"problem", "refund_note"}, e.all(), e.label, "reference IN (?)", []any{bun.List(e.scope.references)})
	if err != nil {
		return n, err
	}
	m, err := replaceIn(ctx, tx, "payment_events", []string{"note"}, e.all(), e.label, "reference IN (?)", []any{bun.List(e.scope.references)})
	return n + m, err
}

// eraseBankCredits replaces the person's name in the transfers for their
// orders; where they were the payer, the account number goes too.
func eraseBankCredits(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.references) == 0 {
		return 0, nil
	}
	where, args := "payment_reference IN (?)", []any{bun.List(e.scope.references)}
	n, err := replaceIn(ctx, tx, "bank_credits", []string{"debtor_name", "remittance", "note"}, e.all(), e.label, where, args)
	if err != nil {
		return n, err
	}
	if _, err := tx.NewUpdate().Table("bank_credits").Set("debtor_iban = ''").Where(where, args...).
		Where("debtor_name LIKE ?"+engine.LikeEscape, engine.ContainsPattern(e.label)).Exec(ctx); err != nil {
		return n, err
	}
	return n, nil
}

// eraseMandates takes the person out of the household's direct-debit
// mandates they hold: the holder's name becomes the erased label, the
// account is blanked and the mandate revoked, so that nothing is ever
// collected under it again. Reference, creditor and signature time stay,
// as the orders collected under it do.
func eraseMandates(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.userKeys) == 0 {
		return 0, nil
	}
	where, args := "organisation_id = ? AND user_key IN (?)", []any{e.org.ID, bun.List(e.scope.userKeys)}
	n, err := replaceIn(ctx, tx, "debit_mandates", []string{"holder", "text"}, e.all(), e.label, where, args)
	if err != nil {
		return n, err
	}
	if _, err := tx.NewUpdate().Table("debit_mandates").Set("iban = '', bic = ''").Set("revoked_at = COALESCE(revoked_at, ?)", e.now).
		Where(where, args...).Where("holder LIKE ?"+engine.LikeEscape, engine.ContainsPattern(e.label)).Exec(ctx); err != nil {
		return n, fmt.Errorf("erase mandates: %w", err)
	}
	return n, nil
}

// eraseMessages takes the person's address out of the messages about
// them and their names out of the payloads; a message not sent yet that
// has no address left is marked sent so that it never goes.
func eraseMessages(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	msgs, err := scopeMessages(ctx, tx, e.scope)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, m := range msgs {
		var keep []string
		for _, a := range strings.Split(m.Recipient, ",") {
			if a = strings.TrimSpace(a); a != "" && !strings.EqualFold(a, e.person.Email) {
				keep = append(keep, a)
			}
		}
		recipient := strings.Join(keep, ", ")
		if len(keep) == 0 {
			recipient = e.label
		}
		payload := m.Payload
		for _, needle := range e.all() {
			payload = strings.ReplaceAll(payload, needle, e.label)
		}
		q := tx.NewUpdate().Model((*engine.OutboxMessage)(nil)).Set("recipient = ?", recipient).Set("payload = ?", payload).Where("id = ?", m.ID)
		if m.SentAt == nil && len(keep) == 0 {
			q = q.Set("sent_at = ?", e.now)
		}
		if recipient == m.Recipient && payload == m.Payload {
			continue
		}
		if _, err := q.Exec(ctx); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func eraseJobErrors(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if e.person.Email == "" {
		return 0, nil
	}
	return replaceIn(ctx, tx, "jobs", []string{"last_error"}, []string{e.person.Email, strings.ToLower(e.person.Email)}, e.label, "1 = 1", nil)
}

func eraseOptOuts(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if e.person.Email == "" {
		return 0, nil
	}
	res, err := tx.NewDelete().Model((*message.MessageOptOut)(nil)).Where("organisation_id = ? AND address = ?", e.org.ID, strings.ToLower(strings.TrimSpace(e.person.Email))).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func eraseRequests(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	where, args := "organisation_id = ? AND person_id = ?", []any{e.org.ID, e.person.ID}
	if len(e.scope.userKeys) > 0 {
		where, args = "organisation_id = ? AND (person_id = ? OR user_key IN (?))", []any{e.org.ID, e.person.ID, bun.List(e.scope.userKeys)}
	}
	return replaceIn(ctx, tx, "data_requests", []string{"message", "note"}, e.all(), e.label, where, args)
}

func eraseWebhookBodies(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	n, err := replaceIn(ctx, tx, "webhook_events", []string{"body"}, e.strong, e.label, "organisation_id = ?", []any{e.org.ID})
	if err != nil {
		return n, err
	}
	m, err := replaceIn(ctx, tx, "webhook_deliveries", []string{"response_snippet", "last_error"}, e.strong, e.label,
		"endpoint_id IN (?)", []any{tx.NewSelect().Table("webhook_endpoints").Column("id").Where("organisation_id = ?", e.org.ID)})
	return n + m, err
}

// eraseAuditDetails replaces the person's data in the details of the
// audit log: strong needles in every entry of the organisation, weak
// ones in the entries about the person or their registrations. The
// database allows this one change, marked by erased_at.
func eraseAuditDetails(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	mark := func(q *bun.UpdateQuery) *bun.UpdateQuery { return q.Set("erased_at = ?", e.now) }
	cols := []string{"before_json", "after_json"}
	n, err := replaceIn(ctx, tx, "audit_log", cols, e.strong, e.label, "organisation_id = ?", []any{e.org.ID}, mark)
	if err != nil {
		return n, err
	}
	about := "organisation_id = ? AND ((target_type = 'person' AND target_id = ?)"
	args := []any{e.org.ID, strconv.FormatInt(e.person.ID, 10)}
	if len(e.scope.instanceIDs) > 0 {
		about += " OR instance_id IN (?)"
		args = append(args, bun.List(e.scope.instanceIDs))
	}
	about += ")"
	m, err := replaceIn(ctx, tx, "audit_log", cols, e.weak, e.label, about, args, mark)
	return n + m, err
}

func eraseLinks(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	res, err := tx.NewDelete().Model((*engine.UserPerson)(nil)).Where("person_id = ? AND organisation_id = ?", e.person.ID, e.org.ID).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// eraseHouseholdSessions ends the database sessions of a household with
// no person left and revokes its invitations. Sessions in Redis or in an
// instance's memory cache end at their idle timeout; they lead to no
// person any more.
func eraseHouseholdSessions(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.gone) == 0 {
		return 0, nil
	}
	res, err := tx.NewDelete().Table("sessions").Where("user_key IN (?)", bun.List(e.gone)).Exec(ctx)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	res, err = tx.NewUpdate().Model((*invitation.Invitation)(nil)).Set("revoked_at = ?", e.now).
		Where("organisation_id = ? AND user_key IN (?) AND revoked_at IS NULL", e.org.ID, bun.List(e.gone)).Exec(ctx)
	if err != nil {
		return n, err
	}
	m, _ := res.RowsAffected()
	return n + m, nil
}

// erasePersonRow replaces the person's own row: the names by the erased
// label, no e-mail, no external id (a later import of the same person is
// a new record), and a birth date that keeps only what the season
// figures need (coarseBirthDate). Memberships, orders and registrations
// keep pointing at the row; they hold no personal data of their own.
func erasePersonRow(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	var starts []time.Time
	if err := tx.NewSelect().Model((*engine.MembershipPeriod)(nil)).Column("start_date").Where("organisation_id = ?", e.org.ID).Scan(ctx, &starts); err != nil {
		return 0, err
	}
	res, err := tx.NewUpdate().Model((*engine.Person)(nil)).Set("first_name = ?", "erased").Set("last_name = ?", "person "+strconv.FormatInt(e.person.ID, 10)).
		Set("email = ''").Set("external_id = NULL").Set("date_of_birth = ?", coarseBirthDate(e.person.DateOfBirth, starts)).
		Set("erased_at = ?", e.now).Where("id = ?", e.person.ID).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// coarseBirthDate is a birth date in the same year as born that gives the
// same age as born on every one of the dates (the club's period starts):
// the first day after the last of their days of the year before born's,
// or 1 January. The season figures by age stay as they were, and the day
// of birth is gone.
func coarseBirthDate(born time.Time, starts []time.Time) time.Time {
	md := func(t time.Time) int { return int(t.Month())*100 + t.Day() }
	best := 0
	for _, s := range starts {
		if m := md(s); m < md(born) && m > best {
			best = m
		}
	}
	if best == 0 {
		return time.Date(born.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(born.Year(), time.Month(best/100), best%100+1, 0, 0, 0, 0, time.UTC)
}

// eraseConsents deletes an erased person's consent records; the texts
// hold no personal data and stay.
func eraseConsents(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	res, err := tx.NewDelete().Model((*engine.ConsentRecord)(nil)).Where("person_id = ? AND organisation_id = ?", e.person.ID, e.org.ID).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
