package organisation

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
)

// An organisation's setup through the admin API: its membership types and
// its periods. Every operation is scoped to one organisation; another
// organisation's rows are not found.

var (
	typeCodePattern = regexp.MustCompile(`^[A-Z0-9_-]{1,32}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// MembershipTypes lists an organisation's membership types by id.
func (s *Service) MembershipTypes(ctx context.Context, orgID int64) (types []engine.MembershipType, err error) {
	if err := s.DB().NewSelect().Model(&types).Where("organisation_id = ?", orgID).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load membership types: %w", err)
	}
	return types, nil
}

// CreateMembershipType adds a membership type; the age range (at the
// period's start) decides which persons it fits.
func (s *Service) CreateMembershipType(ctx context.Context, t engine.MembershipType) (*engine.MembershipType, error) {
	return s.createMembershipType(ctx, nil, t)
}

// StaffCreateMembershipType is CreateMembershipType by a staff member,
// audited in its transaction.
func (s *Service) StaffCreateMembershipType(ctx context.Context, actor engine.Actor, t engine.MembershipType) (*engine.MembershipType, error) {
	return s.createMembershipType(ctx, &actor, t)
}

func (s *Service) createMembershipType(ctx context.Context, actor *engine.Actor, t engine.MembershipType) (_ *engine.MembershipType, err error) {
	t.ID = 0
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		langs, err := engine.OrgTextLanguages(ctx, tx, t.OrganisationID)
		if err != nil {
			return err
		}
		if err := checkMembershipType(&t, langs); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(&t).Exec(ctx); err != nil {
			return membershipTypeStoreError(err)
		}
		return s.auditMembershipType(ctx, tx, actor, "membership_type.add", t.OrganisationID, t.ID, nil, &t)
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// auditMembershipType appends a membership type's change when actor is
// set (the staff pages); before or after is nil for an addition or a deletion.
func (s *Service) auditMembershipType(ctx context.Context, tx bun.IDB, actor *engine.Actor, action string, orgID, id int64, before, after *engine.MembershipType) error {
	if actor == nil {
		return nil
	}
	view := func(t *engine.MembershipType) any {
		if t == nil {
			return nil
		}
		return map[string]any{"code": t.Code, "name": t.Name, "nameTexts": t.NameTexts, "minAge": t.MinAge, "maxAge": t.MaxAge}
	}
	return s.AppendAudit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: action, TargetType: "membership_type",
		TargetID: fmt.Sprint(id), Before: view(before), After: view(after)})
}

// checkMembershipType validates a membership type as created or changed.
func checkMembershipType(t *engine.MembershipType, langs engine.TextLanguages) error {
	var fields []engine.FieldError
	bad := func(f, m string) { fields = append(fields, engine.FieldError{Field: f, Message: m}) }
	if !typeCodePattern.MatchString(t.Code) {
		bad("code", "must be 1 to 32 upper-case letters, digits, _ or -")
	}
	fields = append(fields, engine.CheckClubText(langs, "name", "nameTexts", &t.Name, t.NameTexts, 100)...)
	for field, age := range map[string]*int{"minAge": t.MinAge, "maxAge": t.MaxAge} {
		if age != nil && (*age < 0 || *age > 150) {
			bad(field, "must be 0 to 150")
		}
	}
	if t.MinAge != nil && t.MaxAge != nil && *t.MinAge > *t.MaxAge {
		bad("maxAge", "must not be below minAge")
	}
	if len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "The membership type is not valid.", Fields: fields}
	}
	return nil
}

func membershipTypeStoreError(err error) error {
	if store.IsUniqueViolation(err) {
		return &engine.Error{Code: engine.CodeConflict, Message: "The organisation already has a membership type with this code.",
			Fields: []engine.FieldError{{Field: "code", Message: "already used"}}, Err: err}
	}
	return fmt.Errorf("store membership type: %w", err)
}

// MembershipTypeChange is a partial update of a membership type: nil
// fields stay; ClearMinAge and ClearMaxAge remove a bound.
type MembershipTypeChange struct {
	Code, Name *string
	// NameTexts replace the name per language (an empty map: one name
	// for every language).
	NameTexts                *engine.Texts
	MinAge, MaxAge           *int
	ClearMinAge, ClearMaxAge bool
}

// UpdateMembershipType changes a membership type of orgID. Memberships
// already made keep their type (by id): a renamed type is renamed for them too.
func (s *Service) UpdateMembershipType(ctx context.Context, orgID, id int64, ch MembershipTypeChange) (*engine.MembershipType, error) {
	return s.updateMembershipType(ctx, nil, orgID, id, ch)
}

// StaffUpdateMembershipType is UpdateMembershipType by a staff member,
// audited in its transaction.
func (s *Service) StaffUpdateMembershipType(ctx context.Context, actor engine.Actor, orgID, id int64, ch MembershipTypeChange) (*engine.MembershipType, error) {
	return s.updateMembershipType(ctx, &actor, orgID, id, ch)
}

func (s *Service) updateMembershipType(ctx context.Context, actor *engine.Actor, orgID, id int64, ch MembershipTypeChange) (t *engine.MembershipType, err error) {
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if t, err = orgMembershipType(ctx, tx, orgID, id); err != nil {
			return err
		}
		before := *t
		langs, err := engine.OrgTextLanguages(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if ch.Code != nil {
			t.Code = *ch.Code
		}
		if ch.Name != nil {
			t.Name = *ch.Name
		}
		if ch.NameTexts != nil {
			t.NameTexts = ch.NameTexts.WithDefault(langs.Default, "")
			if ch.Name == nil && t.NameTexts[langs.Default] != "" {
				t.Name = "" // the texts' default language's text is the name
			}
		} else if ch.Name != nil && t.NameTexts[langs.Default] != "" {
			// A new default name alone replaces the default language's
			// text too, so that the two agree.
			t.NameTexts = t.NameTexts.WithDefault(langs.Default, "")
			t.NameTexts[langs.Default] = *ch.Name
		}
		if ch.ClearMinAge {
			t.MinAge = nil
		} else if ch.MinAge != nil {
			t.MinAge = ch.MinAge
		}
		if ch.ClearMaxAge {
			t.MaxAge = nil
		} else if ch.MaxAge != nil {
			t.MaxAge = ch.MaxAge
		}
		if err := checkMembershipType(t, langs); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model(t).WherePK().Exec(ctx); err != nil {
			return membershipTypeStoreError(err)
		}
		return s.auditMembershipType(ctx, tx, actor, "membership_type.update", orgID, id, &before, t)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteMembershipType removes a membership type of orgID that nothing
// uses: one that a membership or a price rule names is refused (conflict),
// since deleting it would rewrite history or prices.
func (s *Service) DeleteMembershipType(ctx context.Context, orgID, id int64) error {
	return s.deleteMembershipType(ctx, nil, orgID, id)
}

// StaffDeleteMembershipType is DeleteMembershipType by a staff member,
// audited in its transaction.
func (s *Service) StaffDeleteMembershipType(ctx context.Context, actor engine.Actor, orgID, id int64) error {
	return s.deleteMembershipType(ctx, &actor, orgID, id)
}

func (s *Service) deleteMembershipType(ctx context.Context, actor *engine.Actor, orgID, id int64) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		t, err := orgMembershipType(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		for _, use := range []struct {
			what  string
			model any
		}{{"memberships", (*engine.Membership)(nil)}, {"price rules", (*engine.PriceRule)(nil)}} {
			n, err := tx.NewSelect().Model(use.model).Where("membership_type_id = ?", id).Count(ctx)
			if err != nil {
				return fmt.Errorf("check membership type use: %w", err)
			}
			if n > 0 {
				return engine.Errorf(engine.CodeConflict, "The membership type is in use by %d %s: it cannot be deleted (rename it instead).", n, use.what)
			}
		}
		if _, err := tx.NewDelete().Model((*engine.MembershipType)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("delete membership type: %w", err)
		}
		return s.auditMembershipType(ctx, tx, actor, "membership_type.delete", orgID, id, t, nil)
	})
}

func orgMembershipType(ctx context.Context, db bun.IDB, orgID, id int64) (*engine.MembershipType, error) {
	t := new(engine.MembershipType)
	if err := db.NewSelect().Model(t).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "membership type")
	}
	return t, nil
}

// Periods lists an organisation's membership periods, newest start first.
func (s *Service) Periods(ctx context.Context, orgID int64) (periods []engine.MembershipPeriod, err error) {
	if err := s.DB().NewSelect().Model(&periods).Where("organisation_id = ?", orgID).Order("start_date DESC", "id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	return periods, nil
}

// PeriodInput is a new period, or (nil fields unchanged) a change of one.
type PeriodInput struct {
	Name *string
	// NameTexts replace the name per language (an empty map: one name
	// for every language).
	NameTexts     *engine.Texts
	StartDate     *string // YYYY-MM-DD
	EndDate       *string
	Currency      *string
	DefinitionKey *string
	Status        *string // open or closed
}

// CreatePeriod adds a period; every field is required. Its definition key
// must name a process definition of the organisation, so that the period
// can take registrations as soon as it is open.
func (s *Service) CreatePeriod(ctx context.Context, orgID int64, in PeriodInput) (*engine.MembershipPeriod, error) {
	return s.createPeriod(ctx, nil, orgID, in)
}

// StaffCreatePeriod is CreatePeriod by a staff member or an API key,
// audited in its transaction.
func (s *Service) StaffCreatePeriod(ctx context.Context, actor engine.Actor, orgID int64, in PeriodInput) (*engine.MembershipPeriod, error) {
	return s.createPeriod(ctx, &actor, orgID, in)
}

func (s *Service) createPeriod(ctx context.Context, actor *engine.Actor, orgID int64, in PeriodInput) (_ *engine.MembershipPeriod, err error) {
	var fields []engine.FieldError
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", in.Name}, {"startDate", in.StartDate}, {"endDate", in.EndDate}, {"currency", in.Currency}, {"definitionKey", in.DefinitionKey}} {
		if f.v == nil {
			fields = append(fields, engine.FieldError{Field: f.name, Message: "is required"})
		}
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "The period is not valid.", Fields: fields}
	}
	if in.Status == nil {
		in.Status = new(engine.PeriodClosed) // opened on purpose, once its prices are in place
	}
	p := &engine.MembershipPeriod{OrganisationID: orgID}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if err := applyPeriodInput(ctx, tx, p, in); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(p).Exec(ctx); err != nil {
			return fmt.Errorf("store period: %w", err)
		}
		if actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "period.add", TargetType: "period",
			TargetID: fmt.Sprint(p.ID), After: periodAuditView(p)})
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// UpdatePeriod changes a period of the organisation (open or close it,
// rename it, move its dates), in one transaction.
func (s *Service) UpdatePeriod(ctx context.Context, orgID, id int64, in PeriodInput) (p *engine.MembershipPeriod, err error) {
	return s.UpdatePeriodBy(ctx, nil, orgID, id, in)
}

// UpdatePeriodBy is UpdatePeriod, audited in its transaction when actor is
// set (the staff pages).
func (s *Service) UpdatePeriodBy(ctx context.Context, actor *engine.Actor, orgID, id int64, in PeriodInput) (p *engine.MembershipPeriod, err error) {
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		p = new(engine.MembershipPeriod)
		if err := tx.NewSelect().Model(p).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "membership period")
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
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "period.update", TargetType: "period",
			TargetID: fmt.Sprint(id), Before: periodAuditView(&before), After: periodAuditView(p)})
	})
	return p, err
}

// periodAuditView is what the audit log keeps of a period.
func periodAuditView(p *engine.MembershipPeriod) map[string]any {
	return map[string]any{"name": p.Name, "nameTexts": p.NameTexts, "status": p.Status, "startDate": p.StartDate.Format(time.DateOnly),
		"endDate": p.EndDate.Format(time.DateOnly), "currency": p.Currency, "definitionKey": p.DefinitionKey}
}

func applyPeriodInput(ctx context.Context, tx bun.Tx, p *engine.MembershipPeriod, in PeriodInput) error {
	var fields []engine.FieldError
	bad := func(f, m string) { fields = append(fields, engine.FieldError{Field: f, Message: m}) }
	if in.Name != nil || in.NameTexts != nil {
		langs, err := engine.OrgTextLanguages(ctx, tx, p.OrganisationID)
		if err != nil {
			return err
		}
		name, texts := p.Name, p.NameTexts
		if in.Name != nil {
			name = *in.Name
		}
		if in.NameTexts != nil {
			texts = *in.NameTexts
		} else if in.Name != nil && texts[langs.Default] != "" {
			// A new default name alone replaces the default language's
			// text too, so that the two agree.
			texts = texts.WithDefault(langs.Default, "")
			texts[langs.Default] = *in.Name
		}
		if in.Name == nil && in.NameTexts != nil && texts[langs.Default] != "" {
			name = "" // the texts' default language's text is the name
		}
		texts = texts.WithDefault(langs.Default, "") // a copy: a refused change leaves p as it was
		if errs := engine.CheckClubText(langs, "name", "nameTexts", &name, texts, 200); len(errs) > 0 {
			fields = append(fields, errs...)
		} else {
			p.Name, p.NameTexts = name, texts
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
		if *in.Status != engine.PeriodOpen && *in.Status != engine.PeriodClosed {
			bad("status", "must be open or closed")
		} else {
			p.Status = *in.Status
		}
	}
	if in.DefinitionKey != nil {
		if _, err := definition.LatestDefinition(ctx, tx, p.OrganisationID, *in.DefinitionKey); err != nil {
			if engine.ErrorCode(err) != engine.CodeNotFound {
				return err
			}
			bad("definitionKey", "names no process definition of the organisation (import one first)")
		} else {
			p.DefinitionKey = *in.DefinitionKey
		}
	}
	if len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "The period is not valid.", Fields: fields}
	}
	return nil
}
