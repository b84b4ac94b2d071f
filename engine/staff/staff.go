package staff

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Staff are the people of a club who sign in to the staff pages: one
// record per organisation and e-mail address, with a role. The IdP's
// subject is bound at the first sign-in that proves the e-mail address
// (email_verified), and later sign-ins are matched by subject only, so a
// changed address at the IdP does not lock anyone out or let anyone in.

// StaffRole is what a staff member may do. Each role includes the ones
// before it: viewer < registrar < treasurer < admin.
type StaffRole string

// Staff roles, from least to most.
const (
	RoleViewer    StaffRole = "viewer"    // reads everything of the club
	RoleRegistrar StaffRole = "registrar" // + registrations, invitations, messages
	RoleTreasurer StaffRole = "treasurer" // + payments, refunds, captures, exports
	RoleAdmin     StaffRole = "admin"     // + setup and staff
)

// StaffRoles lists the roles from least to most.
var StaffRoles = []StaffRole{RoleViewer, RoleRegistrar, RoleTreasurer, RoleAdmin}

// rank orders the roles; 0 is no role.
func (r StaffRole) rank() int {
	for i, x := range StaffRoles {
		if x == r {
			return i + 1
		}
	}
	return 0
}

// Valid reports whether r is one of the roles.
func (r StaffRole) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r includes min.
func (r StaffRole) AtLeast(min StaffRole) bool { return r.Valid() && r.rank() >= min.rank() }

// ParseStaffRole reads a role name.
func ParseStaffRole(s string) (StaffRole, bool) {
	r := StaffRole(strings.ToLower(strings.TrimSpace(s)))
	return r, r.Valid()
}

// StaffMember is one staff record.
type StaffMember struct {
	bun.BaseModel  `bun:"table:staff_members"`
	ID             int64      `bun:"id,pk,autoincrement"`
	OrganisationID int64      `bun:"organisation_id,notnull"`
	Email          string     `bun:"email,notnull"`
	Name           string     `bun:"name,notnull"`
	Role           StaffRole  `bun:"role,notnull"`
	Subject        *string    `bun:"subject"`
	CreatedAt      time.Time  `bun:"created_at,notnull"`
	LastSignInAt   *time.Time `bun:"last_sign_in_at"`
	DisabledAt     *time.Time `bun:"disabled_at"`
}

// Active reports whether the record may sign in.
func (m *StaffMember) Active() bool { return m.DisabledAt == nil }

// normalizeEmail is the one form e-mail addresses are stored and compared in.
func normalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// StaffInput is a staff record to add or change.
type StaffInput struct {
	Email, Name string
	Role        StaffRole
}

func (in StaffInput) validate() (StaffInput, error) {
	in.Email, in.Name = normalizeEmail(in.Email), strings.TrimSpace(in.Name)
	var fields []engine.FieldError
	if a, err := mail.ParseAddress(in.Email); err != nil || a.Address != in.Email || len(in.Email) > 254 {
		fields = append(fields, engine.FieldError{Field: "email", Message: "must be an e-mail address"})
	}
	if in.Name == "" || !engine.Printable(in.Name, 100) {
		fields = append(fields, engine.FieldError{Field: "name", Message: "must be 1 to 100 printable characters"})
	}
	if !in.Role.Valid() {
		fields = append(fields, engine.FieldError{Field: "role", Message: "must be viewer, registrar, treasurer or admin"})
	}
	if len(fields) > 0 {
		return in, &engine.Error{Code: engine.CodeValidation, Message: "The staff member is not valid.", Fields: fields}
	}
	return in, nil
}

// AddStaff adds a staff member to an organisation, or gives a disabled
// record of the same address its access back with the new name and role
// (its subject binding is dropped: the next sign-in binds again). An
// active record of the same address is a conflict. actor is audited.
func (s *Service) AddStaff(ctx context.Context, actor engine.Actor, orgID int64, in StaffInput) (m *StaffMember, err error) {
	if in, err = in.validate(); err != nil {
		return nil, err
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := engine.LoadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		now := s.Clock()
		prev := new(StaffMember)
		err := tx.NewSelect().Model(prev).Where("organisation_id = ? AND email = ?", orgID, in.Email).Scan(ctx)
		switch {
		case err == nil && prev.Active():
			return &engine.Error{Code: engine.CodeConflict, Message: "A staff member with this e-mail address exists already.",
				Fields: []engine.FieldError{{Field: "email", Message: "already a staff member"}}}
		case err == nil:
			before := staffAuditView(prev)
			m = prev
			m.Name, m.Role, m.Subject, m.DisabledAt = in.Name, in.Role, nil, nil
			if _, err := tx.NewUpdate().Model(m).Column("name", "role", "subject", "disabled_at").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("enable staff member: %w", err)
			}
			return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "staff.enable",
				TargetType: "staff", TargetID: fmt.Sprint(m.ID), Before: before, After: staffAuditView(m)})
		case engine.ErrorCode(engine.NotFoundOr(err, "staff")) != engine.CodeNotFound:
			return fmt.Errorf("load staff member: %w", err)
		}
		m = &StaffMember{OrganisationID: orgID, Email: in.Email, Name: in.Name, Role: in.Role, CreatedAt: now}
		if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
			if store.IsUniqueViolation(err) {
				return engine.Errorf(engine.CodeConflict, "A staff member with this e-mail address exists already.")
			}
			return fmt.Errorf("store staff member: %w", err)
		}
		return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "staff.add",
			TargetType: "staff", TargetID: fmt.Sprint(m.ID), After: staffAuditView(m)})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// staffAuditView is what the audit log keeps of a staff record.
func staffAuditView(m *StaffMember) map[string]any {
	return map[string]any{"email": m.Email, "name": m.Name, "role": m.Role, "disabled": !m.Active()}
}

// ListStaff lists an organisation's staff, disabled ones included, by e-mail.
func (s *Service) ListStaff(ctx context.Context, orgID int64) (out []StaffMember, err error) {
	if err := s.DB().NewSelect().Model(&out).Where("organisation_id = ?", orgID).Order("email").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load staff: %w", err)
	}
	return out, nil
}

// StaffByID returns one staff record of an organisation.
func (s *Service) StaffByID(ctx context.Context, orgID, id int64) (m *StaffMember, err error) {
	m = new(StaffMember)
	if err := s.DB().NewSelect().Model(m).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "staff member")
	}
	return m, nil
}

// RemoveStaff disables the staff member with this e-mail address: it can
// no longer sign in, and its sessions end at their next request (the
// session check reads the record). The record stays, since the audit log
// names it.
func (s *Service) RemoveStaff(ctx context.Context, actor engine.Actor, orgID int64, email string) (err error) {
	email = normalizeEmail(email)
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		m := new(StaffMember)
		if err := tx.NewSelect().Model(m).Where("organisation_id = ? AND email = ? AND disabled_at IS NULL", orgID, email).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "staff member")
		}
		before := staffAuditView(m)
		now := s.Clock()
		m.DisabledAt = &now
		if _, err := tx.NewUpdate().Model(m).Column("disabled_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("disable staff member: %w", err)
		}
		return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "staff.remove",
			TargetType: "staff", TargetID: fmt.Sprint(m.ID), Before: before, After: staffAuditView(m)})
	})
}

// StaffIdentity is what the IdP says about who signed in.
type StaffIdentity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}

// ErrStaffDenied is the one answer to a sign-in that finds no staff
// record: the page does not tell an unknown address from an unverified
// one or a disabled record.
var ErrStaffDenied = engine.Errorf(engine.CodeUnauthorized, "You are not a staff member of this organisation.")

// StaffRefusal says why a sign-in found no staff record, for the log
// only: it names the claim or the record's state, never an address. The
// member still sees ErrStaffDenied (errors.Is holds).
type StaffRefusal struct{ Reason string }

func (r *StaffRefusal) Error() string { return ErrStaffDenied.Error() + ": " + r.Reason }

// Unwrap makes a refusal ErrStaffDenied for errors.Is and ErrorCode.
func (r *StaffRefusal) Unwrap() error { return ErrStaffDenied }

// StaffRefusalReason is the reason of a refused sign-in, "" for none.
func StaffRefusalReason(err error) string {
	var r *StaffRefusal
	if errors.As(err, &r) {
		return r.Reason
	}
	if errors.Is(err, ErrStaffDisabled) {
		return "the staff record is disabled"
	}
	return ""
}

func staffRefused(reason string) error { return &StaffRefusal{Reason: reason} }

// ErrStaffDisabled refuses a staff member whose record was disabled: no
// role claim of the identity provider lets them back in.
var ErrStaffDisabled = engine.Errorf(engine.CodeUnauthorized, "Your staff access to this organisation was withdrawn.")

// StaffSignIn finds the active staff record of an organisation for an IdP
// identity: by subject when one is bound, else by the verified e-mail
// address, binding the subject to it. An address the IdP has not verified
// never binds: anyone could claim it at an IdP that lets users type it.
func (s *Service) StaffSignIn(ctx context.Context, orgID int64, id StaffIdentity) (m *StaffMember, err error) {
	if id.Subject == "" {
		return nil, staffRefused("the identity provider sent no subject")
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		now := s.Clock()
		m = new(StaffMember)
		err := tx.NewSelect().Model(m).Where("organisation_id = ? AND subject = ?", orgID, id.Subject).Scan(ctx)
		if err != nil {
			if engine.ErrorCode(engine.NotFoundOr(err, "staff")) != engine.CodeNotFound {
				return fmt.Errorf("load staff member: %w", err)
			}
			switch {
			case id.Email == "":
				return staffRefused("no staff record is bound to the subject and the email claim is missing")
			case !id.EmailVerified:
				return staffRefused("no staff record is bound to the subject and the e-mail address is not verified (email_verified missing or false)")
			}
			err = tx.NewSelect().Model(m).Where("organisation_id = ? AND email = ? AND subject IS NULL", orgID, normalizeEmail(id.Email)).Scan(ctx)
			if err != nil {
				if engine.ErrorCode(engine.NotFoundOr(err, "staff")) == engine.CodeNotFound {
					return staffRefused("no staff record is bound to the subject and no unbound staff record has the verified e-mail address")
				}
				return fmt.Errorf("load staff member: %w", err)
			}
			if !m.Active() {
				return ErrStaffDisabled
			}
			m.Subject = &id.Subject
			if err := s.AppendAudit(ctx, tx, engine.Actor{StaffID: &m.ID, Name: m.Email}, engine.AuditEntry{OrganisationID: orgID,
				Action: "staff.bind", TargetType: "staff", TargetID: fmt.Sprint(m.ID), After: map[string]any{"subject": id.Subject}}); err != nil {
				return err
			}
		}
		if !m.Active() {
			return ErrStaffDisabled
		}
		m.LastSignInAt = &now
		if _, err := tx.NewUpdate().Model(m).Column("subject", "last_sign_in_at").WherePK().Exec(ctx); err != nil {
			if store.IsUniqueViolation(err) {
				return staffRefused("the subject is bound to another staff record of the organisation")
			}
			return fmt.Errorf("store staff sign-in: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DemoStaffRoles are the staff every demo club gets, as
// <role>@<slug>.example (`portal seed demo`): an admin, a treasurer and a
// registrar, for the development IdP's sign-in page.
var DemoStaffRoles = []StaffRole{RoleAdmin, RoleTreasurer, RoleRegistrar}

// DemoStaffEmail is the demo staff address of a role in a club.
func DemoStaffEmail(slug string, role StaffRole) string {
	return string(role) + "@" + slug + ".example"
}

// SeedDemoStaff adds the demo staff to every organisation that has none of
// them yet. Idempotent.
func (s *Service) SeedDemoStaff(ctx context.Context) error {
	orgs, err := s.Organisations(ctx)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		for _, r := range DemoStaffRoles {
			name := strings.ToUpper(string(r[:1])) + string(r[1:]) + " of " + o.Name
			_, err := s.AddStaff(ctx, engine.CommandLine, o.ID, StaffInput{Email: DemoStaffEmail(o.Slug, r), Name: name, Role: r})
			if err != nil && engine.ErrorCode(err) != engine.CodeConflict {
				return err
			}
		}
	}
	return nil
}
