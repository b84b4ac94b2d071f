package bankstatement

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// Unmatched bank credits: money a statement import saw arrive but could not
// tell the payment of. The import keeps each one (once per organisation
// and account, by banking.Credit.Key)
// for a treasurer, who assigns it to a registration, which captures it as
// the import would have, or marks it returned to the payer or ignored.

// CreditState is where a stored bank credit stands.
type CreditState string

// The states of a stored bank credit: unmatched until a treasurer resolves it.
const (
	CreditUnmatched CreditState = "unmatched"
	CreditAssigned  CreditState = "assigned"
	CreditReturned  CreditState = "returned"
	CreditIgnored   CreditState = "ignored"
)

// CreditStates are the states in the order lists show them.
var CreditStates = []CreditState{CreditUnmatched, CreditAssigned, CreditReturned, CreditIgnored}

// BankCredit is one stored credit a statement import could not match.
type BankCredit struct {
	bun.BaseModel `bun:"table:bank_credits"`
	ID            int64 `bun:"id,pk,autoincrement"`
	// OrganisationID is the organisation whose own account took the
	// credit; nil for the environment's shared account (PORTAL_BANK_IBAN).
	OrganisationID *int64 `bun:"organisation_id"`
	Account        string `bun:"account,notnull"`
	// CreditID is the bank's id of the credit (banking.Credit.ID), as
	// people read it on the statement; not unique.
	CreditID string `bun:"credit_id,notnull"`
	// CreditKey identifies the credit on Account (banking.Credit.Key);
	// "legacy:" and the bank's id for credits kept before keys.
	CreditKey   string     `bun:"credit_key,notnull"`
	StatementID string     `bun:"statement_id,notnull"`
	AmountMinor int64      `bun:"amount_minor,notnull"`
	Currency    string     `bun:"currency,notnull"`
	BookedOn    *time.Time `bun:"booked_on"`
	DebtorName  string     `bun:"debtor_name,notnull"`
	DebtorIBAN  string     `bun:"debtor_iban,notnull"`
	// Reference is the structured creditor reference(s); Remittance the
	// free text the payer wrote.
	Reference  string `bun:"reference,notnull"`
	Remittance string `bun:"remittance,notnull"`
	// Reason is why the import could not match it.
	Reason string      `bun:"reason,notnull"`
	State  CreditState `bun:"state,notnull"`
	// PaymentReference is the payment attempt an assigned credit was
	// captured for.
	PaymentReference *string `bun:"payment_reference"`
	// PayerPersonID is the person of the paid order's household whose
	// name the payer's is, recorded when the credit is assigned
	// (engine.HouseholdPersonNamed); nil for a payer outside the
	// household. The payer's columns are theirs: their erasure takes them.
	PayerPersonID   *int64     `bun:"payer_person_id"`
	Note            string     `bun:"note,notnull"`
	ResolvedBy      string     `bun:"resolved_by,notnull"`
	ResolvedStaffID *int64     `bun:"resolved_staff_id"`
	ResolvedAt      *time.Time `bun:"resolved_at"`
	CreatedAt       time.Time  `bun:"created_at,notnull"`
	// RegistrationID is the registration an assigned credit paid (read
	// by BankCredits, not stored).
	RegistrationID int64 `bun:"-"`
}

// storedCredit is a credit of a statement as the import keeps it.
func (s *Service) storedCredit(st banking.Statement, opt engine.StatementOptions, l StatementLine) *BankCredit {
	c := l.Credit
	bc := &BankCredit{Account: string(opt.Account), CreditID: c.ID, CreditKey: creditIdentity(c), StatementID: st.MessageID, AmountMinor: c.AmountMinor,
		Currency: strings.ToUpper(c.Currency), DebtorName: c.DebtorName, DebtorIBAN: c.DebtorIBAN,
		Reference: strings.Join(c.References, " "), Remittance: c.Unstructured, Reason: l.Reason, State: CreditUnmatched,
		CreatedAt: s.Clock()}
	if opt.Organisation != 0 {
		org := opt.Organisation
		bc.OrganisationID = &org
	}
	booked := c.BookingDate
	if booked.IsZero() {
		booked = c.ValueDate
	}
	if !booked.IsZero() {
		bc.BookedOn = &booked
	}
	return bc
}

// keepUnmatchedCredit stores a credit the import could not capture, once
// per organisation, account and key (a second import of the same statement
// finds it and skips it), with its audit entry when it is an
// organisation's. stored is false when it was kept before.
func (s *Service) keepUnmatchedCredit(ctx context.Context, bc *BankCredit, actor engine.Actor) (stored bool, err error) {
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewInsert().Model(bc).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("keep unmatched credit: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		stored = true
		if bc.OrganisationID == nil {
			return nil // the shared account's: no organisation's log to write to
		}
		return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: *bc.OrganisationID, Action: "credit.unmatched",
			TargetType: "bank_credit", TargetID: bc.CreditID,
			After: map[string]any{"amount": engine.FormatMoney(bc.AmountMinor, bc.Currency), "from": bc.DebtorName, "reason": bc.Reason}})
	})
	return stored, err
}

// keptLine is an unmatched credit of an import to keep, and the line of
// the import's report that says whether it was.
type keptLine struct {
	line   *StatementLine
	credit *BankCredit
}

// keptBatch is how many unmatched credits are kept in one transaction.
const keptBatch = 500

// keepUnmatchedCredits keeps an import's unmatched credits as
// keepUnmatchedCredit keeps each (once per organisation, account and key,
// with its audit entry), a batch of them per transaction and statement
// instead of a transaction per credit: a statement of thousands of credits
// for other accounts' members would otherwise take a commit each. A batch
// that fails is kept credit by credit, so that one bad credit fails alone
// (its line's Err), as before.
func (s *Service) keepUnmatchedCredits(ctx context.Context, lines []keptLine, actor engine.Actor) {
	for from := 0; from < len(lines); from += keptBatch {
		batch := lines[from:min(from+keptBatch, len(lines))]
		var stored map[string]bool
		err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
			credits := make([]BankCredit, len(batch))
			for i, l := range batch {
				credits[i] = *l.credit
			}
			var keys []string
			if err := tx.NewInsert().Model(&credits).On("CONFLICT DO NOTHING").Returning("credit_key").Scan(ctx, &keys); err != nil {
				return fmt.Errorf("keep unmatched credits: %w", err)
			}
			stored = make(map[string]bool, len(keys))
			for _, k := range keys {
				stored[k] = true
			}
			var entries []engine.AuditEntry
			audited := make(map[string]bool, len(keys))
			for _, l := range batch {
				bc := l.credit
				if bc.OrganisationID == nil || !stored[bc.CreditKey] || audited[bc.CreditKey] {
					continue // the shared account's have no organisation's log
				}
				audited[bc.CreditKey] = true
				entries = append(entries, engine.AuditEntry{OrganisationID: *bc.OrganisationID, Action: "credit.unmatched",
					TargetType: "bank_credit", TargetID: bc.CreditID,
					After: map[string]any{"amount": engine.FormatMoney(bc.AmountMinor, bc.Currency), "from": bc.DebtorName, "reason": bc.Reason}})
			}
			return s.AppendAudits(ctx, tx, actor, entries)
		})
		if err != nil {
			s.Log.WarnContext(ctx, "keeping a batch of unmatched credits failed; keeping them one by one", "err", err)
			for _, l := range batch {
				if l.line.Kept, l.line.Err = s.keepUnmatchedCredit(ctx, l.credit, actor); l.line.Err != nil {
					s.Log.ErrorContext(ctx, "unmatched statement credit could not be kept", "credit", l.line.Credit.ID, "err", l.line.Err)
				}
			}
			continue
		}
		// A key listed twice in the batch is stored once: the first line says so.
		for _, l := range batch {
			l.line.Kept = stored[l.credit.CreditKey]
			delete(stored, l.credit.CreditKey)
		}
	}
}

// creditIdentity is the key a credit is recorded by on its account: its
// Key, or its bank id for a credit not read from a file.
func creditIdentity(c banking.Credit) string {
	if c.Key != "" {
		return c.Key
	}
	return "id:" + c.ID
}

// CreditEventID is the payment event id of a bank credit's capture:
// scoped by the organisation (0: the shared account) and the account, so
// that no club's credit, nor a capture's id given by hand ("capture:…"),
// can stand for another's.
func CreditEventID(orgID int64, account, key string) string {
	return fmt.Sprintf("bank:%d:%s:%s", orgID, compactAccount(account), key)
}

func compactAccount(s string) string { return strings.ToUpper(strings.Join(strings.Fields(s), "")) }

// keptCredits are the keys among credits kept as unmatched credits of the
// organisation (0: the shared account) on account. A credit kept before
// keys existed ("legacy:" and the bank's id) counts for the credit with
// that bank id and amount.
func keptCredits(ctx context.Context, db bun.IDB, orgID int64, account string, credits []banking.Credit) (map[string]bool, error) {
	keys := make([]string, 0, 2*len(credits))
	previous := map[string]string{} // a key before transaction keys, to the credit's key now
	for _, c := range credits {
		keys = append(keys, creditIdentity(c), "legacy:"+c.ID)
		if c.PreviousKey != "" {
			keys = append(keys, c.PreviousKey)
			previous[c.PreviousKey] = creditIdentity(c)
		}
	}
	var kept []BankCredit
	q := db.NewSelect().Model(&kept).Column("credit_key", "credit_id", "amount_minor", "currency").
		Where("credit_key IN (?)", bun.List(keys)).Where("account = ?", account)
	if err := creditsOf(q, orgID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load kept credits: %w", err)
	}
	out := make(map[string]bool, len(kept))
	legacy := make(map[string]bool)
	for _, k := range kept {
		if strings.HasPrefix(k.CreditKey, "legacy:") {
			legacy[k.CreditID+" "+engine.FormatMoney(k.AmountMinor, k.Currency)] = true
			continue
		}
		if now, ok := previous[k.CreditKey]; ok {
			out[now] = true
			continue
		}
		out[k.CreditKey] = true
	}
	for _, c := range credits {
		if legacy[c.ID+" "+engine.FormatMoney(c.AmountMinor, strings.ToUpper(c.Currency))] {
			out[creditIdentity(c)] = true
		}
	}
	return out, nil
}

// creditsOf narrows a select of bank credits to one organisation's (0: the
// shared account's).
func creditsOf(q *bun.SelectQuery, orgID int64) *bun.SelectQuery {
	if orgID == 0 {
		return q.Where("organisation_id IS NULL")
	}
	return q.Where("organisation_id = ?", orgID)
}

// CreditQuery says which stored credits BankCredits lists.
type CreditQuery struct {
	// OrganisationID: that organisation's credits; 0 the shared account's.
	OrganisationID int64
	// Everyone lists every organisation's and the shared account's (the
	// command line); OrganisationID is then ignored.
	Everyone bool
	// States narrows to these states; none: every state.
	States []CreditState
	// Limit: at most this many (0: 200), newest first.
	Limit int
}

// BankCredits lists stored credits, unmatched ones first, then newest first.
func (s *Service) BankCredits(ctx context.Context, q CreditQuery) (out []BankCredit, err error) {
	if q.Limit <= 0 {
		q.Limit = 200
	}
	sel := s.DB().NewSelect().Model(&out)
	if !q.Everyone {
		sel = creditsOf(sel, q.OrganisationID)
	}
	if len(q.States) > 0 {
		sel = sel.Where("state IN (?)", bun.List(q.States))
	}
	if err := sel.OrderExpr("CASE WHEN state = ? THEN 0 ELSE 1 END, id DESC", CreditUnmatched).Limit(int64(q.Limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list bank credits: %w", err)
	}
	var refs []string
	for _, c := range out {
		if c.PaymentReference != nil {
			refs = append(refs, *c.PaymentReference)
		}
	}
	if len(refs) == 0 {
		return out, nil
	}
	var regs []struct {
		Reference string `bun:"reference"`
		Instance  int64  `bun:"process_instance_id"`
	}
	if err := s.DB().NewSelect().TableExpr("payments AS p").Join("JOIN orders AS o ON o.id = p.order_id").
		ColumnExpr("p.reference, o.process_instance_id").Where("p.reference IN (?)", bun.List(refs)).Scan(ctx, &regs); err != nil {
		return nil, fmt.Errorf("registrations of assigned credits: %w", err)
	}
	byRef := make(map[string]int64, len(regs))
	for _, r := range regs {
		byRef[r.Reference] = r.Instance
	}
	for i, c := range out {
		if c.PaymentReference != nil {
			out[i].RegistrationID = byRef[*c.PaymentReference]
		}
	}
	return out, nil
}

// CountUnmatchedCredits counts an organisation's credits still waiting for
// a treasurer, for the season overview.
func (s *Service) CountUnmatchedCredits(ctx context.Context, orgID int64) (_ int, err error) {
	n, err := creditsOf(s.DB().NewSelect().Model((*BankCredit)(nil)), orgID).Where("state = ?", CreditUnmatched).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count unmatched credits: %w", err)
	}
	return int(n), nil
}

// CreditResolution is what a treasurer decides for an unmatched credit.
type CreditResolution struct {
	// State is CreditAssigned, CreditReturned or CreditIgnored.
	State CreditState
	// Payment names what an assigned credit pays: a registration's number
	// (as on the staff pages), or a payment reference as capture takes it
	// (RF…, PO-…, PR-…).
	Payment string
	// Note says why; required to return or ignore.
	Note string
}

// CreditResolved is what ResolveCredit did.
type CreditResolved struct {
	Credit BankCredit
	// Capture is the capture of an assigned credit (nil otherwise).
	Capture *payment.CaptureResult
	// Replayed: the credit was resolved this way before; nothing changed.
	Replayed bool
}

// ResolveCredit settles an unmatched credit of the organisation (0: of the
// shared account): assigned, it is captured for the payment named exactly
// as an imported credit is (CapturePayment: the exact amount completes
// the registration, a part is added up, an excess or another currency is
// recorded as the payment's problem), and marked assigned in the capture's
// transaction; returned or ignored, it is marked with the note. Each is
// audited with the change. Asked again to resolve it the same way (a
// form posted twice), it changes nothing and says so; another way is a
// conflict.
func (s *Service) ResolveCredit(ctx context.Context, actor engine.Actor, orgID, id int64, r CreditResolution) (_ *CreditResolved, err error) {
	r.Note = strings.TrimSpace(r.Note)
	if len(r.Note) > 500 {
		return nil, engine.Errorf(engine.CodeInvalid, "the note may be at most 500 characters")
	}
	bc := new(BankCredit)
	if err := creditsOf(s.DB().NewSelect().Model(bc).Where("id = ?", id), orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "bank credit")
	}
	switch r.State {
	case CreditAssigned:
		if strings.TrimSpace(r.Payment) == "" {
			return nil, engine.Errorf(engine.CodeInvalid, "name the registration or payment reference the credit pays")
		}
	case CreditReturned, CreditIgnored:
		if r.Note == "" {
			return nil, engine.Errorf(engine.CodeInvalid, "say in a note why the credit is %s", r.State)
		}
	default:
		return nil, engine.Errorf(engine.CodeInvalid, "a credit is assigned, returned or ignored, not %q", r.State)
	}
	if bc.State != CreditUnmatched {
		if bc.State == r.State {
			return &CreditResolved{Credit: *bc, Replayed: true}, nil
		}
		return nil, engine.Errorf(engine.CodeConflict, "This credit was %s by %s already.", bc.State, bc.ResolvedBy)
	}
	if r.State != CreditAssigned {
		err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
			return s.markCredit(ctx, tx, actor, bc, r.State, nil, r.Note)
		})
		if err != nil {
			return nil, err
		}
		return &CreditResolved{Credit: *bc}, nil
	}
	ref, err := s.creditPaymentReference(ctx, orgID, r.Payment)
	if err != nil {
		return nil, err
	}
	var booked time.Time
	if bc.BookedOn != nil {
		booked = *bc.BookedOn
	}
	note := fmt.Sprintf("credit %s assigned by %s", bc.CreditID, actor.Name)
	if bc.DebtorName != "" {
		note += " (from " + bc.DebtorName + ")"
	}
	if r.Note != "" {
		note += "; " + r.Note
	}
	var captured *engine.Payment
	ctx = engine.WithTxStep(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if captured, err = paymentByReferenceOrRF(ctx, tx, ref); err != nil {
			return err
		}
		return s.markCredit(ctx, tx, actor, bc, CreditAssigned, captured, r.Note)
	})
	res, err := payment.Of(s.Service).CapturePayment(ctx, payment.Capture{Reference: ref, AmountMinor: bc.AmountMinor, Currency: bc.Currency, BookedOn: booked,
		Note: note, EventID: CreditEventID(orgID, bc.Account, bc.CreditKey), OrganisationID: orgID})
	if err != nil {
		return nil, err
	}
	return &CreditResolved{Credit: *bc, Capture: res}, nil
}

// creditPaymentReference reads what an assigned credit pays: a
// registration's number is its order's payment reference; anything else
// is a reference CapturePayment reads.
func (s *Service) creditPaymentReference(ctx context.Context, orgID int64, named string) (string, error) {
	named = strings.TrimSpace(named)
	id, err := strconv.ParseInt(strings.TrimPrefix(named, "#"), 10, 64)
	if err != nil {
		return named, nil
	}
	if orgID == 0 {
		return "", engine.Errorf(engine.CodeInvalid, "name the payment reference (RF…) of the registration the credit pays")
	}
	var inst engine.ProcessInstance
	if err := s.DB().NewSelect().Model(&inst).Column("id").Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return "", engine.NotFoundOr(err, "registration")
	}
	var orders []engine.Order // its latest order, as the registration's page shows it
	if err := s.DB().NewSelect().Model(&orders).Column("pay_reference").Where("process_instance_id = ?", inst.ID).
		OrderExpr("id DESC").Limit(1).Scan(ctx); err != nil {
		return "", fmt.Errorf("load order: %w", err)
	}
	if len(orders) == 0 {
		return "", engine.Errorf(engine.CodeConflict, "Registration %d has no order to pay.", id)
	}
	return orders[0].PayReference, nil
}

// paymentByReferenceOrRF is the bank-transfer attempt a capture settled
// (in its transaction): by RF reference, order or attempt reference.
func paymentByReferenceOrRF(ctx context.Context, tx bun.IDB, ref string) (*engine.Payment, error) {
	p := new(engine.Payment)
	q := tx.NewSelect().Model(p).Where("provider = ?", payment.BankTransferProvider)
	switch upper := strings.ToUpper(strings.TrimSpace(ref)); {
	case strings.HasPrefix(upper, "RF"):
		rf, err := banking.ParseReference(ref)
		if err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "%s", err.Error())
		}
		q = q.Where("provider_id = ?", string(rf))
	case strings.HasPrefix(upper, "PO-"):
		q = q.Where("order_id IN (?)", tx.NewSelect().Model((*engine.Order)(nil)).Column("id").Where("pay_reference = ?", strings.TrimSpace(ref)))
	default:
		q = q.Where("reference = ?", strings.TrimSpace(ref))
	}
	if err := q.Order("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "payment")
	}
	return p, nil
}

// creditActions name the audit entries of the resolutions.
var creditActions = map[CreditState]string{CreditAssigned: "credit.assign", CreditReturned: "credit.return", CreditIgnored: "credit.ignore"}

// markCredit resolves a credit in tx, only if it is still unmatched (two
// treasurers resolving it at once: the second is told), with its audit
// entry when it is an organisation's.
func (s *Service) markCredit(ctx context.Context, tx bun.IDB, actor engine.Actor, bc *BankCredit, state CreditState, p *engine.Payment, note string) error {
	now := s.Clock()
	upd := tx.NewUpdate().Model((*BankCredit)(nil)).Set("state = ?", state).Set("note = ?", note).
		Set("resolved_by = ?", actor.Name).Set("resolved_staff_id = ?", actor.StaffID).Set("resolved_at = ?", now).
		Where("id = ? AND state = ?", bc.ID, CreditUnmatched)
	var payRef *string
	if p != nil {
		payRef = &p.Reference
		upd = upd.Set("payment_reference = ?", p.Reference)
		var order engine.Order
		if err := tx.NewSelect().Model(&order).Column("organisation_id", "user_key").Where("id = ?", p.OrderID).Scan(ctx); err != nil {
			return fmt.Errorf("load the paid order: %w", err)
		}
		payer, ok, err := store.HouseholdPersonNamed(ctx, tx, order.OrganisationID, order.UserKey, bc.DebtorName)
		if err != nil {
			return err
		}
		bc.PayerPersonID = store.PersonRef(payer, ok)
		upd = upd.Set("payer_person_id = ?", bc.PayerPersonID)
	}
	res, err := upd.Exec(ctx)
	if err != nil {
		return fmt.Errorf("resolve bank credit: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return engine.Errorf(engine.CodeConflict, "This credit was resolved by someone else meanwhile.")
	}
	bc.State, bc.Note, bc.ResolvedBy, bc.ResolvedStaffID, bc.ResolvedAt, bc.PaymentReference = state, note, actor.Name, actor.StaffID, &now, payRef
	if bc.OrganisationID == nil {
		return nil
	}
	after := map[string]any{"state": state, "note": note}
	e := engine.AuditEntry{OrganisationID: *bc.OrganisationID, Action: creditActions[state],
		TargetType: "bank_credit", TargetID: bc.CreditID,
		Before: map[string]any{"state": CreditUnmatched, "amount": engine.FormatMoney(bc.AmountMinor, bc.Currency), "from": bc.DebtorName}, After: after}
	if p != nil {
		after["payment"] = p.Reference
		var order engine.Order
		if err := tx.NewSelect().Model(&order).Where("id = ?", p.OrderID).Scan(ctx); err != nil {
			return fmt.Errorf("load the order of the assigned credit: %w", err)
		}
		inst := order.ProcessInstanceID
		e.InstanceID = &inst
	}
	return s.AppendAudit(ctx, tx, actor, e)
}
