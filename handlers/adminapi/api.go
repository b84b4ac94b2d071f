package adminapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/relay/hashlink"
)

// The admin API (/api/admin/...): what an external system or a club's
// administrator uses to set the organisation up and keep its members in
// sync. It is authenticated by API keys (Authorization: Bearer ptl_...,
// made with `portal apikeys create`), each of one organisation, whose
// scope says whether it may change things. Everything is scoped to the
// key's organisation: another organisation's resources are not found.

// MaxImportBytes bounds a person import's body: thousands of rows.
const MaxImportBytes = 16 << 20

// MaxBulkBytes bounds the bodies of the other bulk calls (invitations,
// unlinking): tens of thousands of ids, decoded as a stream, where every
// other API body is held to MaxBodyBytes.
const MaxBulkBytes = 10 << 20

type apiKeyKey struct{}

// MountAdmin adds the admin API's routes.
func (s *Server) MountAdmin(api *echo.Group) {
	s.AdminRoles = adminRoles()
	admin := api.Group("/admin", s.requireAPIKey)
	admin.GET("/organisation", s.getAdminOrganisation)
	admin.PATCH("/organisation", s.patchAdminOrganisation, server.RequireJSON)
	admin.POST("/persons/import", s.importPersons, middleware.BodyLimit(fmt.Sprint(MaxImportBytes)))
	admin.POST("/persons/unlink", s.unlinkPersons, middleware.BodyLimit(fmt.Sprint(MaxBulkBytes)), server.RequireJSON)
	admin.GET("/persons/:id/export", s.exportPersonAPI)
	admin.POST("/persons/:id/erase", s.erasePersonAPI)
	admin.GET("/membership-types", s.listMembershipTypes)
	admin.POST("/membership-types", s.createMembershipType, server.RequireJSON)
	admin.PATCH("/membership-types/:id", s.patchMembershipType, server.RequireJSON)
	admin.DELETE("/membership-types/:id", s.deleteMembershipType)
	admin.POST("/definitions", s.importDefinition)
	admin.GET("/definitions", s.listDefinitions)
	admin.GET("/definitions/:key/versions/:version", s.exportDefinitionVersion)
	admin.POST("/definitions/:key/versions/:version/activate", s.setDefinitionActive(definition.DefinitionActivate))
	admin.POST("/definitions/:key/versions/:version/deactivate", s.setDefinitionActive(definition.DefinitionDeactivate))
	admin.GET("/periods", s.listPeriods)
	admin.POST("/periods", s.createPeriod, server.RequireJSON)
	admin.PATCH("/periods/:id", s.patchPeriod, server.RequireJSON)
	admin.GET("/periods/:id/price-rules", s.listPriceRules)
	admin.PUT("/periods/:id/price-rules", s.putPriceRules, server.RequireJSON)
	s.mountAdminPayments(admin)
	s.mountAdminDebits(admin)
	admin.GET("/periods/:id/invitations", s.listInvitations)
	admin.POST("/periods/:id/invitations", s.createInvitations, middleware.BodyLimit(fmt.Sprint(MaxBulkBytes)), server.RequireJSON)
	admin.POST("/invitations/:id/revoke", s.revokeInvitation)
	admin.GET("/periods/:id/export/:kind", s.exportPeriod)
	s.mountAdminWebhooks(admin)
}

// IsBulk reports whether r is one of the admin API's bulk calls (person
// import, unlinking, invitations), whose body may be larger than the
// API's 64 KiB: their routes set limits of their own.
func IsBulk(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	p, ok := strings.CutPrefix(r.URL.Path, server.AdminPrefix+"/")
	if !ok {
		return false
	}
	if p == "persons/import" || p == "persons/unlink" {
		return true
	}
	id, ok := strings.CutPrefix(p, "periods/")
	id, ok2 := strings.CutSuffix(id, "/invitations")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// requireAPIKey authenticates an admin API request by its bearer key and
// scopes it to the key's organisation. A read key may only GET (403
// otherwise). A key used on another organisation's hostname or /o/{slug}/
// is refused like an invalid one. A request without a key may come from a
// signed-in staff member instead (staffAPIAccess).
func (s *Server) requireAPIKey(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Header.Get("Authorization") == "" {
			u, err := staffpage.Of(s.Server).CurrentStaff(c)
			if err != nil {
				return err
			}
			if u != nil {
				return s.staffAPIAccess(c, u, next)
			}
		}
		scheme, key, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="portal admin API"`)
			return server.NewAPIError(http.StatusUnauthorized, "The admin API needs an API key: Authorization: Bearer <key>.")
		}
		k, err := organisation.Of(s.engine).AuthenticateAPIKey(req.Context(), strings.TrimSpace(key))
		if err != nil {
			if engine.ErrorCode(err) == engine.CodeUnauthorized {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="portal admin API", error="invalid_token"`)
				return server.NewAPIError(http.StatusUnauthorized, "The API key is not valid (unknown or revoked).")
			}
			return err
		}
		if t := server.OrganisationOfRequest(c); t != nil && t.ID != k.OrganisationID {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="portal admin API", error="invalid_token"`)
			return server.NewAPIError(http.StatusUnauthorized, "The API key is not valid for this organisation's address.")
		}
		if !k.Allows(req.Method != http.MethodGet && req.Method != http.MethodHead) {
			return server.NewAPIError(http.StatusForbidden, "This API key may only read: changes need a key with scope write.")
		}
		ctx := engine.WithOrganisation(req.Context(), k.OrganisationID)
		ctx = context.WithValue(ctx, apiKeyKey{}, k)
		c.SetRequest(req.WithContext(ctx))
		if err := adminFormText(c); err != nil {
			return err
		}
		return next(c)
	}
}

// adminFormText checks a form body of an authenticated admin API request
// as the server checks every other form (checkFormText), once the request
// is let in. The bulk calls take JSON or CSV only, under their own limits:
// their bodies are left to the handler, which refuses a form.
func adminFormText(c echo.Context) error {
	if IsBulk(c.Request()) {
		return nil
	}
	return server.CheckFormText(c.Request())
}

// staffAPIAccess lets a signed-in staff member use the admin API of their
// organisation with their staff session (the staff cookie, checked as the
// staff pages check it, the cross-origin check included): a route needs
// the role that the staff page doing the same needs (AdminRoutes), and
// administrators only where no page does it. The audit log names the
// staff member.
func (s *Server) staffAPIAccess(c echo.Context, u *staffpage.StaffUser, next echo.HandlerFunc) error {
	req := c.Request()
	c.Response().Header().Set("Cache-Control", "no-store")
	if min := s.adminRouteRole(c); !u.Role.AtLeast(min) {
		return server.NewAPIError(http.StatusForbidden, fmt.Sprintf("This needs the staff role %s, as on the staff pages.", min))
	}
	// The role decided; the scope only says what the session may do.
	k := &organisation.APIKey{OrganisationID: u.OrganisationID, Name: "staff session of " + u.Email, Scope: organisation.ScopeWrite}
	ctx := engine.WithOrganisation(req.Context(), u.OrganisationID)
	ctx = context.WithValue(ctx, apiKeyKey{}, k)
	c.SetRequest(req.WithContext(ctx))
	staffpage.WithUser(c, u)
	if err := adminFormText(c); err != nil {
		return err
	}
	return next(c)
}

// keyOf returns the API key requireAPIKey put in the context.
func keyOf(c echo.Context) *organisation.APIKey {
	if k, ok := c.Request().Context().Value(apiKeyKey{}).(*organisation.APIKey); ok {
		return k
	}
	return &organisation.APIKey{} // organisation 0: nothing is found
}

// apiActor is who the audit log names for a change made through the admin
// API: the staff member of a staff session, or the key, by name, id and
// prefix (never the key itself).
func apiActor(c echo.Context) engine.Actor {
	if u := staffpage.StaffUserOf(c); u != nil {
		return u.Actor()
	}
	k := keyOf(c)
	return engine.Actor{Name: fmt.Sprintf("API key %s (id %d, %s…)", k.Name, k.ID, k.Prefix)}
}

// OrganisationDTO is an organisation's settings in the admin API. The hash
// secret is never returned, only whether one is set.
type OrganisationDTO struct {
	ID                   int64    `json:"id"`
	Name                 string   `json:"name"`
	Slug                 string   `json:"slug"`
	Hostnames            []string `json:"hostnames"`
	ContactEmail         string   `json:"contactEmail"`
	LogoURL              string   `json:"logoUrl"`
	AccentColour         string   `json:"accentColour"`
	DefaultLanguage      string   `json:"defaultLanguage"`
	EnabledLanguages     []string `json:"enabledLanguages"`
	RegistrationSystemID string   `json:"registrationSystemId"`
	HashSecretSet        bool     `json:"hashSecretSet"`
	// HashLinks: the spec's hash links (?u=&h=) are accepted; false once
	// the organisation sends only the portal's invitation links.
	HashLinks bool `json:"hashLinks"`
	// InvitationExpiryDays is how long new invitations stay valid (0: 30 days).
	InvitationExpiryDays int `json:"invitationExpiryDays"`
	// Messages are its message settings (api_admin_messages.go).
	Messages *MessageSettingsDTO `json:"messages,omitempty"`
	// Retention are its retention settings (api_admin_retention.go).
	Retention *RetentionSettingsDTO `json:"retention,omitempty"`
}

func organisationDTO(o *engine.Organisation) OrganisationDTO {
	return OrganisationDTO{ID: o.ID, Name: o.Name, Slug: o.Slug, Hostnames: o.Hostnames, ContactEmail: o.ContactEmail,
		LogoURL: o.LogoURL, AccentColour: o.AccentColour, DefaultLanguage: o.DefaultLanguage, EnabledLanguages: o.EnabledLanguageList(),
		RegistrationSystemID: o.RegistrationSystemID, HashSecretSet: o.HashSecretSealed != "",
		HashLinks: !o.HashLinksOff, InvitationExpiryDays: o.InvitationExpiryDays}
}

// getAdminOrganisation answers GET /api/admin/organisation.
func (s *Server) getAdminOrganisation(c echo.Context) error {
	o, err := s.engine.Organisation(c.Request().Context(), keyOf(c).OrganisationID)
	if err != nil {
		return err
	}
	dto, err := s.withMessageSettings(c.Request().Context(), organisationDTO(o))
	if err == nil {
		dto, err = s.withRetention(c.Request().Context(), dto)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, dto)
}

// OrganisationPatch is the body of PATCH /api/admin/organisation: absent
// fields stay as they are.
type OrganisationPatch struct {
	Name            *string   `json:"name"`
	Slug            *string   `json:"slug"`
	Hostnames       *[]string `json:"hostnames"`
	ContactEmail    *string   `json:"contactEmail"`
	LogoURL         *string   `json:"logoUrl"`
	AccentColour    *string   `json:"accentColour"`
	DefaultLanguage *string   `json:"defaultLanguage"`
	// EnabledLanguages are the languages offered to members: one or more of en, de, fr.
	EnabledLanguages     *[]string `json:"enabledLanguages"`
	RegistrationSystemID *string   `json:"registrationSystemId"`
	// HashSecret sets the organisation's own hash-link secret (at least 16
	// characters; "" returns to the environment's). Write-only.
	HashSecret *string `json:"hashSecret"`
	// HashLinks accepts (true) or refuses (false) the spec's hash links.
	HashLinks *bool `json:"hashLinks"`
	// InvitationExpiryDays: 1 to 366, or 0 for the default (30 days).
	InvitationExpiryDays *int `json:"invitationExpiryDays"`
	// Messages changes its message settings (api_admin_messages.go).
	Messages *MessageSettingsPatch `json:"messages"`
	// Retention changes its retention settings (api_admin_retention.go).
	Retention *RetentionSettingsPatch `json:"retention"`
}

// patchAdminOrganisation answers PATCH /api/admin/organisation: a partial
// update, message settings included, in one transaction; a taken slug or hostname is 409, invalid
// settings 422, and either changes nothing.
func (s *Server) patchAdminOrganisation(c echo.Context) error {
	var body OrganisationPatch
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	orgID := keyOf(c).OrganisationID
	if body.Hostnames != nil && s.PublicHost() != "" {
		for _, h := range *body.Hostnames {
			if engine.NormalizeHostname(h) == s.PublicHost() {
				return server.NewAPIError(http.StatusUnprocessableEntity, "Some settings are not valid.",
					server.FieldErrorBody{Field: "hostnames", Message: "the portal's own address is shared by every organisation and cannot be claimed; ask the operator"})
			}
		}
	}
	change := organisation.OrganisationChange{Name: body.Name, Slug: body.Slug, Hostnames: body.Hostnames, ContactEmail: body.ContactEmail,
		LogoURL: body.LogoURL, AccentColour: body.AccentColour, DefaultLanguage: body.DefaultLanguage, RegistrationSystemID: body.RegistrationSystemID,
		EnabledLanguages: body.EnabledLanguages, HashLinks: body.HashLinks, InvitationExpiryDays: body.InvitationExpiryDays}
	if body.HashSecret != nil {
		sealed := ""
		switch {
		case *body.HashSecret == "":
		case len(*body.HashSecret) < server.MinHashSecret || len(*body.HashSecret) > 200:
			return server.NewAPIError(http.StatusUnprocessableEntity, "Some settings are not valid.",
				server.FieldErrorBody{Field: "hashSecret", Message: fmt.Sprintf("must be %d to 200 characters", server.MinHashSecret)})
		case s.Organisations().Sealer == nil:
			return server.NewAPIError(http.StatusUnprocessableEntity, "Some settings are not valid.",
				server.FieldErrorBody{Field: "hashSecret", Message: "this server has no PORTAL_SESSION_KEY to keep it encrypted with"})
		default:
			sealed = s.Organisations().Sealer.Seal([]byte(*body.HashSecret), server.HashSecretAAD(orgID))
		}
		change.HashSecretSealed = &sealed
	}
	if body.Messages != nil {
		messages := body.Messages.change()
		change.Messages = &messages
	}
	if body.Retention != nil {
		retention := body.Retention.change()
		change.Retention = &retention
	}
	o, err := staff.Of(s.engine).StaffUpdateOrganisation(c.Request().Context(), apiActor(c), orgID, change)
	if err != nil {
		return adminError(err)
	}
	s.RefreshOrganisations()
	dto, err := s.withMessageSettings(c.Request().Context(), organisationDTO(o))
	if err == nil {
		dto, err = s.withRetention(c.Request().Context(), dto)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, dto)
}

// adminError gives the admin API's validation errors the spec's HTTP
// error body with their fields (the form API's 422 is the process error).
func adminError(err error) error {
	e, ok := engine.AsError(err)
	if !ok || e.Code != engine.CodeValidation {
		return err
	}
	fields := make([]server.FieldErrorBody, 0, len(e.Fields))
	for _, f := range e.Fields {
		fields = append(fields, server.FieldErrorBody{Field: f.Field, Message: f.Message})
	}
	return server.NewAPIError(http.StatusUnprocessableEntity, e.Message, fields...)
}

// PersonImportRequest is the JSON body of POST /api/admin/persons/import.
type PersonImportRequest struct {
	Persons []organisation.PersonRow `json:"persons"`
}

// ImportErrorBody is the 422 answer of an import with bad rows: the spec's
// HTTP error body (errors named "line N: field") plus the per-row report.
type ImportErrorBody struct {
	server.HTTPErrorBody
	Report *organisation.ImportReport `json:"report"`
}

// importPersons answers POST /api/admin/persons/import with a JSON body
// ({"persons": [...]}) or a CSV one (Content-Type text/csv, a header line,
// engine.PersonCSVColumns): an idempotent upsert keyed by externalId, in
// one transaction, answered with a report per row. Any bad row: 422 with
// every error and nothing written.
func (s *Server) importPersons(c echo.Context) error {
	req := c.Request()
	var rows []organisation.PersonRow
	switch server.MediaType(req) {
	case echo.MIMEApplicationJSON:
		var body PersonImportRequest
		if err := server.DecodeJSON(req.Body, &body); err != nil {
			return err
		}
		rows = body.Persons
	case "text/csv":
		parsed, err := organisation.ParsePersonCSV(req.Body)
		if err != nil {
			return err // a body over the limit stays echo's 413
		}
		rows = parsed
	default:
		return server.NewAPIError(http.StatusUnsupportedMediaType, "The import must be application/json or text/csv.")
	}
	if len(rows) == 0 {
		return server.NewAPIError(http.StatusBadRequest, "The import holds no persons.", server.FieldErrorBody{Field: "persons", Message: "at least one person is required"})
	}
	actor := apiActor(c)
	rep, err := organisation.Of(s.engine).StaffImportPersons(req.Context(), keyOf(c).OrganisationID, rows, hashlink.ValidUserKey, organisation.PersonImportOptions{Actor: &actor})
	if err != nil {
		if e, ok := engine.AsError(err); ok && e.Code == engine.CodeValidation && rep != nil {
			body := ImportErrorBody{HTTPErrorBody: server.HTTPErrorBody{Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
				Status: http.StatusUnprocessableEntity, Error: http.StatusText(http.StatusUnprocessableEntity),
				Message: e.Message, Path: req.URL.Path, Errors: []server.FieldErrorBody{}}, Report: rep}
			for _, r := range rep.Rows {
				for _, f := range r.Errors {
					body.Errors = append(body.Errors, server.FieldErrorBody{Field: fmt.Sprintf("line %d: %s", r.Line, f.Field), Message: f.Message})
				}
			}
			return c.JSON(http.StatusUnprocessableEntity, body)
		}
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// PersonUnlinkRequest is the body of POST /api/admin/persons/unlink.
type PersonUnlinkRequest struct {
	Links []organisation.PersonLink `json:"links"`
}

// UnlinkResult answers an unlink.
type UnlinkResult struct {
	Removed int `json:"removed"`
}

// unlinkPersons answers POST /api/admin/persons/unlink: removes user-key
// links named by external person id, idempotently, in one transaction.
func (s *Server) unlinkPersons(c echo.Context) error {
	var body PersonUnlinkRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	if len(body.Links) == 0 || len(body.Links) > organisation.MaxImportRows {
		return server.NewAPIError(http.StatusBadRequest, "Name 1 to 20000 links.", server.FieldErrorBody{Field: "links", Message: "1 to 20000 links"})
	}
	n, err := organisation.Of(s.engine).StaffUnlinkPersons(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, body.Links)
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, UnlinkResult{Removed: n})
}
