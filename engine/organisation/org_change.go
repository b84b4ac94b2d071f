package organisation

import (
	"context"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/message"
)

// Changing an organisation: its settings, hostnames, languages and, in the
// same transaction, its message and retention settings, validated field
// by field and audited.

// OrganisationChange is a partial update of an organisation's settings:
// nil fields stay as they are. HashSecretSealed is sealed by the caller;
// "" returns the organisation to the environment's secret.
type OrganisationChange struct {
	Name            *string
	Slug            *string
	Hostnames       *[]string
	ContactEmail    *string
	LogoURL         *string
	AccentColour    *string
	DefaultLanguage *string
	// EnabledLanguages replaces the languages offered to members.
	EnabledLanguages *[]string
	// RegistrationSystemID is sent with the hash login to the admin backend.
	RegistrationSystemID *string
	HashSecretSealed     *string
	// HashLinks accepts (true) or refuses (false) the spec's hash links.
	HashLinks *bool
	// InvitationExpiryDays is how long new invitations stay valid, 1 to
	// 366 days; 0: the portal's default (30).
	InvitationExpiryDays *int
	// TimeZone is the club's IANA time zone (engine.CheckTimeZone).
	TimeZone *string
	// Messages changes the message settings in the same transaction, so
	// that one request changing both commits both or neither.
	Messages *message.SettingsChange
	// Retention changes the retention settings in the same transaction.
	Retention *engine.RetentionSettingsChange
}

// changesOrganisation tells whether c changes the organisation's own row
// or hostnames, not only its message or retention settings: such a change
// leaves no empty "organisation.update" in the audit log.
func (c OrganisationChange) changesOrganisation() bool {
	return c.Name != nil || c.Slug != nil || c.Hostnames != nil || c.ContactEmail != nil || c.LogoURL != nil ||
		c.AccentColour != nil || c.DefaultLanguage != nil || c.EnabledLanguages != nil || c.RegistrationSystemID != nil ||
		c.HashSecretSealed != nil || c.HashLinks != nil || c.InvitationExpiryDays != nil || c.TimeZone != nil
}

// validate checks a change and normalises its hostnames; every problem is
// named by its field.
func (c *OrganisationChange) validate() error {
	var fields []engine.FieldError
	bad := func(field, msg string) { fields = append(fields, engine.FieldError{Field: field, Message: msg}) }
	if c.Messages != nil {
		fields = append(fields, c.Messages.Validate("messages.")...)
	}
	if c.Retention != nil {
		if e, ok := engine.AsError(engine.CheckRetentionSettings(*c.Retention)); ok {
			fields = append(fields, e.Fields...)
		}
	}
	if c.Name != nil {
		if n := strings.TrimSpace(*c.Name); n == "" || len(n) > 200 {
			bad("name", "must be 1 to 200 characters")
		} else {
			*c.Name = n
		}
	}
	if c.Slug != nil && (!engine.SlugPattern.MatchString(*c.Slug) || *c.Slug == "o") {
		bad("slug", "must be 1 to 40 lower-case letters, digits and inner hyphens")
	}
	if c.Hostnames != nil {
		if len(*c.Hostnames) > engine.MaxHostnames {
			bad("hostnames", fmt.Sprintf("at most %d hostnames", engine.MaxHostnames))
		}
		var out []string
		for i, h := range *c.Hostnames {
			n := engine.NormalizeHostname(h)
			if n == "" || strings.Contains(strings.TrimSpace(h), "/") {
				bad(fmt.Sprintf("hostnames[%d]", i), "must be a hostname such as club.example.org, without scheme or path")
				continue
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		*c.Hostnames = out
	}
	if c.ContactEmail != nil && *c.ContactEmail != "" {
		if a, err := mail.ParseAddress(*c.ContactEmail); err != nil || a.Address != *c.ContactEmail {
			bad("contactEmail", "must be an e-mail address such as office@club.example.org")
		}
	}
	if c.LogoURL != nil && *c.LogoURL != "" {
		if u, err := url.Parse(*c.LogoURL); err != nil || u.Scheme != "https" || u.Host == "" || len(*c.LogoURL) > 2000 {
			bad("logoUrl", "must be an https address")
		}
	}
	if c.AccentColour != nil && *c.AccentColour != "" {
		if !engine.ColourPattern.MatchString(*c.AccentColour) {
			bad("accentColour", "must be a colour as #rrggbb")
		} else {
			*c.AccentColour = strings.ToLower(*c.AccentColour)
		}
	}
	if c.DefaultLanguage != nil && !engine.LanguagePattern.MatchString(*c.DefaultLanguage) {
		bad("defaultLanguage", "must be a language tag such as en or de-CH")
	}
	if c.EnabledLanguages != nil {
		if problem := engine.CheckLanguages(*c.EnabledLanguages); problem != "" {
			bad("enabledLanguages", problem)
		}
	}
	if c.InvitationExpiryDays != nil && (*c.InvitationExpiryDays < 0 || *c.InvitationExpiryDays > maxInvitationDays()) {
		bad("invitationExpiryDays", fmt.Sprintf("must be a number of days from 1 to %d, or 0 for the default (30)", maxInvitationDays()))
	}
	if c.TimeZone != nil {
		*c.TimeZone = strings.TrimSpace(*c.TimeZone)
		if problem := engine.CheckTimeZone(*c.TimeZone); problem != "" {
			bad("timeZone", problem)
		}
	}
	if c.RegistrationSystemID != nil && !engine.Printable(*c.RegistrationSystemID, 100) {
		bad("registrationSystemId", "must be at most 100 printable characters")
	}
	if len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "Some settings are not valid.", Fields: fields}
	}
	return nil
}

// CreateOrganisation adds an organisation; name and slug are required.
func (s *Service) CreateOrganisation(ctx context.Context, c OrganisationChange) (org *engine.Organisation, err error) {
	return s.CreateOrganisationBy(ctx, nil, c)
}

// CreateOrganisationBy is CreateOrganisation, audited in its transaction
// (organisation.create, in the new organisation's log) when actor is set:
// `portal orgs create`.
func (s *Service) CreateOrganisationBy(ctx context.Context, actor *engine.Actor, c OrganisationChange) (org *engine.Organisation, err error) {
	if c.Name == nil || c.Slug == nil {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "An organisation needs a name and a slug.",
			Fields: []engine.FieldError{{Field: "name", Message: "is required"}, {Field: "slug", Message: "is required"}}}
	}
	if c.DefaultLanguage == nil {
		c.DefaultLanguage = new("en")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		o := &engine.Organisation{Name: *c.Name, Slug: *c.Slug, TimeZone: engine.DefaultTimeZone}
		if _, err := tx.NewInsert().Model(o).Exec(ctx); err != nil {
			return orgConflictOr(err)
		}
		if err := applyOrganisationChange(ctx, tx, o.ID, c); err != nil {
			return err
		}
		if org, err = engine.LoadOrganisation(ctx, tx, o.ID); err != nil || actor == nil {
			return err
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: o.ID, Action: "organisation.create", TargetType: "organisation",
			TargetID: fmt.Sprint(o.ID), After: organisationAuditView(org)})
	})
	return org, err
}

// UpdateOrganisation applies a change to an organisation, in one
// transaction: a hostname or slug taken by another organisation is a
// conflict and changes nothing.
func (s *Service) UpdateOrganisation(ctx context.Context, id int64, c OrganisationChange) (org *engine.Organisation, err error) {
	return s.UpdateOrganisationBy(ctx, nil, id, c)
}

// UpdateOrganisationBy is UpdateOrganisation, audited in its transaction
// when actor is set (the staff pages).
func (s *Service) UpdateOrganisationBy(ctx context.Context, actor *engine.Actor, id int64, c OrganisationChange) (org *engine.Organisation, err error) {
	if !engine.InScope(ctx, id) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		before, err := engine.LoadOrganisation(ctx, tx, id)
		if err != nil {
			return err
		}
		if c.Messages != nil {
			if _, err := message.Of(s.Service).StoreMessageSettings(ctx, tx, actor, id, *c.Messages); err != nil {
				return err
			}
		}
		if c.Retention != nil {
			if _, err := s.StoreRetentionSettings(ctx, tx, actor, id, *c.Retention); err != nil {
				return err
			}
		}
		if err := applyOrganisationChange(ctx, tx, id, c); err != nil {
			return err
		}
		if org, err = engine.LoadOrganisation(ctx, tx, id); err != nil {
			return err
		}
		if c.DefaultLanguage != nil || c.EnabledLanguages != nil {
			if err := checkDefaultEnabled(org); err != nil {
				return err
			}
		}
		if actor == nil || !c.changesOrganisation() {
			return nil
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: id, Action: "organisation.update", TargetType: "organisation",
			TargetID: fmt.Sprint(id), Before: organisationAuditView(before), After: organisationAuditView(org)})
	})
	return org, err
}

// checkDefaultEnabled refuses an organisation whose default language (or
// its primary subtag: de for de-CH) is not one it offers: members would
// land in a language they cannot choose.
func checkDefaultEnabled(o *engine.Organisation) error {
	enabled := o.EnabledLanguageList()
	base, _, _ := strings.Cut(o.DefaultLanguage, "-")
	if slices.Contains(enabled, base) {
		return nil
	}
	return &engine.Error{Code: engine.CodeValidation, Message: "Some settings are not valid.", Fields: []engine.FieldError{{Field: "defaultLanguage",
		Message: "must be one of the enabled languages (" + strings.Join(enabled, ", ") + ")"}}}
}

// organisationAuditView is what the audit log keeps of an organisation's
// settings: its secret only as a fingerprint (secretAuditValue).
func organisationAuditView(o *engine.Organisation) map[string]any {
	return map[string]any{"name": o.Name, "slug": o.Slug, "contactEmail": o.ContactEmail, "logoUrl": o.LogoURL,
		"accentColour": o.AccentColour, "defaultLanguage": o.DefaultLanguage, "enabledLanguages": o.EnabledLanguageList(),
		"hashSecret": engine.SecretAuditValue(o.HashSecretSealed), "hashLinks": !o.HashLinksOff, "invitationExpiryDays": o.InvitationExpiryDays, "timeZone": o.TimeZone}
}

func applyOrganisationChange(ctx context.Context, tx bun.Tx, id int64, c OrganisationChange) error {
	q := tx.NewUpdate().Model((*engine.Organisation)(nil)).Where("id = ?", id)
	set := 0
	if c.EnabledLanguages != nil {
		q = q.Set("enabled_languages = ?", strings.Join(*c.EnabledLanguages, ","))
		set++
	}
	if c.HashLinks != nil {
		q = q.Set("hash_links_off = ?", !*c.HashLinks)
		set++
	}
	if c.InvitationExpiryDays != nil {
		q = q.Set("invitation_expiry_days = ?", *c.InvitationExpiryDays)
		set++
	}
	for _, col := range []struct {
		name string
		v    *string
	}{{"name", c.Name}, {"slug", c.Slug}, {"contact_email", c.ContactEmail}, {"logo_url", c.LogoURL},
		{"accent_colour", c.AccentColour}, {"default_language", c.DefaultLanguage},
		{"registration_system_id", c.RegistrationSystemID}, {"hash_secret_sealed", c.HashSecretSealed}, {"time_zone", c.TimeZone}} {
		if col.v != nil {
			q = q.Set("? = ?", bun.Ident(col.name), *col.v)
			set++
		}
	}
	if set > 0 {
		if _, err := q.Exec(ctx); err != nil {
			return orgConflictOr(err)
		}
	}
	if c.Hostnames == nil {
		return nil
	}
	if _, err := tx.NewDelete().Model((*engine.OrganisationHost)(nil)).Where("organisation_id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("clear hostnames: %w", err)
	}
	if len(*c.Hostnames) == 0 {
		return nil
	}
	rows := make([]engine.OrganisationHost, 0, len(*c.Hostnames))
	for _, h := range *c.Hostnames {
		rows = append(rows, engine.OrganisationHost{Hostname: h, OrganisationID: id})
	}
	if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
		if store.IsUniqueViolation(err) {
			return &engine.Error{Code: engine.CodeConflict, Message: "A hostname is already used by another organisation.",
				Fields: []engine.FieldError{{Field: "hostnames", Message: "already used by another organisation"}}, Err: err}
		}
		return fmt.Errorf("store hostnames: %w", err)
	}
	return nil
}

func orgConflictOr(err error) error {
	if store.IsUniqueViolation(err) {
		return &engine.Error{Code: engine.CodeConflict, Message: "The slug is already used by another organisation.",
			Fields: []engine.FieldError{{Field: "slug", Message: "already used by another organisation"}}, Err: err}
	}
	return fmt.Errorf("store organisation: %w", err)
}

// maxInvitationDays is the longest invitation expiry in whole days.
func maxInvitationDays() int { return int(engine.MaxInvitationExpiry / (24 * time.Hour)) }
