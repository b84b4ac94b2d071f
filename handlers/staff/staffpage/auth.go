package staffpage

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
	"portal/handlers/server"
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

// Staff session attributes.
const (
	attrStaffOrganisation = "STAFF_ORGANISATION_ID"
	attrStaffID           = "STAFF_ID"   // the staff record; "" for a role from the IdP's claim
	attrStaffRole         = "STAFF_ROLE" // the claim's role; a record's role is read from the record on each request
	attrStaffName         = "STAFF_NAME"
	attrStaffEmail        = "STAFF_EMAIL"
)

// StaffUser is the signed-in staff member of a request.
type StaffUser struct {
	OrganisationID int64
	StaffID        *int64 // nil: a role from the IdP's claim
	Name, Email    string
	Role           staff.StaffRole
}

// Actor is how the audit log names u.
func (u *StaffUser) Actor() engine.Actor {
	return engine.Actor{StaffID: u.StaffID, Name: u.Email}
}

// StaffLogin answers GET /staff/login?rd=/staff/...: it starts a sign-in
// at the IdP for the request's organisation.
func (s *Server) StaffLogin(c echo.Context) error {
	d := s.Staff
	if d.Provider == nil {
		return s.StaffErrorPage(c, http.StatusServiceUnavailable, StaffTextIn(c).SignInOff)
	}
	t := server.OrganisationOfRequest(c)
	if t == nil {
		return s.StaffErrorPage(c, http.StatusNotFound, StaffTextIn(c).NoOrganisation)
	}
	rd := c.QueryParam("rd")
	if p, ok := oidc.SafeReturnPath(rd); !ok || !strings.HasPrefix(p, server.StaffPrefix) {
		rd = server.StaffPrefix
	}
	w, r := c.Response(), c.Request()
	a := oidc.NewAttempt(server.OrganisationPath(c, rd), d.Sessions.Now())
	a.Organisation, a.RedirectURL = t.ID, s.staffCallbackURL(c, t)
	u, err := d.Provider.AuthCodeURL(r.Context(), a)
	if err != nil {
		s.LogFor(c).Warn("staff sign-in: identity provider unavailable", "err", err)
		return s.StaffErrorPage(c, http.StatusBadGateway, StaffTextIn(c).IdPUnavailable)
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
func (s *Server) staffCallbackURL(c echo.Context, t *server.Organisation) string {
	base := strings.TrimRight(s.Staff.BaseURL, "/")
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "" // the provider's own
	}
	host := c.Request().Host
	if s.Organisations().HostOf(host, t.ID) && engine.NormalizeHostname(host) != engine.NormalizeHostname(u.Host) {
		return u.Scheme + "://" + host + server.StaffCallbackPath
	}
	return base + server.StaffCallbackPath
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
	d := s.Staff
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

// StaffCallback answers GET /staff/auth/callback: it finishes the sign-in,
// finds the staff record (or a role from the claim) and starts a staff
// session bound to the organisation the sign-in began in.
func (s *Server) StaffCallback(c echo.Context) error {
	d := s.Staff
	if d.Provider == nil {
		return echo.ErrNotFound
	}
	w, r := c.Response(), c.Request()
	w.Header().Set("Cache-Control", "no-store")
	log := s.LogFor(c)
	q := r.URL.Query()
	a, err := d.Attempts.Take(w, r, q.Get("state"), d.Sessions.Now())
	if t := server.OrganisationOfRequest(c); err == nil && t != nil && t.ID != a.Organisation {
		err = errors.New("the callback arrived on another organisation's address")
	}
	if err != nil || a.Organisation == 0 {
		log.Info("staff sign-in: callback without a matching attempt", "err", err)
		return s.StaffErrorPage(c, http.StatusBadRequest, StaffTextIn(c).SignInExpired)
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		return s.StaffErrorPage(c, http.StatusUnauthorized, StaffTextIn(c).SignInCancelled)
	}
	tokens, err := d.Provider.Redeem(r.Context(), q.Get("code"), a)
	switch {
	case errors.Is(err, oidc.ErrProviderUnavailable):
		log.Warn("staff sign-in: identity provider unavailable", "err", err)
		return s.StaffErrorPage(c, http.StatusBadGateway, StaffTextIn(c).IdPUnavailable)
	case err != nil:
		log.Warn("staff sign-in: token not accepted", "err", err)
		return s.StaffErrorPage(c, http.StatusUnauthorized, StaffTextIn(c).SignInFailed)
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
		return s.StaffErrorPage(c, http.StatusBadGateway, StaffTextIn(c).IdPUnavailable)
	case err != nil:
		log.Warn("staff sign-in: claims not accepted", "subject", tokens.Subject, "err", err)
		return s.StaffErrorPage(c, http.StatusUnauthorized, StaffTextIn(c).SignInFailed)
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
			return s.StaffErrorPage(c, http.StatusForbidden, StaffTextIn(c).NotStaff)
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
	return server.Render(c, http.StatusOK, views.ContinuePage(views.ContinueModel{Chrome: s.Chrome(StaffTextIn(c).Continue), URL: a.ReturnTo}))
}

// staffIdentity decides who signed in: the staff record (by subject, or
// by verified e-mail at the first sign-in), else a role the claim grants.
func (s *Server) staffIdentity(ctx context.Context, orgID int64, tokens *oidc.Tokens, claims staffClaims) (*StaffUser, error) {
	m, err := staff.Of(s.engine).StaffSignIn(ctx, orgID, staff.StaffIdentity{Subject: tokens.Subject, Email: claims.Email,
		EmailVerified: claims.verified(), Name: claims.Name})
	if err == nil {
		id := m.ID
		return &StaffUser{OrganisationID: orgID, StaffID: &id, Name: m.Name, Email: m.Email, Role: m.Role}, nil
	}
	if engine.ErrorCode(err) != engine.CodeUnauthorized || errors.Is(err, staff.ErrStaffDisabled) {
		return nil, err // a disabled record is refused whatever the claims say
	}
	role := s.claimRole(orgID, tokens.Claims)
	if !role.Valid() {
		return nil, err
	}
	name := cmpOr(claims.Name, claims.Username, claims.Email, tokens.Subject)
	return &StaffUser{OrganisationID: orgID, Name: name, Email: cmpOr(claims.Email, tokens.Subject), Role: role}, nil
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
	d := s.Staff
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
	if t := s.Organisations().ByIDOrNil(orgID); t != nil {
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

// StaffLogout answers POST /staff/logout: it ends the staff session and
// goes back to the sign-in.
func (s *Server) StaffLogout(c echo.Context) error {
	if s.Staff.Sessions != nil {
		if err := s.Staff.Sessions.End(c.Request().Context(), c.Response(), c.Request()); err != nil {
			s.LogFor(c).Warn("staff sign-out: session store unavailable", "err", err)
		}
	}
	return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, server.StaffLoginPath+"?signed_out=1"))
}

// CurrentStaff resolves the request's staff session to a staff member of
// the request's organisation, or nil when there is none: no staff cookie,
// an expired session, a session of another organisation (or a member's,
// which has no staff organisation), or a record disabled since.
func (s *Server) CurrentStaff(c echo.Context) (*StaffUser, error) {
	d := s.Staff
	t := server.OrganisationOfRequest(c)
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
	u := &StaffUser{OrganisationID: t.ID, Name: sess.Values[attrStaffName], Email: sess.Values[attrStaffEmail]}
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

// RequireStaff is the one check in front of every staff route: a staff
// member of this organisation with at least the route's role. Without a
// staff session a page load goes to the sign-in and anything else gets a
// 401; a staff member below the role gets a 403. Only then is a form
// body read (checkFormText): nobody's upload is parsed before it.
func (s *Server) RequireStaff(min staff.StaffRole, next echo.HandlerFunc) echo.HandlerFunc {
	return s.requireStaff(s.CurrentStaff, min, next)
}

// requireStaff is RequireStaff with the session's member of staff found
// by current.
func (s *Server) requireStaff(current func(echo.Context) (*StaffUser, error), min staff.StaffRole, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		u, err := current(c)
		if err != nil {
			return err
		}
		r := c.Request()
		if u == nil {
			if r.Method == http.MethodGet && r.Header.Get("HX-Request") == "" {
				return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, server.StaffLoginPath+"?rd="+url.QueryEscape(r.URL.RequestURI())))
			}
			return s.StaffErrorPage(c, http.StatusUnauthorized, StaffTextIn(c).SignInRequired)
		}
		if !u.Role.AtLeast(min) {
			return s.StaffErrorPage(c, http.StatusForbidden, StaffTextIn(c).Forbidden)
		}
		WithUser(c, u)         // the request's staff context, computed once for the handler, its page and its errors
		if !IsStaffUpload(r) { // an upload's form is read by staffUpload, under its own limit
			if err := server.CheckFormText(c.Request()); err != nil {
				return err
			}
		}
		return next(c)
	}
}
