package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/relay/session"
	"portal/views"
)

// Organisation resolution. Every request is resolved to one organisation before
// routing: by the path prefix /o/{slug}/... (one hostname serving many
// organisations), else by its Host among the organisations' hostnames,
// else, while exactly one organisation exists and none has a hostname, to
// that one (a single-club deployment needs no organisation settings at all).
// The prefix is taken off the path before routing, so the routes are the
// same under it; the pages put it back on every address they make
// (organisationPath).

// OrganisationPathPrefix starts the path of an organisation addressed by slug.
const OrganisationPathPrefix = "/o/"

// OrganisationRefresh is how long the resolver trusts its copy of the
// organisations before it reads them again: settings changed through the
// admin API on this instance apply at once (Refresh), those changed on
// another instance within this time.
const OrganisationRefresh = 10 * time.Second

// HashSecretPurpose is the purpose the organisations' hash secrets are
// sealed for with the session key (session.Keyring.Sealer); the command
// line and the admin API seal with it, the resolver opens.
const HashSecretPurpose = "organisation hash secret"

// HashSecretAAD binds a sealed hash secret to its organisation, so that a
// sealed value copied onto another organisation does not open.
func HashSecretAAD(orgID int64) []byte { return []byte("organisation:" + strconv.FormatInt(orgID, 10)) }

// Organisation is one organisation as the HTTP layer keeps it in memory.
type Organisation struct {
	ID    int64
	Slug  string
	Brand views.Brand
	// RegistrationSystemID goes with the hash login to the admin backend.
	RegistrationSystemID string
	// Languages are the languages the organisation offers its members.
	Languages []string
	// hashSecret is the organisation's own secret in clear, "" for the
	// environment's; secretBroken marks a sealed secret that no key opens:
	// its links are refused rather than checked against the wrong secret.
	hashSecret   string
	secretBroken bool
	// hashLinksOff: the organisation refuses the spec's hash links.
	hashLinksOff bool
}

// organisationDirectory is the resolver's copy of the organisations.
type organisationDirectory struct {
	engine  *engine.Service
	Sealer  *session.Sealer // nil: no session key, so no organisation may have a secret of its own
	log     *slog.Logger
	refresh time.Duration

	mu      sync.Mutex
	loaded  time.Time
	byHost  map[string]*Organisation
	bySlug  map[string]*Organisation
	byID    map[int64]*Organisation
	only    *Organisation // the single organisation while no hostname is configured
	none    bool          // no organisation exists: a gateway only (relay and logins), nothing to scope
	hasData bool
}

// snapshot returns the current tables, reading them again when they are
// older than OrganisationRefresh. A failed read keeps the old tables (logged):
// the database being briefly away should not take every club offline;
// with no tables at all the request fails as unavailable.
func (d *organisationDirectory) snapshot(ctx context.Context) (*organisationDirectory, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hasData && time.Since(d.loaded) < d.refresh {
		return d, nil
	}
	if err := d.reload(ctx); err != nil {
		if d.hasData {
			d.log.Warn("organisations: reload failed, keeping the previous settings", "err", err)
			d.loaded = time.Now() // retry after the next interval, not on every request
			return d, nil
		}
		return nil, err
	}
	return d, nil
}

// BySlugOf returns the organisation with slug, nil when there is none.
func (d *organisationDirectory) BySlugOf(ctx context.Context, slug string) (*Organisation, error) {
	if _, err := d.snapshot(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bySlug[slug], nil
}

// invalidate makes the next request read the organisations again.
func (d *organisationDirectory) invalidate() {
	d.mu.Lock()
	d.loaded = time.Time{}
	d.mu.Unlock()
}

func (d *organisationDirectory) reload(ctx context.Context) error {
	var orgs []engine.Organisation
	var err error
	if d.engine != nil { // without an engine (a gateway-only test server) there is nothing to resolve
		orgs, err = d.engine.Organisations(ctx)
	}
	if err != nil {
		return err
	}
	byHost, bySlug, byID := map[string]*Organisation{}, map[string]*Organisation{}, map[int64]*Organisation{}
	anyHost := false
	for _, o := range orgs {
		t := &Organisation{ID: o.ID, Slug: o.Slug, Brand: views.Brand{Name: o.Name, LogoURL: o.LogoURL,
			Accent: o.AccentColour, Contact: o.ContactEmail, Language: o.DefaultLanguage},
			RegistrationSystemID: o.RegistrationSystemID, Languages: o.EnabledLanguageList(), hashLinksOff: o.HashLinksOff}
		if o.HashSecretSealed != "" {
			secret, err := d.openSecret(o.ID, o.HashSecretSealed)
			if err != nil {
				d.log.Error("organisations: the organisation's hash secret cannot be decrypted with PORTAL_SESSION_KEY; its hash links are refused",
					"organisation", o.ID, "err", err)
				t.secretBroken = true
			}
			t.hashSecret = secret
		}
		for _, h := range o.Hostnames {
			byHost[h] = t
			anyHost = true
		}
		if o.Slug != "" {
			bySlug[o.Slug] = t
		}
		byID[o.ID] = t
	}
	d.byHost, d.bySlug, d.byID, d.only, d.none = byHost, bySlug, byID, nil, len(orgs) == 0
	if len(orgs) == 1 && !anyHost {
		d.only = byID[orgs[0].ID]
	}
	d.loaded, d.hasData = time.Now(), true
	return nil
}

func (d *organisationDirectory) openSecret(orgID int64, sealed string) (string, error) {
	if d.Sealer == nil {
		return "", errors.New("no PORTAL_SESSION_KEY")
	}
	pt, err := d.Sealer.Open(sealed, HashSecretAAD(orgID))
	return string(pt), err
}

// resolution is what resolveOrganisation found, for requireOrganisation.
type resolution struct {
	organisation *Organisation
	none         bool  // there are no organisations to resolve to
	err          error // the directory could not be read
}

type resolutionKey struct{}

// ResolveOrganisation is a pre-routing middleware: it takes /o/{slug} off the
// path (so routing sees the address without it) and notes which
// organisation the request belongs to. It refuses nothing itself: the
// refusal (requireOrganisation) runs after the request id and log middleware,
// so that it is logged like every other answer.
func (s *Server) ResolveOrganisation(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := req.Context()
		dir, err := s.organisations.snapshot(ctx)
		res := resolution{err: err}
		if err == nil {
			res.organisation, res.none = dir.resolve(req)
		}
		t := res.organisation
		ctx = context.WithValue(ctx, resolutionKey{}, res)
		if t != nil {
			ctx = engine.WithOrganisation(ctx, t.ID)
			ctx = views.WithBrand(ctx, t.Brand)
		}
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

// resolve finds the organisation of r and, for /o/{slug}/..., strips the
// prefix off r's path. An unknown slug leaves the path alone and resolves
// to nothing.
func (d *organisationDirectory) resolve(r *http.Request) (t *Organisation, none bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.none {
		return nil, true
	}
	// A hostname of its own wins: an organisation's host serves only it, so
	// /o/{other}/ on it is simply not a route.
	if t := d.byHost[engine.NormalizeHostname(r.Host)]; t != nil {
		return t, false
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, OrganisationPathPrefix); ok {
		slug, tail, _ := strings.Cut(rest, "/")
		t := d.bySlug[slug]
		if t == nil {
			return nil, false
		}
		strip := len(OrganisationPathPrefix) + len(slug)
		r.URL.Path = "/" + tail
		if r.URL.RawPath != "" && len(r.URL.RawPath) >= strip {
			r.URL.RawPath = "/" + strings.TrimPrefix(r.URL.RawPath[strip:], "/")
		}
		prefixed := *t
		prefixed.Brand = t.Brand.WithBase(OrganisationPathPrefix + t.Slug)
		return &prefixed, false
	}
	return d.only, false
}

// organisationFree says which paths answer without an organisation: probes,
// assets, metrics, the OpenAPI document, the admin API (its key names the
// organisation), the OIDC login (the identity
// provider returns to one address), the payment return (the provider
// returns to one address), the links built on PORTAL_BASE_URL for e-mails
// and cards (the stable pay link and the card check: their unguessable
// reference names the order or card), the payment provider's webhook and
// the relay to the admin backend, which decides for itself.
func (s *Server) organisationFree(p string) bool {
	switch p {
	case "/healthz", "/readyz", MetricsPath, "/api/openapi.json", LoginPath, CallbackPath, LogoutPath, PaymentReturnPath, PaymentRetryPath,
		StaffCallbackPath: // the IdP returns to one address; the sign-in attempt names the organisation
		return true
	}
	return strings.HasPrefix(p, "/static/") || strings.HasPrefix(p, TestGatewayPayPrefix) || strings.HasPrefix(p, AdminPrefix+"/") ||
		strings.HasPrefix(p, PayLinkPrefix) || strings.HasPrefix(p, VerifyPrefix) || isStripeWebhook(p) ||
		(s.Relay != nil && s.isRelayPath(p))
}

// RequireOrganisation answers a plain 404 to a request that resolved to no
// organisation (an unknown host or slug), except on organisationFree paths.
func (s *Server) RequireOrganisation(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res, _ := c.Request().Context().Value(resolutionKey{}).(resolution)
		if res.organisation != nil || res.none || s.organisationFree(c.Request().URL.Path) {
			return next(c)
		}
		if res.err != nil {
			return res.err // the organisations could not be read: 503 through the error handler
		}
		return NewAPIError(http.StatusNotFound, "No organisation is served at this address.")
	}
}

// OrganisationOfRequest returns the request's organisation, or nil on organisationFree paths
// that resolved to none.
func OrganisationOfRequest(c echo.Context) *Organisation {
	res, _ := c.Request().Context().Value(resolutionKey{}).(resolution)
	return res.organisation
}

// OrganisationPath puts the request's /o/{slug} prefix, if it came with one,
// before a path of this site.
func OrganisationPath(c echo.Context, p string) string {
	if t := OrganisationOfRequest(c); t != nil {
		return t.Brand.Base + p
	}
	return p
}

// AttrOrganisation is the session attribute that binds a session to the
// organisation it was started in: a session of one organisation is no
// session in another (session.AttrOrganisation, which the database store
// also keeps in a column of its own).
const AttrOrganisation = session.AttrOrganisation

// StartValues adds the request's organisation to the values a new session
// starts with.
func StartValues(c echo.Context, values map[string]string) map[string]string {
	t := OrganisationOfRequest(c)
	if t == nil {
		return values
	}
	out := make(map[string]string, len(values)+1)
	for k, v := range values {
		out[k] = v
	}
	out[AttrOrganisation] = strconv.FormatInt(t.ID, 10)
	return out
}

// SessionFor loads the request's session and refuses, as if there were
// none (session.ErrNotFound), one that belongs to another organisation, or
// a user-key session that belongs to none while the request has one.
func (s *Server) SessionFor(c echo.Context) (*session.Session, error) {
	req := c.Request()
	sess, err := s.sessions.Get(req.Context(), req)
	if err != nil {
		return nil, err
	}
	t := OrganisationOfRequest(c)
	if t == nil {
		return sess, nil
	}
	bound, ok := sess.Values[AttrOrganisation]
	if !ok && sess.UserKey == "" {
		return sess, nil // an OIDC session: not tied to a club (the admin backend decides)
	}
	if bound != strconv.FormatInt(t.ID, 10) {
		return nil, session.ErrNotFound
	}
	return sess, nil
}

// hashSecretFor is the secret hash links of the request's organisation
// are checked against; ok is false when its own secret cannot be opened.
func (s *Server) hashSecretFor(c echo.Context) (secret string, ok bool) {
	t := OrganisationOfRequest(c)
	switch {
	case t == nil:
		return s.hashSecret, true
	case t.secretBroken:
		return "", false
	case t.hashSecret != "":
		return t.hashSecret, true
	}
	return s.hashSecret, true
}

// RefreshOrganisations makes the next request read the organisations again, for
// a change made on this instance.
func (s *Server) RefreshOrganisations() { s.organisations.invalidate() }

// BrandStylesheet answers GET /brand.css?c=rrggbb: the organisation's
// accent colour as a CSS variable (views.Brand.stylesheet links it; the
// Content-Security-Policy allows no inline style). The colour comes from
// the settings, never from the query, which only makes a new colour a new
// address for caches.
func (s *Server) BrandStylesheet(c echo.Context) error {
	t := OrganisationOfRequest(c)
	h := c.Response().Header()
	if t == nil || t.Brand.Accent == "" {
		h.Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, "text/css; charset=utf-8", []byte("/* no accent colour */\n"))
	}
	if "#"+c.QueryParam("c") == t.Brand.Accent {
		// The address names the colour it serves: it never changes.
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	// Accent is #rrggbb, checked when it was stored (engine.OrganisationChange).
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", []byte(":root{--brand-accent:"+t.Brand.Accent+"}\n"))
}

// BoundTo reports whether sess may act for organisation orgID: it was
// started there, or (an OIDC session, or one from before there were several organisations) it is
// bound to none.
func BoundTo(sess *session.Session, orgID int64) bool {
	bound, ok := sess.Values[AttrOrganisation]
	return !ok || bound == strconv.FormatInt(orgID, 10)
}

// MinHashSecret is the shortest organisation hash secret accepted.
const MinHashSecret = 16

// HostOf reports whether host is a hostname of the organisation orgID.
func (d *organisationDirectory) HostOf(host string, orgID int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.byHost[engine.NormalizeHostname(host)]
	return t != nil && t.ID == orgID
}

// ByIDOrNil returns the organisation with this id from the resolver's
// copy, nil when it has none (yet).
func (d *organisationDirectory) ByIDOrNil(id int64) *Organisation {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byID[id]
}
