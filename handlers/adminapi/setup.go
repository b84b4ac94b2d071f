package adminapi

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/server"
)

// The admin API's setup resources: membership types, process definitions
// and periods of the key's organisation.

// MembershipTypeDTO is a membership type in the admin API.
type MembershipTypeDTO struct {
	ID   int64  `json:"id"`
	Code string `json:"code"`
	Name string `json:"name"`
	// NameTexts are the name per language; empty: name in every language.
	NameTexts engine.Texts `json:"nameTexts"`
	MinAge    *int         `json:"minAge"`
	MaxAge    *int         `json:"maxAge"`
}

func membershipTypeDTO(t engine.MembershipType) MembershipTypeDTO {
	return MembershipTypeDTO{ID: t.ID, Code: t.Code, Name: t.Name, NameTexts: textsOut(t.NameTexts), MinAge: t.MinAge, MaxAge: t.MaxAge}
}

// textsOut are texts per language as the admin API answers them: an
// object, empty when the text is one for every language.
func textsOut(t engine.Texts) engine.Texts {
	if t == nil {
		return engine.Texts{}
	}
	return t
}

// listMembershipTypes answers GET /api/admin/membership-types.
func (s *Server) listMembershipTypes(c echo.Context) error {
	types, err := organisation.Of(s.engine).MembershipTypes(c.Request().Context(), keyOf(c).OrganisationID)
	if err != nil {
		return err
	}
	out := make([]MembershipTypeDTO, 0, len(types))
	for _, t := range types {
		out = append(out, membershipTypeDTO(t))
	}
	return c.JSON(http.StatusOK, out)
}

// createMembershipType answers POST /api/admin/membership-types.
func (s *Server) createMembershipType(c echo.Context) error {
	var body MembershipTypeDTO
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	t, err := organisation.Of(s.engine).StaffCreateMembershipType(c.Request().Context(), apiActor(c), engine.MembershipType{OrganisationID: keyOf(c).OrganisationID,
		Code: body.Code, Name: body.Name, NameTexts: body.NameTexts, MinAge: body.MinAge, MaxAge: body.MaxAge})
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusCreated, membershipTypeDTO(*t))
}

// DefinitionImportDTO answers a definition import.
type DefinitionImportDTO struct {
	DefinitionID int64 `json:"definitionId"`
	Version      int   `json:"version"`
	Unchanged    bool  `json:"unchanged"`
}

// importDefinition answers POST /api/admin/definitions: a process
// definition in YAML (application/yaml) or JSON, as `portal definitions
// import` reads it, stored as a new version of its key for the key's
// organisation (whatever organisationId the document names).
func (s *Server) importDefinition(c echo.Context) error {
	switch server.MediaType(c.Request()) {
	case echo.MIMEApplicationJSON, "application/yaml", "application/x-yaml", "text/yaml":
	default:
		return server.NewAPIError(http.StatusUnsupportedMediaType, "A definition must be application/json or application/yaml.")
	}
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // over the body limit: 413
	}
	spec, err := definition.ParseDefinitionFor(raw, keyOf(c).OrganisationID) // the key's organisation, whatever the document names
	if err != nil {
		return adminError(err)
	}
	res, err := definition.Of(s.engine).StaffImportDefinition(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, spec)
	if err != nil {
		return adminError(err)
	}
	status := http.StatusCreated
	if res.Unchanged {
		status = http.StatusOK
	}
	return c.JSON(status, DefinitionImportDTO{DefinitionID: res.DefinitionID, Version: res.Version, Unchanged: res.Unchanged})
}

// PeriodDTO is a membership period in the admin API.
type PeriodDTO struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// NameTexts are the name per language; empty: name in every language.
	NameTexts     engine.Texts `json:"nameTexts"`
	StartDate     string       `json:"startDate"`
	EndDate       string       `json:"endDate"`
	Currency      string       `json:"currency"`
	DefinitionKey string       `json:"definitionKey"`
	Status        string       `json:"status"`
}

func periodDTO(p *engine.MembershipPeriod) PeriodDTO {
	return PeriodDTO{ID: p.ID, Name: p.Name, NameTexts: textsOut(p.NameTexts), StartDate: p.StartDate.Format("2006-01-02"), EndDate: p.EndDate.Format("2006-01-02"),
		Currency: p.Currency, DefinitionKey: p.DefinitionKey, Status: p.Status}
}

// PeriodRequest creates (every field but status required) or changes
// (absent fields stay) a period.
type PeriodRequest struct {
	Name *string `json:"name"`
	// NameTexts replace the name per language ({}: one name for all).
	NameTexts     *engine.Texts `json:"nameTexts"`
	StartDate     *string       `json:"startDate"`
	EndDate       *string       `json:"endDate"`
	Currency      *string       `json:"currency"`
	DefinitionKey *string       `json:"definitionKey"`
	Status        *string       `json:"status"`
}

func (r PeriodRequest) input() organisation.PeriodInput {
	return organisation.PeriodInput{Name: r.Name, NameTexts: r.NameTexts, StartDate: r.StartDate, EndDate: r.EndDate, Currency: r.Currency, DefinitionKey: r.DefinitionKey, Status: r.Status}
}

// listPeriods answers GET /api/admin/periods.
func (s *Server) listPeriods(c echo.Context) error {
	periods, err := organisation.Of(s.engine).Periods(c.Request().Context(), keyOf(c).OrganisationID)
	if err != nil {
		return err
	}
	out := make([]PeriodDTO, 0, len(periods))
	for i := range periods {
		out = append(out, periodDTO(&periods[i]))
	}
	return c.JSON(http.StatusOK, out)
}

// createPeriod answers POST /api/admin/periods; a new period is closed
// unless the body says open.
func (s *Server) createPeriod(c echo.Context) error {
	var body PeriodRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	p, err := organisation.Of(s.engine).StaffCreatePeriod(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, body.input())
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusCreated, periodDTO(p))
}

// patchPeriod answers PATCH /api/admin/periods/:id: open or close it,
// rename it, move its dates or change its definition.
func (s *Server) patchPeriod(c echo.Context) error {
	id, err := periodIDParam(c)
	if err != nil {
		return err
	}
	var body PeriodRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	p, err := staff.Of(s.engine).StaffUpdatePeriod(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, body.input())
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, periodDTO(p))
}

// PriceRuleDTO is a price rule in the admin API. Money is in minor units
// of the period's currency; percentages in basis points (-1000 is -10%).
type PriceRuleDTO struct {
	Code  string `json:"code"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// LabelTexts are the label per language; empty: label in every language.
	LabelTexts       engine.Texts `json:"labelTexts"`
	MembershipTypeID *int64       `json:"membershipTypeId"`
	MemberType       *string      `json:"memberType"`
	MinPersons       *int         `json:"minPersons"`
	ValidFrom        *time.Time   `json:"validFrom"`
	ValidUntil       *time.Time   `json:"validUntil"`
	AmountMinor      *int64       `json:"amountMinor"`
	PercentBP        *int         `json:"percentBp"`
}

// PriceRulesRequest is the body of PUT /api/admin/periods/{id}/price-rules.
type PriceRulesRequest struct {
	Rules []PriceRuleDTO `json:"rules"`
}

func priceRuleDTOs(rules []engine.PriceRule) []PriceRuleDTO {
	out := make([]PriceRuleDTO, 0, len(rules))
	for _, r := range rules {
		out = append(out, PriceRuleDTO{Code: r.Code, Kind: string(r.Kind), Label: r.Label, LabelTexts: textsOut(r.LabelTexts), MembershipTypeID: r.MembershipTypeID, MemberType: r.MemberType,
			MinPersons: r.MinPersons, ValidFrom: r.ValidFrom, ValidUntil: r.ValidUntil, AmountMinor: r.AmountMinor, PercentBP: r.PercentBP})
	}
	return out
}

func periodIDParam(c echo.Context) (int64, error) { return idParam(c, "id", "membership period") }

// idParam reads a positive whole number from the path parameter name; any
// other value names nothing, so it is "what not found" (404).
func idParam(c echo.Context, name, what string) (int64, error) {
	id, ok := server.PathID(c, name)
	if !ok {
		return 0, engine.Errorf(engine.CodeNotFound, "%s not found", what)
	}
	return id, nil
}

// listPriceRules answers GET /api/admin/periods/:id/price-rules.
func (s *Server) listPriceRules(c echo.Context) error {
	id, err := periodIDParam(c)
	if err != nil {
		return err
	}
	rules, err := organisation.Of(s.engine).PriceRules(c.Request().Context(), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, PriceRulesRequest{Rules: priceRuleDTOs(rules)})
}

// putPriceRules answers PUT /api/admin/periods/:id/price-rules: the
// period's whole set of rules, checked together and replaced at once.
func (s *Server) putPriceRules(c echo.Context) error {
	id, err := periodIDParam(c)
	if err != nil {
		return err
	}
	var body PriceRulesRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	if len(body.Rules) > 200 {
		return server.NewAPIError(http.StatusBadRequest, "At most 200 price rules per period.", server.FieldErrorBody{Field: "rules", Message: "at most 200"})
	}
	rules := make([]engine.PriceRule, 0, len(body.Rules))
	for _, r := range body.Rules {
		rules = append(rules, engine.PriceRule{Code: r.Code, Kind: engine.PriceRuleKind(r.Kind), Label: r.Label, LabelTexts: r.LabelTexts, MembershipTypeID: r.MembershipTypeID, MemberType: r.MemberType,
			MinPersons: r.MinPersons, ValidFrom: r.ValidFrom, ValidUntil: r.ValidUntil, AmountMinor: r.AmountMinor, PercentBP: r.PercentBP})
	}
	out, err := organisation.Of(s.engine).StaffReplacePriceRules(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, rules)
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, PriceRulesRequest{Rules: priceRuleDTOs(out)})
}

// MembershipTypePatch is the body of PATCH /api/admin/membership-types/{id}:
// absent fields stay; minAge or maxAge null removes the bound.
type MembershipTypePatch struct {
	Code *string `json:"code"`
	Name *string `json:"name"`
	// NameTexts replace the name per language ({}: one name for all).
	NameTexts *engine.Texts   `json:"nameTexts"`
	MinAge    json.RawMessage `json:"minAge"`
	MaxAge    json.RawMessage `json:"maxAge"`
}

// optionalAge reads an age bound of a patch: absent (nil raw), null
// (clear) or a whole number.
func optionalAge(field string, raw json.RawMessage) (age *int, clear bool, err error) {
	switch {
	case raw == nil:
		return nil, false, nil
	case string(raw) == "null":
		return nil, true, nil
	}
	var n int
	if json.Unmarshal(raw, &n) != nil {
		return nil, false, server.NewAPIError(http.StatusBadRequest, "The request body is not valid JSON for this operation.",
			server.FieldErrorBody{Field: field, Message: "must be a whole number or null"})
	}
	return &n, false, nil
}

func membershipTypeIDParam(c echo.Context) (int64, error) { return idParam(c, "id", "membership type") }

// patchMembershipType answers PATCH /api/admin/membership-types/:id.
func (s *Server) patchMembershipType(c echo.Context) error {
	id, err := membershipTypeIDParam(c)
	if err != nil {
		return err
	}
	var body MembershipTypePatch
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	ch := organisation.MembershipTypeChange{Code: body.Code, Name: body.Name, NameTexts: body.NameTexts}
	if ch.MinAge, ch.ClearMinAge, err = optionalAge("minAge", body.MinAge); err != nil {
		return err
	}
	if ch.MaxAge, ch.ClearMaxAge, err = optionalAge("maxAge", body.MaxAge); err != nil {
		return err
	}
	t, err := organisation.Of(s.engine).StaffUpdateMembershipType(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, ch)
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, membershipTypeDTO(*t))
}

// deleteMembershipType answers DELETE /api/admin/membership-types/:id:
// 204, or 409 while a membership or price rule uses the type.
func (s *Server) deleteMembershipType(c echo.Context) error {
	id, err := membershipTypeIDParam(c)
	if err != nil {
		return err
	}
	if err := organisation.Of(s.engine).StaffDeleteMembershipType(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
