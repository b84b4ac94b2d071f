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
	"portal/engine/bankstatement"
	"portal/engine/directdebit"
	"portal/engine/internal/store"
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

// ErasedHouseholdLabel is the user key the records of a household carry
// once its last person is erased (the n-th household they were the last
// of, from 1): the same in every table, so that its orders, registrations
// and requests still go together, and no user key at all (a space is not
// allowed in one), so that nobody signs in as it.
func ErasedHouseholdLabel(personID int64, n int) string {
	l := "erased household " + strconv.FormatInt(personID, 10)
	if n > 1 {
		l += "." + strconv.Itoa(n)
	}
	return l
}

// erasure is one erasure under way.
type erasure struct {
	org    *engine.Organisation
	person engine.Person
	label  string
	now    time.Time
	// own are the person's own values, replaced as whole values in
	// records others share; names and all are texts replaced inside free
	// text (erasureTexts).
	own        ownValues
	names, all []string
	// credits and mandates are the ids of the transfers and mandates
	// that were theirs, erased by their steps, for the audit step.
	credits, mandates []string
	// scope is the person's export scope: their registrations, orders
	// and payment references.
	scope *exportScope
	// gone are the user keys no person is linked to any more: the whole
	// household is erased, with its sessions; keyLabels are the labels
	// that replace them in every record (ErasedHouseholdLabel).
	gone      []string
	keyLabels map[string]string
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
	{"householdKey", []string{"orders", "process_instances", "invitations", "debit_mandates", "data_requests", "outbox_messages"}, eraseHouseholdKey},
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
			// The person is still whole: named as staff know them, not by
			// the label they would get.
			return engine.Errorf(engine.CodeConflict, "%s cannot be erased yet: %s. An administrator can force the erasure.", personName(p, personID), reason)
		}
		rep = &ErasureReport{PersonID: personID, Label: ErasedLabel(personID), Forced: opt.Force && reason != "", Rows: map[string]int64{}}
		if rep.Forced {
			rep.Overrode = reason
		}
		e := &erasure{org: sc.org, person: p, label: rep.Label, now: s.Clock().UTC(), scope: sc}
		if e.own, err = personOwnValues(ctx, tx, p); err != nil {
			return err
		}
		if e.names, e.all, err = erasureTexts(ctx, tx, p, e.own); err != nil {
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
		e.keyLabels = map[string]string{}
		for i, k := range e.gone {
			e.keyLabels[k] = ErasedHouseholdLabel(personID, i+1)
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
	// On SQLite the replaced values' earlier page images are still in the
	// WAL: carry the overwritten pages (secure_delete) into the file and
	// empty the log. The erasure stands whether or not this succeeds.
	if err := engine.TruncateWAL(ctx, s.DB()); err != nil {
		s.Log.WarnContext(ctx, "erasure: the SQLite log was not emptied; it is at the next checkpoint", "err", err)
	}
	return rep, nil
}

// personName is how a refusal names a person who is not erased: their
// name, or "person {id}" for a record without one.
func personName(p engine.Person, id int64) string {
	if name := strings.TrimSpace(p.FirstName + " " + p.LastName); name != "" {
		return name
	}
	return fmt.Sprintf("Person %d", id)
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

// ownValues are a person's own values as whole values: the forms of their
// name, their address (when no other person of the organisation has it
// too), their birth date and the accounts of the mandates and transfers
// that were theirs. In a record others share, a value is replaced only
// when it is one of these as a whole: "Alex Morgan" is never changed for
// erasing Robin Morgan, as a search for "Morgan" would change it.
type ownValues struct {
	first, last string
	email       string
	born        string
	ibans       []string
}

// isName says whether v is the person's name, whatever its order and
// case (engine.SameName).
func (o *ownValues) isName(v string) bool { return store.SameName(v, o.first+" "+o.last) }

func compactIBAN(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}

// is says whether v as a whole is one of the person's values.
func (o *ownValues) is(v string) bool {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return false
	case o.isName(v), o.email != "" && strings.EqualFold(v, o.email), o.born != "" && v == o.born:
		return true
	}
	return len(v) >= 12 && slices.Contains(o.ibans, compactIBAN(v))
}

// addIBAN remembers an account of a record of theirs being erased.
func (o *ownValues) addIBAN(iban string) {
	if c := compactIBAN(iban); c != "" && !slices.Contains(o.ibans, c) {
		o.ibans = append(o.ibans, c)
	}
}

// replaceJSON replaces, in a JSON document, value by value, the
// person's own values (a string that is as a whole one of them) by their
// label, and the user key of a household that is gone, wherever the
// document names a household by its user key (a member "userKey", or one
// of "userKeys"), by the label the household's records get. It says
// whether it changed anything; a text that is not JSON is left as it is.
func (e *erasure) replaceJSON(doc string) (string, bool) {
	return rewriteJSON(doc, func(field, v string) (string, bool) {
		if e.own.is(v) {
			return e.label, true
		}
		if l, ok := e.keyLabels[v]; ok && (field == "userKey" || field == "userKeys") {
			return l, true
		}
		return v, false
	})
}

// rewriteJSON replaces, in a JSON document, every string value that f
// changes; f is told the name of the object member the value is (or is
// an element of). It says whether it changed anything; a text that is
// not JSON is left as it is.
func rewriteJSON(doc string, f func(field, v string) (string, bool)) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return doc, false
	}
	changed := false
	var walk func(field string, x any) any
	walk = func(field string, x any) any {
		switch t := x.(type) {
		case string:
			if out, ok := f(field, t); ok {
				changed = true
				return out
			}
		case []any:
			for i := range t {
				t[i] = walk(field, t[i])
			}
		case map[string]any:
			for k := range t {
				t[k] = walk(k, t[k])
			}
		}
		return x
	}
	v = walk("", v)
	if !changed {
		return doc, false
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return doc, false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

// personOwnValues reads the person's own values; the address is theirs
// alone when no other person of the organisation (not erased) has it.
func personOwnValues(ctx context.Context, db bun.IDB, p engine.Person) (ownValues, error) {
	o := ownValues{first: strings.TrimSpace(p.FirstName), last: strings.TrimSpace(p.LastName), born: p.DateOfBirth.Format(time.DateOnly)}
	if email := strings.TrimSpace(p.Email); email != "" {
		shared, err := db.NewSelect().Model((*engine.Person)(nil)).
			Where("organisation_id = ? AND id <> ? AND erased_at IS NULL", p.OrganisationID, p.ID).
			Where(engine.FoldSQL(db, "email")+" = ?", engine.FoldText(email)).Count(ctx)
		if err != nil {
			return o, fmt.Errorf("check address: %w", err)
		}
		if shared == 0 {
			o.email = email
		}
	}
	return o, nil
}

// erasureTexts are the texts to replace inside free text: names are the
// person's full name as people write it and their own address (for free
// text in records about them that others share: a staff note on a
// household's payment); all adds their birth date, free-text answers and
// those of their single names no other person of the organisation has
// (for the records that are theirs alone: "Morgan" in a note about Robin
// Morgan may well be Alex Morgan's). Longest first, so that "Anna
// Muster" goes before "Anna".
func erasureTexts(ctx context.Context, db bun.IDB, p engine.Person, own ownValues) (names, all []string, err error) {
	add := func(list *[]string, s string) {
		if s = strings.TrimSpace(s); len([]rune(s)) >= 2 && !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, list := range []*[]string{&names, &all} {
		add(list, p.FirstName+" "+p.LastName)
		add(list, p.LastName+", "+p.FirstName)
		add(list, p.LastName+" "+p.FirstName)
		if own.email != "" {
			add(list, own.email)
			add(list, strings.ToLower(own.email))
		}
	}
	add(&all, own.born)
	for _, name := range []string{p.FirstName, p.LastName} {
		shared, err := db.NewSelect().Model((*engine.Person)(nil)).Where("organisation_id = ? AND id <> ? AND erased_at IS NULL", p.OrganisationID, p.ID).
			WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
				return w.Where(engine.FoldSQL(db, "first_name")+" = ?", engine.FoldText(strings.TrimSpace(name))).
					WhereOr(engine.FoldSQL(db, "last_name")+" = ?", engine.FoldText(strings.TrimSpace(name)))
			}).Count(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("check names: %w", err)
		}
		if shared == 0 {
			add(&all, name)
		}
	}
	var answers []string
	if err := db.NewSelect().Model((*engine.ProcessData)(nil)).Column("data_value").Where("person_id = ? AND data_key = ?", p.ID, engine.DataAnswer).
		Scan(ctx, &answers); err != nil {
		return nil, nil, fmt.Errorf("load answers: %w", err)
	}
	for _, a := range answers {
		if len([]rune(a)) >= 4 { // a short answer ("yes", "12") says nothing of a person and is everywhere
			add(&all, a)
		}
	}
	byLength := func(list []string) {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	}
	byLength(names)
	byLength(all)
	return names, all, nil
}

// replaceAll replaces every needle in s.
func replaceAll(s string, needles []string, label string) string {
	for _, n := range needles {
		s = strings.ReplaceAll(s, n, label)
	}
	return s
}

// replaceIn replaces every needle in the columns of table's rows that
// where selects (SQL with its args), and counts the rows changed; extra
// adds to each update (erased_at of the audit log). Callers select only
// rows about the person: it is for free text (a note, a request's text)
// that can name no one by reference.
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

// replaceOwnValuesIn replaces the person's own values, as whole JSON
// values, in the JSON columns of table's rows that where selects (key is
// the table's id column); extra adds to each update. Only rows that
// mention the person's first name, address, birth date or an account of
// theirs are read.
func (e *erasure) replaceOwnValuesIn(ctx context.Context, tx bun.Tx, table, key string, columns []string, where string, args []any, extra ...func(*bun.UpdateQuery) *bun.UpdateQuery) (int64, error) {
	hints := []string{e.own.first, e.own.last, e.own.email, e.own.born}
	hints = append(hints, e.own.ibans...)
	hints = append(hints, e.gone...)
	var rows []map[string]any
	q := tx.NewSelect().Table(table).Column(key).Column(columns...).Where(where, args...).
		WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			for _, c := range columns {
				for _, h := range hints {
					if h != "" {
						w = w.WhereOr(engine.FoldSQL(tx, c)+" LIKE ?"+engine.LikeEscape, engine.ContainsPattern(engine.FoldText(h)))
					}
				}
			}
			return w
		})
	if err := q.Scan(ctx, &rows); err != nil {
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	var n int64
	for _, r := range rows {
		u := tx.NewUpdate().Table(table)
		changed := false
		for _, c := range columns {
			var text string
			switch v := r[c].(type) {
			case string:
				text = v
			case []byte:
				text = string(v)
			default:
				continue
			}
			if out, ok := e.replaceJSON(text); ok {
				u = u.Set("? = ?", bun.Ident(c), out)
				changed = true
			}
		}
		if !changed {
			continue
		}
		for _, x := range extra {
			u = x(u)
		}
		if _, err := u.Where("? = ?", bun.Ident(key), r[key]).Exec(ctx); err != nil {
			return n, fmt.Errorf("replace in %s: %w", table, err)
		}
		n++
	}
	return n, nil
}

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

// lineSeparator parts a line's label from the name of the person it is
// for ("Adult membership – Robin Morgan"), as pricing writes it.
const lineSeparator = " – "

// eraseOrderLines rewrites the order lines that are the person's (their
// person_id): the label stays, the name becomes the erased label. Another
// person's lines, on the same order, are not read.
func eraseOrderLines(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	var lines []engine.OrderLine
	if err := tx.NewSelect().Model(&lines).Where("person_id = ? AND order_id IN (?)", e.person.ID,
		tx.NewSelect().Model((*engine.Order)(nil)).Column("id").Where("organisation_id = ?", e.org.ID)).Scan(ctx); err != nil {
		return 0, err
	}
	var n int64
	for _, l := range lines {
		desc := replaceAll(l.Description, e.all, e.label)
		if i := strings.LastIndex(l.Description, lineSeparator); i >= 0 {
			desc = l.Description[:i] + lineSeparator + e.label
		}
		if desc == l.Description {
			continue
		}
		if _, err := tx.NewUpdate().Model((*engine.OrderLine)(nil)).Set("description = ?", desc).Where("id = ?", l.ID).Exec(ctx); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// erasePaymentNotes takes the person's full name out of the notes of the
// payments of orders they are on (free text that staff or a provider
// wrote, which can name no one by reference).
func erasePaymentNotes(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.references) == 0 {
		return 0, nil
	}
	n, err := replaceIn(ctx, tx, "payments", []string{"problem", "refund_note"}, e.names, e.label, "reference IN (?)", []any{bun.List(e.scope.references)})
	if err != nil {
		return n, err
	}
	m, err := replaceIn(ctx, tx, "payment_events", []string{"note"}, e.names, e.label, "reference IN (?)", []any{bun.List(e.scope.references)})
	return n + m, err
}

// eraseBankCredits erases the transfers for the person's orders that
// they paid: the payer's columns (name, account, remittance) are the
// payer's, and the payer is the person when the transfer's payer_person_id
// is theirs (recorded when it was assigned, never a name compared now). When their household is gone, the transfers for its orders
// lose their payer too (someone outside the club's persons paid, for
// this household only). Another payer's transfer keeps its payer and
// loses only the person's full name from its free text.
func eraseBankCredits(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.references) == 0 {
		return 0, nil
	}
	var credits []bankstatement.BankCredit
	if err := tx.NewSelect().Model(&credits).Where("payment_reference IN (?)", bun.List(e.scope.references)).Order("id").Scan(ctx); err != nil {
		return 0, err
	}
	var goneRefs []string
	if len(e.gone) > 0 {
		if err := tx.NewSelect().TableExpr("payments AS p").Column("p.reference").Join("JOIN orders AS o ON o.id = p.order_id").
			Where("p.reference IN (?) AND o.organisation_id = ? AND o.user_key IN (?)", bun.List(e.scope.references), e.org.ID, bun.List(e.gone)).
			Scan(ctx, &goneRefs); err != nil {
			return 0, err
		}
	}
	var n int64
	for _, c := range credits {
		u := tx.NewUpdate().Model((*bankstatement.BankCredit)(nil)).Where("id = ?", c.ID)
		if (c.PayerPersonID != nil && *c.PayerPersonID == e.person.ID) || slices.Contains(goneRefs, *c.PaymentReference) {
			e.own.addIBAN(c.DebtorIBAN)
			e.credits = append(e.credits, c.CreditID)
			u = u.Set("debtor_name = ?", e.label).Set("debtor_iban = ''").Set("remittance = ''").Set("note = ?", replaceAll(c.Note, e.all, e.label))
		} else {
			remittance, note := replaceAll(c.Remittance, e.names, e.label), replaceAll(c.Note, e.names, e.label)
			if remittance == c.Remittance && note == c.Note {
				continue
			}
			u = u.Set("remittance = ?", remittance).Set("note = ?", note)
		}
		if _, err := u.Exec(ctx); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// eraseMandates erases the direct-debit mandates the person holds (the
// holder's columns are the holder's: a mandate is theirs when its
// holder_person_id is theirs, recorded when it was given or changed) and, when their household is gone, every mandate of the
// household: the holder becomes the erased label, the account is blanked
// and the mandate revoked, so that nothing is ever collected under it
// again. Reference, creditor and signature time stay, as the orders
// collected under it do. Another holder's mandate, in the same
// household, is not changed.
func eraseMandates(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.scope.userKeys) == 0 {
		return 0, nil
	}
	var mandates []directdebit.DebitMandate
	if err := tx.NewSelect().Model(&mandates).Where("organisation_id = ? AND user_key IN (?)", e.org.ID, bun.List(e.scope.userKeys)).
		Order("id").Scan(ctx); err != nil {
		return 0, err
	}
	var n int64
	for _, m := range mandates {
		if (m.HolderPersonID == nil || *m.HolderPersonID != e.person.ID) && !slices.Contains(e.gone, m.UserKey) {
			continue
		}
		e.own.addIBAN(m.IBAN)
		e.own.addIBAN(m.PreviousIBAN)
		e.mandates = append(e.mandates, strconv.FormatInt(m.ID, 10))
		if _, err := tx.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("holder = ?", e.label).
			Set("iban = '', bic = '', previous_iban = '', previous_bic = ''").Set("text = ?", replaceAll(m.Text, e.all, e.label)).
			Set("revoked_at = COALESCE(revoked_at, ?)", e.now).Where("id = ?", m.ID).Exec(ctx); err != nil {
			return n, fmt.Errorf("erase mandate %d: %w", m.ID, err)
		}
		n++
	}
	return n, nil
}

// eraseMessages takes the person's address out of every message of the
// organisation to it, whatever the message is about (a data request's
// answer names only the request), when the address is theirs alone (a
// child's messages to a parent's address keep it: it is the parent's
// too), and their own values out of the payloads of the messages about
// them, value by value; a message not sent yet that has no address left
// is marked sent so that it never goes.
func eraseMessages(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	msgs, err := scopeMessages(ctx, tx, e.scope)
	if err != nil {
		return 0, err
	}
	if e.own.email != "" {
		to, err := messagesTo(ctx, tx, e.org.ID, e.own.email)
		if err != nil {
			return 0, err
		}
		for _, m := range to {
			if !slices.ContainsFunc(msgs, func(x engine.OutboxMessage) bool { return x.ID == m.ID }) {
				msgs = append(msgs, m)
			}
		}
	}
	var n int64
	for _, m := range msgs {
		all := recipients(m.Recipient)
		keep := slices.DeleteFunc(slices.Clone(all), func(a string) bool { return e.own.email != "" && strings.EqualFold(a, e.own.email) })
		recipient := strings.Join(keep, ", ")
		if len(keep) == 0 {
			recipient = e.label
		}
		if len(keep) == len(all) {
			recipient = m.Recipient // as it was written
		}
		payload, ok := e.replaceJSON(m.Payload)
		if !ok {
			payload = replaceAll(m.Payload, e.names, e.label)
		}
		if recipient == m.Recipient && payload == m.Payload {
			continue
		}
		q := tx.NewUpdate().Model((*engine.OutboxMessage)(nil)).Set("recipient = ?", recipient).Set("payload = ?", payload).Where("id = ?", m.ID)
		if m.SentAt == nil && len(keep) == 0 {
			q = q.Set("sent_at = ?", e.now)
		}
		if _, err := q.Exec(ctx); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// eraseJobErrors takes the person's address, when theirs alone, out of
// the jobs' errors (a bounce names it).
func eraseJobErrors(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if e.own.email == "" {
		return 0, nil
	}
	return replaceIn(ctx, tx, "jobs", []string{"last_error"}, []string{e.own.email, strings.ToLower(e.own.email)}, e.label, "1 = 1", nil)
}

// eraseOptOuts deletes the unsubscribes of the person's address, when
// theirs alone (another person's unsubscribe stays).
func eraseOptOuts(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if e.own.email == "" {
		return 0, nil
	}
	res, err := tx.NewDelete().Model((*message.StoredOptOut)(nil)).Where("organisation_id = ? AND address = ?", e.org.ID, strings.ToLower(e.own.email)).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// eraseRequests erases the text of the requests about the person or
// written by them (what was written about them, and what they typed,
// goes with them) and of every request of a household that is gone; the
// household's other requests lose the person's full name.
func eraseRequests(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	res, err := tx.NewUpdate().Model((*DataRequest)(nil)).Set("message = ?", e.label).
		WhereGroup(" AND ", func(w *bun.UpdateQuery) *bun.UpdateQuery {
			w = w.Where("person_id = ?", e.person.ID).WhereOr("writer_person_id = ?", e.person.ID)
			if len(e.gone) > 0 {
				w = w.WhereOr("user_key IN (?)", bun.List(e.gone))
			}
			return w
		}).Where("organisation_id = ? AND message <> ?", e.org.ID, e.label).Exec(ctx)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	m, err := replaceIn(ctx, tx, "data_requests", []string{"note"}, e.all, e.label, "organisation_id = ? AND (person_id = ? OR writer_person_id = ?)",
		[]any{e.org.ID, e.person.ID, e.person.ID})
	if err != nil || len(e.scope.userKeys) == 0 {
		return n + m, err
	}
	k, err := replaceIn(ctx, tx, "data_requests", []string{"message", "note"}, e.names, e.label,
		"organisation_id = ? AND user_key IN (?) AND (person_id IS NULL OR person_id <> ?)", []any{e.org.ID, bun.List(e.scope.userKeys), e.person.ID})
	return n + m + k, err
}

// eraseWebhookBodies replaces the person's own values, value by value, in
// the organisation's webhook events, and their full name in the
// receivers' responses.
func eraseWebhookBodies(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	n, err := e.replaceOwnValuesIn(ctx, tx, "webhook_events", "id", []string{"body"}, "organisation_id = ?", []any{e.org.ID})
	if err != nil {
		return n, err
	}
	m, err := replaceIn(ctx, tx, "webhook_deliveries", []string{"response_snippet", "last_error"}, e.names, e.label,
		"endpoint_id IN (?)", []any{tx.NewSelect().Table("webhook_endpoints").Column("id").Where("organisation_id = ?", e.org.ID)})
	return n + m, err
}

// eraseAuditDetails replaces the person's data in the details of the
// audit entries about them, and only there: in the entries about the
// person every text of theirs; in the entries about what they share with
// others (their registrations, the transfers and mandates erased above)
// their own values as whole values and their full name in free text. An
// entry about anything else (the club's settings, another person) is not
// changed. The database allows this one change, marked by erased_at.
func eraseAuditDetails(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	mark := func(q *bun.UpdateQuery) *bun.UpdateQuery { return q.Set("erased_at = ?", e.now) }
	cols := []string{"before_json", "after_json"}
	n, err := replaceIn(ctx, tx, "audit_log", cols, e.all, e.label, "organisation_id = ? AND target_type = 'person' AND target_id = ?",
		[]any{e.org.ID, strconv.FormatInt(e.person.ID, 10)}, mark)
	if err != nil {
		return n, err
	}
	about := "organisation_id = ? AND (1 = 0"
	args := []any{e.org.ID}
	if len(e.scope.instanceIDs) > 0 {
		about += " OR instance_id IN (?)"
		args = append(args, bun.List(e.scope.instanceIDs))
	}
	if len(e.credits) > 0 {
		about += " OR (target_type = 'bank_credit' AND target_id IN (?))"
		args = append(args, bun.List(e.credits))
	}
	if len(e.mandates) > 0 {
		about += " OR (target_type = 'mandate' AND target_id IN (?))"
		args = append(args, bun.List(e.mandates))
	}
	about += ")"
	m, err := e.replaceOwnValuesIn(ctx, tx, "audit_log", "id", cols, about, args, mark)
	if err != nil {
		return n + m, err
	}
	k, err := replaceIn(ctx, tx, "audit_log", cols, e.names, e.label, about, args, mark)
	return n + m + k, err
}

func eraseLinks(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	res, err := tx.NewDelete().Model((*engine.UserPerson)(nil)).Where("person_id = ? AND organisation_id = ?", e.person.ID, e.org.ID).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// eraseHouseholdSessions ends the database sessions of a household with
// no person left, those started in this organisation (another club's
// household of the same user key keeps its sessions), and revokes its
// invitations. Sessions in Redis or in an instance's memory cache end at
// their idle timeout; they lead to no person any more.
func eraseHouseholdSessions(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	if len(e.gone) == 0 {
		return 0, nil
	}
	res, err := tx.NewDelete().Table("sessions").Where("organisation_id = ? AND user_key IN (?)", e.org.ID, bun.List(e.gone)).Exec(ctx)
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

// eraseHouseholdKey replaces, once a household has no person left, its
// user key by its label (ErasedHouseholdLabel) in every record of the
// organisation that names the household: orders, registrations,
// invitations, mandates, requests, and the messages whose payload names
// it. The access log (eraseAccessLog), the webhook events and the audit
// entries about the person (value by value) take the same label; the
// sessions and links are gone. A later export of the erased person finds
// the label, never the key.
func eraseHouseholdKey(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	var n int64
	for _, k := range e.gone {
		label := e.keyLabels[k]
		for _, table := range []string{"orders", "process_instances", "invitations", "debit_mandates", "data_requests"} {
			res, err := tx.NewUpdate().Table(table).Set("user_key = ?", label).Where("organisation_id = ? AND user_key = ?", e.org.ID, k).Exec(ctx)
			if err != nil {
				return n, fmt.Errorf("%s: %w", table, err)
			}
			m, _ := res.RowsAffected()
			n += m
		}
		var msgs []engine.OutboxMessage
		if err := tx.NewSelect().Model(&msgs).Where("payload LIKE ?"+engine.LikeEscape, engine.ContainsPattern(strconv.Quote(k))).OrderExpr("id").Scan(ctx); err != nil {
			return n, err
		}
		for _, m := range msgs {
			var refs messageRefs
			if json.Unmarshal([]byte(m.Payload), &refs) != nil {
				continue
			}
			if org, err := refs.organisation(ctx, tx); err != nil || org != e.org.ID {
				if err != nil {
					return n, err
				}
				continue
			}
			payload, ok := e.replaceJSON(m.Payload)
			if !ok {
				continue
			}
			if _, err := tx.NewUpdate().Model((*engine.OutboxMessage)(nil)).Set("payload = ?", payload).Where("id = ?", m.ID).Exec(ctx); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
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
