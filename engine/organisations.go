package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The portal is shared by organisations. The HTTP layer resolves every
// request to one of them (by hostname or by /o/{slug}/) and puts its id in
// the context with WithOrganisation; from then on the engine refuses
// anything of another organisation as not found, exactly as if it did not
// exist, so that counting ids reveals nothing across organisations.

type organisationKey struct{}

// WithOrganisation scopes ctx to one organisation: registrations, periods
// and process instances of other organisations are then not found. The
// scope travels in the context rather than in every method's parameters
// because it is a property of the request (like its deadline), set once at
// the front; methods called without it (the command line, the demo seed)
// see every organisation, as before there were several.
func WithOrganisation(ctx context.Context, orgID int64) context.Context {
	return context.WithValue(ctx, organisationKey{}, orgID)
}

// OrganisationOf returns the organisation ctx is scoped to, if any.
func OrganisationOf(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(organisationKey{}).(int64)
	return id, ok
}

// InScope reports whether something of orgID may be seen under ctx's scope.
func InScope(ctx context.Context, orgID int64) bool {
	scope, ok := OrganisationOf(ctx)
	return !ok || scope == orgID
}

// OrganisationHost maps one hostname to its organisation.
type OrganisationHost struct {
	bun.BaseModel  `bun:"table:organisation_hosts"`
	Hostname       string `bun:"hostname,pk"`
	OrganisationID int64  `bun:"organisation_id,notnull"`
}

// Organisations lists every organisation with its hostnames, by id: what
// the organisation resolver keeps in memory.
func (s *Service) Organisations(ctx context.Context) (orgs []Organisation, err error) {
	return ListOrganisations(ctx, s.db)
}

// Organisation loads one organisation with its hostnames.
func (s *Service) Organisation(ctx context.Context, id int64) (org *Organisation, err error) {
	return LoadOrganisation(ctx, s.db, id)
}

func ListOrganisations(ctx context.Context, db bun.IDB) ([]Organisation, error) {
	var orgs []Organisation
	if err := db.NewSelect().Model(&orgs).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load organisations: %w", err)
	}
	var hosts []OrganisationHost
	if err := db.NewSelect().Model(&hosts).Order("hostname ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load organisation hostnames: %w", err)
	}
	byID := make(map[int64]*Organisation, len(orgs))
	for i := range orgs {
		orgs[i].Hostnames = []string{}
		byID[orgs[i].ID] = &orgs[i]
	}
	for _, h := range hosts {
		if o := byID[h.OrganisationID]; o != nil {
			o.Hostnames = append(o.Hostnames, h.Hostname)
		}
	}
	return orgs, nil
}

func LoadOrganisation(ctx context.Context, db bun.IDB, id int64) (*Organisation, error) {
	org := new(Organisation)
	if err := db.NewSelect().Model(org).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, NotFoundOr(err, "organisation")
	}
	org.Hostnames = []string{}
	if err := db.NewSelect().Model((*OrganisationHost)(nil)).Column("hostname").
		Where("organisation_id = ?", id).Order("hostname ASC").Scan(ctx, &org.Hostnames); err != nil {
		return nil, fmt.Errorf("load organisation hostnames: %w", err)
	}
	return org, nil
}

var (
	SlugPattern     = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$`)
	ColourPattern   = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	LanguagePattern = regexp.MustCompile(`^[a-z]{2,3}(?:-[A-Z]{2})?$`)
	hostLabel       = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)
)

// MaxHostnames bounds the hostnames of one organisation.
const MaxHostnames = 20

// NormalizeHostname returns a hostname as the resolver compares it: lower
// case, without a port or a trailing dot, or "" when it is not a hostname
// or an IP address.
func NormalizeHostname(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if strings.HasPrefix(h, "[") { // [::1]:8080
		if end := strings.IndexByte(h, ']'); end > 0 {
			return h[:end+1]
		}
		return ""
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return ""
	}
	for _, label := range strings.Split(h, ".") {
		if !hostLabel.MatchString(label) {
			return ""
		}
	}
	return h
}

// Printable reports whether s has at most max runes, none a control character.
func Printable(s string, max int) bool {
	n := 0
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
		n++
	}
	return n <= max
}

// Invitation expiry bounds: an organisation's InvitationExpiryDays, and
// the expiry of one invitation, lie within them.
const (
	DefaultInvitationExpiry = 30 * 24 * time.Hour
	MinInvitationExpiry     = time.Hour
	MaxInvitationExpiry     = 366 * 24 * time.Hour
)

// InvitationExpiry is how long the organisation's new invitations stay
// valid: its own setting, else DefaultInvitationExpiry.
func (o *Organisation) InvitationExpiry() time.Duration {
	if o.InvitationExpiryDays > 0 {
		return time.Duration(o.InvitationExpiryDays) * 24 * time.Hour
	}
	return DefaultInvitationExpiry
}

// DefaultTimeZone is an organisation's time zone until it sets one.
const DefaultTimeZone = "Europe/Berlin"

// Location is the organisation's time zone; DefaultTimeZone when it has
// none or an unknown one (CheckTimeZone refuses those when they are set).
func (o Organisation) Location() *time.Location {
	if loc, err := time.LoadLocation(strings.TrimSpace(o.TimeZone)); err == nil && o.TimeZone != "" {
		return loc
	}
	loc, err := time.LoadLocation(DefaultTimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// CheckTimeZone says what is wrong with an IANA time zone name, "" when
// Go's time.LoadLocation knows it (cmd/portal embeds the zone database,
// so it does not depend on the host's). "Local" is refused: it is the
// server's zone, not the club's.
func CheckTimeZone(name string) string {
	if name == "" || name == "Local" || strings.TrimSpace(name) != name {
		return "must be a time zone such as Europe/Berlin"
	}
	if _, err := time.LoadLocation(name); err != nil {
		return "must be a time zone such as Europe/Berlin"
	}
	return ""
}

// OrganisationLocation is the time zone of organisation orgID (Location),
// DefaultTimeZone's for 0 (the shared account) or one it cannot read.
func OrganisationLocation(ctx context.Context, db bun.IDB, orgID int64) *time.Location {
	var o Organisation
	if orgID != 0 {
		if err := db.NewSelect().Model(&o).Column("time_zone").Where("id = ?", orgID).Scan(ctx); err != nil {
			o.TimeZone = ""
		}
	}
	return o.Location()
}
