package staff

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine/organisation"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The API keys section of the setup (administrators): the organisation's
// admin API keys, a new one shown once, revoking one after asking. Both
// changes are audited (engine.StaffCreateAPIKey, StaffRevokeAPIKey).

// flashKeyRevoked is the result message of a revoked key.
const flashKeyRevoked = "api-key-revoked"

func init() {
	staffpage.StaffFlashes[flashKeyRevoked] = func(c echo.Context) string { return staffSetupSectionTextIn(c).KeyRevokedDone }
}

// loadSetupAPIKeys fills the API keys section.
func (s *Server) loadSetupAPIKeys(c echo.Context, m *staffview.SetupModel) error {
	keys, err := organisation.Of(s.engine).APIKeys(c.Request().Context(), staffpage.StaffUserOf(c).OrganisationID)
	if err != nil {
		return err
	}
	t := staffSetupSectionTextIn(c)
	base := staffpage.RequestOf(c).StaffPath(server.StaffSetupPath + "/" + setupAPIKeys)
	m.KeyForm = staffview.APIKeyForm{Action: base, Scope: string(organisation.ScopeRead)}
	for _, k := range keys {
		id := strconv.FormatInt(k.ID, 10)
		row := staffview.APIKeyRow{ID: id, Name: k.Name, Prefix: k.Prefix, Scope: t.KeyScopeRead, Created: staffpage.StaffDateTime(c, k.CreatedAt),
			LastUsed: t.KeyNever, Revoked: k.RevokedAt != nil, RevokeURL: base + "/" + id + "/revoke"}
		if k.Scope == organisation.ScopeWrite {
			row.Scope = t.KeyScopeWrite
		}
		if k.LastUsedAt != nil {
			row.LastUsed = staffpage.StaffDateTime(c, *k.LastUsedAt)
		}
		m.APIKeys = append(m.APIKeys, row)
	}
	return nil
}

// staffCreateAPIKey answers POST /staff/setup/api-keys: the new key is
// shown on the answer itself, once (no redirect: it is never stored in
// clear), and the answer is not cached.
func (s *Server) staffCreateAPIKey(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	name, scope := c.FormValue("name"), c.FormValue("scope")
	key, _, err := organisation.Of(s.engine).StaffCreateAPIKey(c.Request().Context(), u.Actor(), u.OrganisationID, name, organisation.APIKeyScope(scope))
	if err != nil {
		return s.staffSetupProblem(c, setupAPIKeys, err, func(m *staffview.SetupModel, errs map[string]string) {
			m.KeyForm.Name, m.KeyForm.Scope, m.KeyForm.Errors = name, scope, errs
		})
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderSetup(c, setupAPIKeys, http.StatusOK, func(m *staffview.SetupModel) { m.NewKey = key })
}

// staffRevokeAPIKey answers POST /staff/setup/api-keys/{id}/revoke,
// after asking.
func (s *Server) staffRevokeAPIKey(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, proceed, err := s.StaffConfirmedID(c, staffSetupSectionTextIn(c).KeyRevokeQuestion, staffSetupSectionTextIn(c).KeyRevokeDetail,
		setupURL(c, setupAPIKeys))
	if !proceed {
		return err
	}
	if err := organisation.Of(s.engine).StaffRevokeAPIKey(c.Request().Context(), u.Actor(), u.OrganisationID, id); err != nil {
		return s.staffSetupProblem(c, setupAPIKeys, err, nil)
	}
	return staffSetupDone(c, setupAPIKeys, flashKeyRevoked)
}
