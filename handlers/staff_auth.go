package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/views"
)

// Staff sign-in. Staff sign in with the portal's OIDC settings, through a
// callback of their own (StaffCallbackPath) and into a session of their
// own: another cookie (StaffCookieName), a shorter idle time, bound to the
// organisation the sign-in began in. A member's session is never read on
// /staff, and a staff session is never a member's: the two managers share
// the store but not the cookie, and a staff session carries
// attrStaffOrganisation, which the staff check requires.

// Staff routes of the sign-in.
const (
	// StaffPrefix starts every staff page.
	StaffPrefix = "/staff"
	// StaffLoginPath starts a staff sign-in: GET /staff/login?rd=/staff/...
	StaffLoginPath = StaffPrefix + "/login"
	// StaffCallbackPath is where the IdP returns to after a staff sign-in.
	StaffCallbackPath = StaffPrefix + "/auth/callback"
	// StaffLogoutPath ends the staff session: POST /staff/logout.
	StaffLogoutPath = StaffPrefix + "/logout"
	// StaffCookieName names the staff session cookie.
	StaffCookieName = "portal_staff"
)

// Staff session attributes.
const (
	attrStaffOrganisation = "STAFF_ORGANISATION_ID"
	attrStaffID           = "STAFF_ID"   // the staff record; "" for a role from the IdP's claim
	attrStaffRole         = "STAFF_ROLE" // the claim's role; a record's role is read from the record on each request
	attrStaffName         = "STAFF_NAME"
	attrStaffEmail        = "STAFF_EMAIL"
)

// StaffDeps is what the staff pages need beyond the rest of the server.
// Its zero value leaves staff sign-in off (the pages then say so).
type StaffDeps struct {
	// Provider is the IdP, with StaffCallbackPath as its redirect address.
	Provider *oidc.Provider
	// Attempts keeps staff sign-in attempts, scoped to StaffCallbackPath.
	Attempts *oidc.AttemptCookies
	// Sessions issues the staff session cookie (StaffCookieName).
	Sessions *session.Manager
	// RoleClaim names an ID token claim (a string or a list of strings,
	// e.g. "groups") whose values RoleMap maps to a role granted without
	// a staff record; "" grants none.
	RoleClaim string
	// RoleMap maps a claim value to a role, for every organisation or
	// (StaffRoleGrant.Organisation) for one.
	RoleMap []StaffRoleGrant
	// BaseURL is PORTAL_BASE_URL: the callback is on it, except for a
	// club on a hostname of its own, whose callback is on that host.
	BaseURL string
}

// StaffRoleGrant maps one value of the role claim to a role.
type StaffRoleGrant struct {
	// Organisation is the slug the grant is limited to; "" for all.
	Organisation string
	Value        string
	Role         staff.StaffRole
}

// ParseStaffRoleMap reads PORTAL_STAFF_ROLE_MAP: comma-separated
// "value=role" or "slug:value=role" entries, e.g.
// "club-admins=admin,north:treasurers=treasurer".
func ParseStaffRoleMap(s string) ([]StaffRoleGrant, error) {
	var out []StaffRoleGrant
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		value, role, ok := strings.Cut(part, "=")
		r, valid := staff.ParseStaffRole(role)
		if !ok || !valid || strings.TrimSpace(value) == "" {
			return nil, errors.New(`want entries like "club-admins=admin" or "slug:treasurers=treasurer"`)
		}
		g := StaffRoleGrant{Value: strings.TrimSpace(value), Role: r}
		if org, v, ok := strings.Cut(g.Value, ":"); ok {
			g.Organisation, g.Value = strings.TrimSpace(org), strings.TrimSpace(v)
		}
		out = append(out, g)
	}
	return out, nil
}

// staffUser is the signed-in staff member of a request.
type staffUser struct {
	OrganisationID int64
	StaffID        *int64 // nil: a role from the IdP's claim
	Name, Email    string
	Role           staff.StaffRole
}

// actor is how the audit log names u.
func (u *staffUser) actor() engine.Actor {
	return engine.Actor{StaffID: u.StaffID, Name: u.Email}
}

type staffUserKey struct{}

// staffUserOf returns the request's staff member; nil outside the staff check.
func staffUserOf(c echo.Context) *staffUser {
	u, _ := c.Request().Context().Value(staffUserKey{}).(*staffUser)
	return u
}

// staffLogin answers GET /staff/login?rd=/staff/...: it starts a sign-in
// at the IdP for the request's organisation.
func (s *Server) staffLogin(c echo.Context) error {
	d := s.staff
	if d.Provider == nil {
		return s.staffErrorPage(c, http.StatusServiceUnavailable, staffTextIn(c).SignInOff)
	}
	t := organisationOfRequest(c)
	if t == nil {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NoOrganisation)
	}
	rd := c.QueryParam("rd")
	if p, ok := oidc.SafeReturnPath(rd); !ok || !strings.HasPrefix(p, StaffPrefix) {
		rd = StaffPrefix
	}
	w, r := c.Response(), c.Request()
	a := oidc.NewAttempt(organisationPath(c, rd), d.Sessions.Now())
	a.Organisation, a.RedirectURL = t.ID, s.staffCallbackURL(c, t)
	u, err := d.Provider.AuthCodeURL(r.Context(), a)
	if err != nil {
		s.logFor(c).Warn("staff sign-in: identity provider unavailable", "err", err)
		return s.staffErrorPage(c, http.StatusBadGateway, staffTextIn(c).IdPUnavailable)
	}
	if err := d.Attempts.Set(w, r, a); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, u)
}

// staffCallbackURL is where the IdP returns a staff sign-in begun on c:
// on the host the sign-in began on when that is the club's own hostname
// (its cookies live there), else on PORTAL_BASE_URL. The IdP must know
// each of these addresses.
func (s *Server) staffCallbackURL(c echo.Context, t *knownOrganisation) string {
	base := strings.TrimRight(s.staff.BaseURL, "/")
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "" // the provider's own
	}
	host := c.Request().Host
	if s.organisations.hostOf(host, t.ID) && engine.NormalizeHostname(host) != engine.NormalizeHostname(u.Host) {
		return u.Scheme + "://" + host + StaffCallbackPath
	}
	return base + StaffCallbackPath
}

// staffClaims are the ID token claims a staff sign-in reads.
type staffClaims struct {
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"` // some IdPs send "true"
	Name          string `json:"name"`
	Username      string `json:"preferred_username"`
}

func (c staffClaims) verified() bool {
	switch v := c.EmailVerified.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

// emailState names, for the log, whether the email claim came: "present"
// or "missing" (never the address).
func (c staffClaims) emailState() string {
	if c.Email == "" {
		return "missing"
	}
	return "present"
}

// verifiedState names, for the log, what email_verified said: "true",
// "false" or "missing".
func (c staffClaims) verifiedState() string {
	if c.EmailVerified == nil {
		return "missing"
	}
	if c.verified() {
		return "true"
	}
	return "false"
}

// roleClaimState names, for the log, what the role claim did: "not
// configured", "missing", "no mapped value" or "granted".
func (s *Server) roleClaimState(orgID int64, raw json.RawMessage) string {
	d := s.staff
	if d.RoleClaim == "" || len(d.RoleMap) == 0 {
		return "not configured"
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil || all[d.RoleClaim] == nil {
		return "missing"
	}
	if !s.claimRole(orgID, raw).Valid() {
		return "no mapped value"
	}
	return "granted"
}

// staffCallback answers GET /staff/auth/callback: it finishes the sign-in,
// finds the staff record (or a role from the claim) and starts a staff
// session bound to the organisation the sign-in began in.
func (s *Server) staffCallback(c echo.Context) error {
	d := s.staff
	if d.Provider == nil {
		return echo.ErrNotFound
	}
	w, r := c.Response(), c.Request()
	w.Header().Set("Cache-Control", "no-store")
	log := s.logFor(c)
	q := r.URL.Query()
	a, err := d.Attempts.Take(w, r, q.Get("state"), d.Sessions.Now())
	if t := organisationOfRequest(c); err == nil && t != nil && t.ID != a.Organisation {
		err = errors.New("the callback arrived on another organisation's address")
	}
	if err != nil || a.Organisation == 0 {
		log.Info("staff sign-in: callback without a matching attempt", "err", err)
		return s.staffErrorPage(c, http.StatusBadRequest, staffTextIn(c).SignInExpired)
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		return s.staffErrorPage(c, http.StatusUnauthorized, staffTextIn(c).SignInCancelled)
	}
	tokens, err := d.Provider.Redeem(r.Context(), q.Get("code"), a)
	switch {
	case errors.Is(err, oidc.ErrProviderUnavailable):
		log.Warn("staff sign-in: identity provider unavailable", "err", err)
		return s.staffErrorPage(c, http.StatusBadGateway, staffTextIn(c).IdPUnavailable)
	case err != nil:
		log.Warn("staff sign-in: token not accepted", "err", err)
		return s.staffErrorPage(c, http.StatusUnauthorized, staffTextIn(c).SignInFailed)
	}
	// Providers may send email and email_verified (and the role claim) only
	// from the userinfo endpoint (OpenID Connect Core 5.4): ask it for what
	// the ID token lacks.
	want := []string{"email", "email_verified"}
	if d.RoleClaim != "" {
		want = append(want, d.RoleClaim)
	}
	switch err := d.Provider.CompleteClaims(r.Context(), tokens, want...); {
	case errors.Is(err, oidc.ErrUserInfoMismatch):
		// Its values must not be used (OpenID Connect Core 5.3.2); the
		// ID token's alone decide, which may well be enough.
		log.Warn("staff sign-in: userinfo ignored: it names another subject (or none)", "subject", tokens.Subject)
	case errors.Is(err, oidc.ErrProviderUnavailable):
		log.Warn("staff sign-in: identity provider's userinfo unavailable", "err", err)
		return s.staffErrorPage(c, http.StatusBadGateway, staffTextIn(c).IdPUnavailable)
	case err != nil:
		log.Warn("staff sign-in: claims not accepted", "subject", tokens.Subject, "err", err)
		return s.staffErrorPage(c, http.StatusUnauthorized, staffTextIn(c).SignInFailed)
	}
	var claims staffClaims
	_ = json.Unmarshal(tokens.Claims, &claims) // verified JSON; a claim of another type is simply absent
	user, err := s.staffIdentity(r.Context(), a.Organisation, tokens, claims)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeUnauthorized {
			// Why, by claim and record state, never by address: the subject
			// is the one personal datum the log keeps.
			log.Info("staff sign-in refused", "organisation", a.Organisation, "subject", tokens.Subject,
				"reason", staff.StaffRefusalReason(err), "email_claim", claims.emailState(),
				"email_verified_claim", claims.verifiedState(), "role_claim", s.roleClaimState(a.Organisation, tokens.Claims))
			return s.staffErrorPage(c, http.StatusForbidden, staffTextIn(c).NotStaff)
		}
		return err
	}
	values := map[string]string{
		attrStaffOrganisation: strconv.FormatInt(user.OrganisationID, 10),
		attrStaffName:         user.Name,
		attrStaffEmail:        user.Email,
		oidc.AttrSubject:      tokens.Subject,
		oidc.AttrIDToken:      tokens.IDToken,
	}
	if user.StaffID != nil {
		values[attrStaffID] = strconv.FormatInt(*user.StaffID, 10)
	} else {
		values[attrStaffRole] = string(user.Role)
	}
	if _, err := d.Sessions.Start(r.Context(), w, r, "", values); err != nil {
		return err
	}
	log.Info("staff signed in", "organisation", user.OrganisationID, "role", user.Role)
	// The IdP's redirect was a cross-site navigation, on which the
	// SameSite=Strict cookie just set would not come along with a plain
	// redirect: a page of this site carries the browser on.
	return render(c, http.StatusOK, views.ContinuePage(views.ContinueModel{Chrome: s.chrome(staffTextIn(c).Continue), URL: a.ReturnTo}))
}

// staffIdentity decides who signed in: the staff record (by subject, or
// by verified e-mail at the first sign-in), else a role the claim grants.
func (s *Server) staffIdentity(ctx context.Context, orgID int64, tokens *oidc.Tokens, claims staffClaims) (*staffUser, error) {
	m, err := staff.Of(s.engine).StaffSignIn(ctx, orgID, staff.StaffIdentity{Subject: tokens.Subject, Email: claims.Email,
		EmailVerified: claims.verified(), Name: claims.Name})
	if err == nil {
		id := m.ID
		return &staffUser{OrganisationID: orgID, StaffID: &id, Name: m.Name, Email: m.Email, Role: m.Role}, nil
	}
	if engine.ErrorCode(err) != engine.CodeUnauthorized || errors.Is(err, staff.ErrStaffDisabled) {
		return nil, err // a disabled record is refused whatever the claims say
	}
	role := s.claimRole(orgID, tokens.Claims)
	if !role.Valid() {
		return nil, err
	}
	name := cmpOr(claims.Name, claims.Username, claims.Email, tokens.Subject)
	return &staffUser{OrganisationID: orgID, Name: name, Email: cmpOr(claims.Email, tokens.Subject), Role: role}, nil
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// claimRole is the highest role the configured claim grants in the
// organisation orgID; "" for none.
func (s *Server) claimRole(orgID int64, raw json.RawMessage) staff.StaffRole {
	d := s.staff
	if d.RoleClaim == "" || len(d.RoleMap) == 0 {
		return ""
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		return ""
	}
	var values []string
	if json.Unmarshal(all[d.RoleClaim], &values) != nil {
		var one string
		if json.Unmarshal(all[d.RoleClaim], &one) != nil {
			return ""
		}
		values = []string{one}
	}
	slug := ""
	if t := s.organisations.byIDOrNil(orgID); t != nil {
		slug = t.Slug
	}
	var best staff.StaffRole
	for _, g := range d.RoleMap {
		if g.Organisation != "" && g.Organisation != slug {
			continue
		}
		for _, v := range values {
			if v == g.Value && (!best.Valid() || g.Role.AtLeast(best)) {
				best = g.Role
			}
		}
	}
	return best
}

// staffLogout answers POST /staff/logout: it ends the staff session and
// goes back to the sign-in.
func (s *Server) staffLogout(c echo.Context) error {
	if s.staff.Sessions != nil {
		if err := s.staff.Sessions.End(c.Request().Context(), c.Response(), c.Request()); err != nil {
			s.logFor(c).Warn("staff sign-out: session store unavailable", "err", err)
		}
	}
	return c.Redirect(http.StatusSeeOther, organisationPath(c, StaffLoginPath+"?signed_out=1"))
}

// currentStaff resolves the request's staff session to a staff member of
// the request's organisation, or nil when there is none: no staff cookie,
// an expired session, a session of another organisation (or a member's,
// which has no staff organisation), or a record disabled since.
func (s *Server) currentStaff(c echo.Context) (*staffUser, error) {
	d := s.staff
	t := organisationOfRequest(c)
	if d.Sessions == nil || t == nil {
		return nil, nil
	}
	r := c.Request()
	sess, err := d.Sessions.Get(r.Context(), r)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if sess.Values[attrStaffOrganisation] != strconv.FormatInt(t.ID, 10) {
		return nil, nil
	}
	u := &staffUser{OrganisationID: t.ID, Name: sess.Values[attrStaffName], Email: sess.Values[attrStaffEmail]}
	if raw := sess.Values[attrStaffID]; raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, nil
		}
		m, err := staff.Of(s.engine).StaffByID(r.Context(), t.ID, id)
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !m.Active() {
			return nil, nil
		}
		u.StaffID, u.Name, u.Email, u.Role = &m.ID, m.Name, m.Email, m.Role
		return u, nil
	}
	u.Role = staff.StaffRole(sess.Values[attrStaffRole])
	if !u.Role.Valid() {
		return nil, nil
	}
	return u, nil
}

// requireStaff is the one check in front of every staff route: a staff
// member of this organisation with at least the route's role. Without a
// staff session a page load goes to the sign-in and anything else gets a
// 401; a staff member below the role gets a 403. Only then is a form
// body read (checkFormText): nobody's upload is parsed before it.
func (s *Server) requireStaff(min staff.StaffRole, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		u, err := s.currentStaff(c)
		if err != nil {
			return err
		}
		r := c.Request()
		if u == nil {
			if r.Method == http.MethodGet && r.Header.Get("HX-Request") == "" {
				return c.Redirect(http.StatusSeeOther, organisationPath(c, StaffLoginPath+"?rd="+url.QueryEscape(r.URL.RequestURI())))
			}
			return s.staffErrorPage(c, http.StatusUnauthorized, staffTextIn(c).SignInRequired)
		}
		if !u.Role.AtLeast(min) {
			return s.staffErrorPage(c, http.StatusForbidden, staffTextIn(c).Forbidden)
		}
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), staffUserKey{}, u)))
		if !isStaffUpload(r) { // an upload's form is read by staffUpload, under its own limit
			if err := checkFormText(c.Request()); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// hostOf reports whether host is a hostname of the organisation orgID.
func (d *organisationDirectory) hostOf(host string, orgID int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.byHost[engine.NormalizeHostname(host)]
	return t != nil && t.ID == orgID
}

// byIDOrNil returns the organisation with this id from the resolver's
// copy, nil when it has none (yet).
func (d *organisationDirectory) byIDOrNil(id int64) *knownOrganisation {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byID[id]
}
