package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// An organisation's setup through the admin API: its membership types and
// its periods. Every operation is scoped to one organisation; another
// organisation's rows are not found.

var (
	typeCodePattern = regexp.MustCompile(`^[A-Z0-9_-]{1,32}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// MembershipTypes lists an organisation's membership types by id.
func (s *Service) MembershipTypes(ctx context.Context, orgID int64) (types []MembershipType, err error) {
	defer classifyUnavailable(&err)
	if err := s.db.NewSelect().Model(&types).Where("organisation_id = ?", orgID).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load membership types: %w", err)
	}
	return types, nil
}

// CreateMembershipType adds a membership type; the age range (at the
// period's start) decides which persons it fits.
func (s *Service) CreateMembershipType(ctx context.Context, t MembershipType) (_ *MembershipType, err error) {
	defer classifyUnavailable(&err)
	var fields []FieldError
	bad := func(f, m string) { fields = append(fields, FieldError{Field: f, Message: m}) }
	t.Name = strings.TrimSpace(t.Name)
	if !typeCodePattern.MatchString(t.Code) {
		bad("code", "must be 1 to 32 upper-case letters, digits, _ or -")
	}
	if t.Name == "" || !printable(t.Name, 100) {
		bad("name", "must be 1 to 100 characters")
	}
	for field, age := range map[string]*int{"minAge": t.MinAge, "maxAge": t.MaxAge} {
		if age != nil && (*age < 0 || *age > 150) {
			bad(field, "must be 0 to 150")
		}
	}
	if t.MinAge != nil && t.MaxAge != nil && *t.MinAge > *t.MaxAge {
		bad("maxAge", "must not be below minAge")
	}
	if len(fields) > 0 {
		return nil, &Error{Code: CodeValidation, Message: "The membership type is not valid.", Fields: fields}
	}
	t.ID = 0
	if _, err := s.db.NewInsert().Model(&t).Exec(ctx); err != nil {
		if isUniqueViolation(err) {
			return nil, &Error{Code: CodeConflict, Message: "The organisation already has a membership type with this code.",
				Fields: []FieldError{{Field: "code", Message: "already used"}}, Err: err}
		}
		return nil, fmt.Errorf("store membership type: %w", err)
	}
	return &t, nil
}

// Periods lists an organisation's membership periods, newest start first.
func (s *Service) Periods(ctx context.Context, orgID int64) (periods []MembershipPeriod, err error) {
	defer classifyUnavailable(&err)
	if err := s.db.NewSelect().Model(&periods).Where("organisation_id = ?", orgID).Order("start_date DESC", "id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	return periods, nil
}

// PeriodInput is a new period, or (nil fields unchanged) a change of one.
type PeriodInput struct {
	Name          *string
	StartDate     *string // YYYY-MM-DD
	EndDate       *string
	Currency      *string
	DefinitionKey *string
	Status        *string // open or closed
}

// CreatePeriod adds a period; every field is required. Its definition key
// must name a process definition of the organisation, so that the period
// can take registrations as soon as it is open.
func (s *Service) CreatePeriod(ctx context.Context, orgID int64, in PeriodInput) (_ *MembershipPeriod, err error) {
	defer classifyUnavailable(&err)
	var fields []FieldError
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", in.Name}, {"startDate", in.StartDate}, {"endDate", in.EndDate}, {"currency", in.Currency}, {"definitionKey", in.DefinitionKey}} {
		if f.v == nil {
			fields = append(fields, FieldError{Field: f.name, Message: "is required"})
		}
	}
	if len(fields) > 0 {
		return nil, &Error{Code: CodeValidation, Message: "The period is not valid.", Fields: fields}
	}
	if in.Status == nil {
		in.Status = ptr(PeriodClosed) // opened on purpose, once its prices are in place
	}
	p := &MembershipPeriod{OrganisationID: orgID}
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if err := applyPeriodInput(ctx, tx, p, in); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(p).Exec(ctx); err != nil {
			return fmt.Errorf("store period: %w", err)
		}
		return nil
	})
	return p, err
}

// UpdatePeriod changes a period of the organisation (open or close it,
// rename it, move its dates), in one transaction.
func (s *Service) UpdatePeriod(ctx context.Context, orgID, id int64, in PeriodInput) (p *MembershipPeriod, err error) {
	return s.updatePeriod(ctx, nil, orgID, id, in)
}

// updatePeriod is UpdatePeriod, audited in its transaction when actor is
// set (the staff pages).
func (s *Service) updatePeriod(ctx context.Context, actor *Actor, orgID, id int64, in PeriodInput) (p *MembershipPeriod, err error) {
	defer classifyUnavailable(&err)
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		p = new(MembershipPeriod)
		if err := tx.NewSelect().Model(p).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
			return notFoundOr(err, "membership period")
		}
		before := *p
		if err := applyPeriodInput(ctx, tx, p, in); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model(p).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store period: %w", err)
		}
		if actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *actor, AuditEntry{OrganisationID: orgID, Action: "period.update", TargetType: "period",
			TargetID: fmt.Sprint(id), Before: periodAuditView(&before), After: periodAuditView(p)})
	})
	return p, err
}

// periodAuditView is what the audit log keeps of a period.
func periodAuditView(p *MembershipPeriod) map[string]any {
	return map[string]any{"name": p.Name, "status": p.Status, "startDate": p.StartDate.Format(time.DateOnly),
		"endDate": p.EndDate.Format(time.DateOnly), "currency": p.Currency, "definitionKey": p.DefinitionKey}
}

func applyPeriodInput(ctx context.Context, tx bun.Tx, p *MembershipPeriod, in PeriodInput) error {
	var fields []FieldError
	bad := func(f, m string) { fields = append(fields, FieldError{Field: f, Message: m}) }
	if in.Name != nil {
		if n := strings.TrimSpace(*in.Name); n == "" || !printable(n, 200) {
			bad("name", "must be 1 to 200 characters")
		} else {
			p.Name = n
		}
	}
	for _, d := range []struct {
		name string
		v    *string
		dst  *time.Time
	}{{"startDate", in.StartDate, &p.StartDate}, {"endDate", in.EndDate, &p.EndDate}} {
		if d.v == nil {
			continue
		}
		t, err := time.Parse(time.DateOnly, *d.v)
		if err != nil {
			bad(d.name, "must be a date as YYYY-MM-DD")
			continue
		}
		*d.dst = t
	}
	if !p.StartDate.IsZero() && !p.EndDate.IsZero() && p.EndDate.Before(p.StartDate) {
		bad("endDate", "must not be before startDate")
	}
	if in.Currency != nil {
		if !currencyPattern.MatchString(*in.Currency) {
			bad("currency", "must be an ISO 4217 code such as EUR")
		} else {
			p.Currency = *in.Currency
		}
	}
	if in.Status != nil {
		if *in.Status != PeriodOpen && *in.Status != PeriodClosed {
			bad("status", "must be open or closed")
		} else {
			p.Status = *in.Status
		}
	}
	if in.DefinitionKey != nil {
		if _, err := latestDefinition(ctx, tx, p.OrganisationID, *in.DefinitionKey); err != nil {
			if ErrorCode(err) != CodeNotFound {
				return err
			}
			bad("definitionKey", "names no process definition of the organisation (import one first)")
		} else {
			p.DefinitionKey = *in.DefinitionKey
		}
	}
	if len(fields) > 0 {
		return &Error{Code: CodeValidation, Message: "The period is not valid.", Fields: fields}
	}
	return nil
}
