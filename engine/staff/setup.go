package staff

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/organisation"
	"portal/engine/registration"
)

// The staff setup page's changes: the same validation as the admin API's
// (UpdateOrganisation, UpdatePeriod), audited in their transaction, plus
// the staff records' role and access, which keep at least one active
// administrator.

// StaffUpdateOrganisation is UpdateOrganisation by a staff member.
func (s *Service) StaffUpdateOrganisation(ctx context.Context, actor engine.Actor, id int64, c organisation.OrganisationChange) (*engine.Organisation, error) {
	return organisation.Of(s.Service).UpdateOrganisationBy(ctx, &actor, id, c)
}

// StaffUpdatePeriod is UpdatePeriod by a staff member (opening and
// closing a period).
func (s *Service) StaffUpdatePeriod(ctx context.Context, actor engine.Actor, orgID, id int64, in organisation.PeriodInput) (*engine.MembershipPeriod, error) {
	return organisation.Of(s.Service).UpdatePeriodBy(ctx, &actor, orgID, id, in)
}

// errLastAdmin refuses a change that would leave an organisation without
// an active administrator: nobody could then manage its staff.
var errLastAdmin = engine.Errorf(engine.CodeConflict, "This is the last active administrator of the organisation: make someone else an administrator first.")

// ChangeStaffRole gives an active staff record another role.
func (s *Service) ChangeStaffRole(ctx context.Context, actor engine.Actor, orgID, id int64, role StaffRole) error {
	if !role.Valid() {
		return &engine.Error{Code: engine.CodeValidation, Message: "The staff member is not valid.",
			Fields: []engine.FieldError{{Field: "role", Message: "must be viewer, registrar, treasurer or admin"}}}
	}
	return s.changeStaff(ctx, actor, orgID, id, "staff.role", func(m *StaffMember) { m.Role = role }, role == RoleAdmin)
}

// DisableStaff ends a staff record's access (its sessions end at their
// next request); AddStaff with its address gives it back.
func (s *Service) DisableStaff(ctx context.Context, actor engine.Actor, orgID, id int64) error {
	now := s.Clock()
	return s.changeStaff(ctx, actor, orgID, id, "staff.remove", func(m *StaffMember) { m.DisabledAt = &now }, false)
}

// changeStaff applies change to an active staff record, refusing to take
// the last active administrator away unless it stays one (staysAdmin).
func (s *Service) changeStaff(ctx context.Context, actor engine.Actor, orgID, id int64, action string, change func(*StaffMember), staysAdmin bool) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		m := new(StaffMember)
		if err := tx.NewSelect().Model(m).Where("id = ? AND organisation_id = ? AND disabled_at IS NULL", id, orgID).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "staff member")
		}
		if m.Role == RoleAdmin && !staysAdmin {
			// Lock the organisation's admin rows, so that two admins
			// demoting each other at once cannot both pass the check.
			// (SQLite runs one write transaction at a time: no lock needed.)
			var admins []int64
			q := tx.NewSelect().Model((*StaffMember)(nil)).Column("id").
				Where("organisation_id = ? AND role = ? AND disabled_at IS NULL", orgID, RoleAdmin)
			if tx.Dialect().Name() == dialect.PG {
				q = q.For("UPDATE")
			}
			if err := q.Scan(ctx, &admins); err != nil {
				return fmt.Errorf("count administrators: %w", err)
			}
			if len(admins) <= 1 {
				return errLastAdmin
			}
		}
		before := staffAuditView(m)
		change(m)
		if _, err := tx.NewUpdate().Model(m).Column("role", "disabled_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("change staff member: %w", err)
		}
		return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: action,
			TargetType: "staff", TargetID: fmt.Sprint(m.ID), Before: before, After: staffAuditView(m)})
	})
}

// PriceCheckPerson is one person of a price calculation.
type PriceCheckPerson struct {
	MembershipTypeID int64
	// MemberType is MemberNew, MemberRenewal or MemberTransfer.
	MemberType string
}

// PriceCheck computes what a household of people pays for a period on a
// given day, with the engine's own pricing (the rules valid that day;
// options answered in the form are not included).
func (s *Service) PriceCheck(ctx context.Context, orgID, periodID int64, people []PriceCheckPerson, on time.Time) (_ registration.Quote, err error) {
	period := new(engine.MembershipPeriod)
	if err := s.DB().NewSelect().Model(period).Where("id = ? AND organisation_id = ?", periodID, orgID).Scan(ctx); err != nil {
		return registration.Quote{}, engine.NotFoundOr(err, "membership period")
	}
	if len(people) == 0 || len(people) > 20 {
		return registration.Quote{}, &engine.Error{Code: engine.CodeValidation, Message: "The calculation needs 1 to 20 persons.",
			Fields: []engine.FieldError{{Field: "persons", Message: "add at least one person"}}}
	}
	types, err := organisation.Of(s.Service).MembershipTypes(ctx, orgID)
	if err != nil {
		return registration.Quote{}, err
	}
	rules, err := organisation.Of(s.Service).PriceRules(ctx, orgID, periodID)
	if err != nil {
		return registration.Quote{}, err
	}
	// The lines in the reader's language, as a member reading it would get them.
	engine.LocalizeRules(rules, engine.LanguageOf(ctx))
	engine.LocalizeTypes(types, engine.LanguageOf(ctx))
	priced := make([]registration.PricedPerson, len(people))
	var fields []engine.FieldError
	for i, p := range people {
		for j := range types {
			if types[j].ID == p.MembershipTypeID {
				priced[i].Type = &types[j]
			}
		}
		if priced[i].Type == nil {
			fields = append(fields, engine.FieldError{Field: fmt.Sprintf("person %d type", i+1), Message: "choose a membership type"})
		}
		switch p.MemberType {
		case engine.MemberNew, engine.MemberRenewal, engine.MemberTransfer:
		default:
			fields = append(fields, engine.FieldError{Field: fmt.Sprintf("person %d", i+1), Message: "must be new, renewing or transferring"})
		}
		priced[i].MemberType = p.MemberType
		priced[i].Person = engine.Person{ID: int64(i + 1), FirstName: "Person", LastName: fmt.Sprint(i + 1)}
	}
	if len(fields) > 0 {
		return registration.Quote{}, &engine.Error{Code: engine.CodeValidation, Message: "The calculation is not complete.", Fields: fields}
	}
	return registration.PriceRegistration(period, nil, priced, rules, on)
}
