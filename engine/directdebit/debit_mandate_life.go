package directdebit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
	"portal/engine/jobs"
	"portal/engine/payment"
	"portal/engine/registration"
)

// The life of a SEPA mandate after it is given (issue 29): a household's
// mandate that holds is offered again on the pay link of its next
// direct-debit order, where the member keeps it, changes its account (an
// amendment, stated once in the next collection file) or revokes it;
// staff may revoke one; a mandate unused for 36 months expires (the
// rulebook's limit). Every change is one transaction, conditional on the
// state it changes, so that a form sent twice changes nothing more.

// mandateAccount is the account a member gives for a mandate, checked.
type mandateAccount struct {
	Holder, IBAN, BIC string
}

// checkMandateAccount checks the holder, IBAN and BIC a member typed, as
// the mandate form and the account change both take them: each problem
// is named by its field. The BIC is optional within the EEA and required
// for an account in a SEPA country outside it (banking.NeedsBIC), since a
// collection file cannot carry such a debit without it.
func checkMandateAccount(in MandateInput) (mandateAccount, []engine.FieldError) {
	var fields []engine.FieldError
	bad := func(field, msg string) { fields = append(fields, engine.FieldError{Field: field, Message: msg}) }
	holder := strings.TrimSpace(in.Holder)
	switch {
	case holder == "":
		bad("holder", "is required: the account holder's name")
	case len([]rune(holder)) > 70 || !registration.PlainText(holder):
		bad("holder", "must be a name of at most 70 characters")
	}
	iban, ierr := banking.ParseIBAN(in.IBAN)
	switch {
	case ierr != nil:
		bad("iban", ierr.Error())
	case !banking.IsSEPACountry(iban.Country()):
		bad("iban", "must be an account in a SEPA country")
	}
	bic := strings.TrimSpace(in.BIC)
	switch {
	case bic != "":
		if b, err := banking.ParseBIC(bic); err != nil {
			bad("bic", err.Error())
		} else {
			bic = b
		}
	case ierr == nil && banking.IsSEPACountry(iban.Country()) && banking.NeedsBIC(iban.Country()):
		bad("bic", fmt.Sprintf("is required for an account in %s (outside the EEA): your bank's BIC, 8 or 11 letters and digits", iban.Country()))
	}
	return mandateAccount{Holder: holder, IBAN: string(iban), BIC: bic}, fields
}

// heldMandate is the household's newest mandate with orgID that holds,
// nil when it has none.
func heldMandate(ctx context.Context, db bun.IDB, orgID int64, userKey string) (*DebitMandate, error) {
	var ms []DebitMandate
	if err := db.NewSelect().Model(&ms).Where("organisation_id = ? AND user_key = ? AND revoked_at IS NULL", orgID, userKey).
		OrderExpr("signed_at DESC, id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load the household's mandate: %w", err)
	}
	if len(ms) == 0 {
		return nil, nil //nolint:nilnil // the household holds none
	}
	return &ms[0], nil
}

// checkNoHeldMandate refuses a new mandate for a household that holds one:
// it keeps, changes or revokes that one first.
func checkNoHeldMandate(ctx context.Context, tx bun.IDB, order *engine.Order) error {
	held, err := heldMandate(ctx, tx, order.OrganisationID, order.UserKey)
	if err != nil {
		return err
	}
	if held != nil {
		return engine.Errorf(engine.CodeConflict, "a mandate that holds was given already: keep it, change its account or revoke it")
	}
	return nil
}

// endedMandates selects the ids of the mandates that no longer hold: an
// order under one of them takes another.
func endedMandates(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().Model((*DebitMandate)(nil)).Column("id").Where("revoked_at IS NOT NULL")
}

// householdMandate loads and locks mandate id of order's household for a
// change in tx (SQLite's one connection serialises the rest); a mandate
// of another household or club is not found.
func householdMandate(ctx context.Context, tx bun.Tx, order *engine.Order, id int64) (*DebitMandate, error) {
	m := new(DebitMandate)
	q := store.ForUpdate(tx.NewSelect().Model(m).Where("id = ? AND organisation_id = ? AND user_key = ?", id, order.OrganisationID, order.UserKey))
	if err := q.Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "mandate")
	}
	return m, nil
}

// directDebitOrder is the unpaid order of a pay link, which must be paid
// by direct debit for a mandate to be kept or changed for it.
func (s *Service) directDebitOrder(ctx context.Context, orderReference string) (*engine.Order, error) {
	order, err := payment.Of(s.Service).UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	if order.PaymentMethod != payment.DirectDebitProvider {
		return nil, engine.Errorf(engine.CodeConflict, "this registration is not paid by direct debit")
	}
	return order, nil
}

// collectUnder has order collected under mandate m, due on the club's
// next collection day from now, and queues the mandate e-mail, which is
// also the debit's pre-notification. An order collected under m already
// keeps its due date and is not told again: changed says whether
// anything changed.
func collectUnder(ctx context.Context, tx bun.Tx, event string, order *engine.Order, m *DebitMandate, now time.Time) (due time.Time, changed bool, err error) {
	var cur engine.Order
	if err := tx.NewSelect().Model(&cur).Column("id", "status", "debit_mandate_id", "debit_due_on").Where("id = ?", order.ID).Scan(ctx); err != nil {
		return due, false, engine.NotFoundOr(err, "order")
	}
	if cur.Status != engine.OrderUnpaid {
		return due, false, engine.Errorf(engine.CodeConflict, "this registration changed meanwhile; load the page again")
	}
	if cur.DebitMandateID != nil && *cur.DebitMandateID == m.ID && cur.DebitDueOn != nil {
		return *cur.DebitDueOn, false, nil
	}
	if due, err = payment.DebitDueFor(ctx, tx, order.OrganisationID, now); err != nil {
		return due, false, err
	}
	res, err := clearDebitProblem(tx.NewUpdate().Model((*engine.Order)(nil))).Set("debit_mandate_id = ?", m.ID).Set("debit_due_on = ?", due).
		Where("id = ? AND status = ?", order.ID, engine.OrderUnpaid).Exec(ctx)
	if err != nil {
		return due, false, fmt.Errorf("link mandate: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return due, false, engine.Errorf(engine.CodeConflict, "this registration changed meanwhile; load the page again")
	}
	order.DebitMandateID, order.DebitDueOn = &m.ID, &due
	return due, true, queueMandateNotice(ctx, tx, event, m, order.ID, due, now)
}

// KeepMandate collects the unpaid direct-debit order of a pay link under
// the household's mandate id that holds (its next season, a renewal, or
// the same order after a returned debit): the order is due on the club's
// next collection day and the member gets the mandate e-mail. Keeping it
// again changes nothing.
func (s *Service) KeepMandate(ctx context.Context, orderReference string, id int64) (_ *DebitMandate, err error) {
	order, err := s.directDebitOrder(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	var m *DebitMandate
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if m, err = householdMandate(ctx, tx, order, id); err != nil {
			return err
		}
		if m.RevokedAt != nil {
			return engine.Errorf(engine.CodeConflict, "this mandate no longer holds; give a new one")
		}
		_, _, err := collectUnder(ctx, tx, MandateKept, order, m, s.Clock())
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// AmendMandate changes the account of the household's mandate id that
// holds (holder, IBAN, optional BIC, checked as GiveMandate checks them,
// with the member's consent again) and collects the pay link's order
// under it. The account before the change is kept in previous_iban and
// previous_bic for the next collection file to state; when an earlier
// change was not stated yet, the oldest account stays there, since that
// is the one the debtor's bank knows (and a change back to it leaves
// nothing to state). Every order already due under the mandate keeps its
// date and its member is told of the new account. The same change sent
// twice changes nothing more.
func (s *Service) AmendMandate(ctx context.Context, orderReference string, id int64, in MandateInput) (_ *DebitMandate, err error) {
	order, err := s.directDebitOrder(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	acct, fields := checkMandateAccount(in)
	if !in.Consent {
		fields = append(fields, engine.FieldError{Field: "consent", Message: "the change must be agreed to explicitly"})
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "The account cannot be changed as entered.", Fields: fields}
	}
	var m *DebitMandate
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if m, err = householdMandate(ctx, tx, order, id); err != nil {
			return err
		}
		if m.RevokedAt != nil {
			return engine.Errorf(engine.CodeConflict, "this mandate no longer holds; give a new one")
		}
		now, event := s.Clock(), MandateKept
		if acct != (mandateAccount{Holder: m.Holder, IBAN: m.IBAN, BIC: m.BIC}) {
			if m.PreviousIBAN == "" && (acct.IBAN != m.IBAN || acct.BIC != m.BIC) {
				m.PreviousIBAN, m.PreviousBIC = m.IBAN, m.BIC
			} else if acct.IBAN == m.PreviousIBAN && acct.BIC == m.PreviousBIC {
				m.PreviousIBAN, m.PreviousBIC = "", "" // back to the account the bank knows
			}
			m.Holder, m.IBAN, m.BIC, m.AmendedAt, event = acct.Holder, acct.IBAN, acct.BIC, &now, MandateAmended
			holder, ok, err := store.HouseholdPersonNamed(ctx, tx, m.OrganisationID, m.UserKey, m.Holder)
			if err != nil {
				return err
			}
			m.HolderPersonID = store.PersonRef(holder, ok)
			if _, err := tx.NewUpdate().Model(m).Column("holder", "holder_person_id", "iban", "bic", "previous_iban", "previous_bic", "amended_at").
				WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("amend mandate: %w", err)
			}
			// A debit a run left out for the old account is tried again.
			if _, err := clearDebitProblem(tx.NewUpdate().Model((*engine.Order)(nil))).
				Where("debit_mandate_id = ? AND status = ? AND debit_problem <> ''", m.ID, engine.OrderUnpaid).Exec(ctx); err != nil {
				return fmt.Errorf("amend mandate: %w", err)
			}
			// Every order already due under the mandate is collected from
			// the new account: each member is told (an order in a
			// collection run went to the bank with the old one).
			var due []engine.Order
			if err := tx.NewSelect().Model(&due).Column("id", "debit_due_on").
				Where("debit_mandate_id = ? AND status = ? AND debit_due_on IS NOT NULL", m.ID, engine.OrderUnpaid).
				Where(noLiveDebit, liveDebitStates).OrderExpr("id").Scan(ctx); err != nil {
				return fmt.Errorf("amend mandate: %w", err)
			}
			for _, o := range due {
				if err := queueMandateNotice(ctx, tx, MandateAmended, m, o.ID, *o.DebitDueOn, now); err != nil {
					return err
				}
			}
		}
		_, _, err := collectUnder(ctx, tx, event, order, m, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// noLiveDebit is the condition, on orders, of an order in no collection
// run and not collected (with liveDebitStates): only such an order's due
// date may change.
const noLiveDebit = "NOT EXISTS (SELECT 1 FROM debits AS live WHERE live.order_id = ?TableAlias.id AND live.status IN (?))"

var liveDebitStates = bun.List([]payment.DebitStatus{payment.DebitInRun, payment.DebitCollected})

// RevokeMandate is the member revoking the household's mandate id on the
// pay link of an order: it no longer holds, and no order of theirs that
// is not in a collection run yet is due under it; the member may give a
// new mandate or pay another way. Revoking it again changes nothing.
func (s *Service) RevokeMandate(ctx context.Context, orderReference string, id int64) (_ *DebitMandate, err error) {
	order, err := payment.Of(s.Service).UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	var m *DebitMandate
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if m, err = householdMandate(ctx, tx, order, id); err != nil {
			return err
		}
		_, err := endMandate(ctx, tx, m, MandateEndRevokedByMember, s.Clock())
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// StaffMandate is mandate id of orgID for staff; another club's is not
// found.
func (s *Service) StaffMandate(ctx context.Context, orgID, id int64) (_ *DebitMandate, err error) {
	m := new(DebitMandate)
	if err := s.DB().NewSelect().Model(m).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "mandate")
	}
	return m, nil
}

// StaffRevokeMandate is staff of orgID revoking mandate id (a member's
// request by letter or at the desk), audited as mandate.revoke: a
// mandate of another club is not found; one that no longer holds is left
// as it is.
func (s *Service) StaffRevokeMandate(ctx context.Context, actor engine.Actor, orgID, id int64) (_ *DebitMandate, err error) {
	m := new(DebitMandate)
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model(m).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "mandate")
		}
		ended, err := endMandate(ctx, tx, m, MandateEndRevokedByStaff, s.Clock())
		if err != nil || !ended {
			return err
		}
		var instances []int64
		if err := tx.NewSelect().Model((*engine.Order)(nil)).Column("process_instance_id").Where("debit_mandate_id = ?", id).
			OrderExpr("id DESC").Limit(1).Scan(ctx, &instances); err != nil {
			return fmt.Errorf("find the mandate's registration: %w", err)
		}
		entry := engine.AuditEntry{OrganisationID: orgID, Action: "mandate.revoke", TargetType: "mandate", TargetID: fmt.Sprint(id),
			Before: map[string]any{"reference": m.Reference, "revoked": false},
			After:  map[string]any{"reference": m.Reference, "revoked": true, "endReason": MandateEndRevokedByStaff}}
		if len(instances) > 0 {
			entry.InstanceID = &instances[0]
		}
		return s.Audit(ctx, tx, actor, entry)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// endMandate ends m for reason at now unless it ended already (ended
// false, nothing changed), and takes the due date off its unpaid orders
// that are not in a collection run: nothing is collected under it any
// more.
func endMandate(ctx context.Context, tx bun.IDB, m *DebitMandate, reason string, now time.Time) (ended bool, err error) {
	n, err := endMandates(ctx, tx, []int64{m.ID}, reason, now)
	if err != nil || n == 0 {
		return false, err
	}
	m.RevokedAt, m.EndReason = &now, reason
	return true, nil
}

// MandateExpiryMonths is how long a mandate holds without a collection
// (EPC SDD Core rulebook: 36 months after the last collection, or after
// the signature when nothing was ever collected).
const MandateExpiryMonths = 36

// ExpireMandates ends, as expired, every mandate (of the organisation ctx
// is scoped to, else of every one) whose last collection, or signature
// when none, lies more than MandateExpiryMonths before now. A mandate with
// a debit in a collection run not sent yet is left until the run is sent
// or cancelled. Each end is conditional on the mandate still holding, so
// a second run finds nothing; it returns how many it ended.
//
// The mandates end expireBatch at a time, each batch one transaction of
// two statements (the mandates, then their orders' due dates): a
// federation's first night ends ten thousand at once, and a commit per
// mandate made that 85 s (issue 42). A batch that fails ends none of its
// mandates; the next night's run finds them again.
func ExpireMandates(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	cutoff := now.UTC().AddDate(0, -MandateExpiryMonths, 0)
	var ids []int64
	err := engine.ScopeOrg(ctx, db.NewSelect().Model((*DebitMandate)(nil)), "organisation_id").Column("id").
		Where("revoked_at IS NULL AND COALESCE(last_collected_at, signed_at) < ?", cutoff).
		Where("NOT EXISTS (SELECT 1 FROM debits AS d WHERE d.mandate_id = ?TableAlias.id AND d.status = ?)", payment.DebitInRun).
		OrderExpr("id").Scan(ctx, &ids)
	if err != nil {
		return 0, fmt.Errorf("find expired mandates: %w", err)
	}
	n := 0
	for batch := range slices.Chunk(ids, expireBatch) {
		err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			ended, err := endMandates(ctx, tx, batch, MandateEndExpired, now.UTC())
			n += ended
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// expireBatch is how many mandates one transaction of ExpireMandates ends.
const expireBatch = 500

// endMandates is endMandate for the mandates ids at once, in two
// statements: each still holding ends, and their orders not in a
// collection run are no longer due under them. It returns how many ended.
func endMandates(ctx context.Context, tx bun.IDB, ids []int64, reason string, now time.Time) (int, error) {
	var ended []int64
	if err := tx.NewUpdate().Model((*DebitMandate)(nil)).Set("revoked_at = ?", now).Set("end_reason = ?", reason).
		Where("id IN (?) AND revoked_at IS NULL", bun.List(ids)).Returning("id").Scan(ctx, &ended); err != nil {
		return 0, fmt.Errorf("end mandates: %w", err)
	}
	if len(ended) == 0 {
		return 0, nil
	}
	if _, err := tx.NewUpdate().Model((*engine.Order)(nil)).Set("debit_due_on = NULL").
		Where("debit_mandate_id IN (?) AND status = ? AND debit_due_on IS NOT NULL", bun.List(ended), engine.OrderUnpaid).
		Where(noLiveDebit, liveDebitStates).Exec(ctx); err != nil {
		return 0, fmt.Errorf("end mandates: %w", err)
	}
	return len(ended), nil
}

// ScheduleMandateExpiry runs ExpireMandates daily on r (one run per day in
// the cluster; `portal jobs run mandates.expire --org ID` for one club).
func (s *Service) ScheduleMandateExpiry(r *jobs.Runner, now func() time.Time, log *slog.Logger) {
	r.Every(engine.KindExpireMandates, 24*time.Hour)
	r.Handle(engine.KindExpireMandates, func(ctx context.Context, j *jobs.Job) error {
		ctx = engine.JobScope(ctx, j)
		n, err := ExpireMandates(ctx, s.DB(), now())
		if n > 0 {
			log.InfoContext(ctx, "expired unused mandates", "count", n)
		}
		return err
	})
}
