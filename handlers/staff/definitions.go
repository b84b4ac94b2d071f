package staff

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/definition"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The process definitions page of the setup (admin): GET
// /staff/processes?version=ID, the upload of a new version and
// the choice of the version in use.

// Flash keys of the definitions page.
const (
	flashDefImported  = "definition-imported"
	flashDefUnchanged = "definition-unchanged"
	flashDefActivated = "definition-activated"
)

func init() {
	staffpage.StaffFlashes[flashDefImported] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).DefImported }
	staffpage.StaffFlashes[flashDefUnchanged] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).DefUnchanged }
	staffpage.StaffFlashes[flashDefActivated] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).DefActivated }
}

// staffDefinitionsPage answers GET /staff/processes.
func (s *Server) staffDefinitionsPage(c echo.Context) error {
	return s.renderDefinitions(c, http.StatusOK, "")
}

func (s *Server) renderDefinitions(c echo.Context, status int, uploadError string) error {
	ctx := c.Request().Context()
	u := staffpage.StaffUserOf(c)
	versions, err := definition.Of(s.engine).Versions(ctx, u.OrganisationID, "")
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	// By key, newest version first: the first active one of a key is in use.
	slices.SortStableFunc(versions, func(a, b definition.Version) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(b.Version, a.Version))
	})
	base := staffpage.RequestOf(c).StaffPath(server.StaffDefinitionsPath)
	m := staffview.DefinitionsModel{Chrome: s.StaffChrome(c, staffpage.StaffOpsTextIn(c).DefTitle), UploadURL: base, Error: uploadError}
	inUse := map[string]bool{} // keys whose version in use is listed: the newest active one, versions come newest first
	show, _ := strconv.ParseInt(c.QueryParam("version"), 10, 64)
	for _, d := range versions {
		id := strconv.FormatInt(d.ID, 10)
		row := staffview.DefinitionRow{ID: id, Key: d.Key, Name: d.Name, Version: strconv.Itoa(d.Version), Created: staffpage.StaffDateTime(c, d.CreatedAt),
			ViewURL: base + "?version=" + id + "#steps-title", ActivateURL: base + "/" + id + "/activate"}
		if d.Active && !inUse[d.Key] {
			row.InUse, inUse[d.Key] = true, true
			if show == 0 {
				show = d.ID
			}
		}
		m.Versions = append(m.Versions, row)
	}
	if show != 0 {
		def, err := definition.Of(s.engine).Version(ctx, u.OrganisationID, show)
		if err != nil {
			return s.StaffEngineError(c, err)
		}
		m.Shown = definitionView(c, def)
	}
	return staffpage.StaffRender(c, status, staffview.Definitions(m))
}

// definitionView prints a version's steps as the member meets them.
func definitionView(c echo.Context, def *engine.ProcessDefinition) *staffview.DefinitionView {
	v := &staffview.DefinitionView{Title: fmt.Sprintf("%s %s, %s %d", staffpage.StaffOpsTextIn(c).DefStepsOf, def.Name, strings.ToLower(staffpage.StaffOpsTextIn(c).DefVersion), def.Version)}
	for i, st := range def.Steps {
		sv := staffview.StepView{Number: strconv.Itoa(i + 1), Question: st.QuestionText, Kind: string(st.QuestionType), Required: st.Required}
		var rules []string
		if st.PersonMinAge != nil || st.PersonMaxAge != nil {
			rules = append(rules, staffpage.StaffOpsTextIn(c).DefAges+" "+ageRange(c, st.PersonMinAge, st.PersonMaxAge))
		}
		if st.FormatPattern != nil {
			rules = append(rules, staffpage.StaffOpsTextIn(c).DefPattern+" "+*st.FormatPattern)
		}
		if st.MinValue != nil || st.MaxValue != nil {
			rules = append(rules, staffpage.StaffOpsTextIn(c).DefRange+" "+numberRange(st.MinValue, st.MaxValue))
		}
		if st.PriceLabel != nil && st.PriceAmountMinor != nil {
			rules = append(rules, *st.PriceLabel+" "+engine.FormatAmount(*st.PriceAmountMinor))
		}
		sv.Rules = strings.Join(rules, " · ")
		for _, o := range st.Options {
			switch o.Kind {
			case engine.OptionChoice:
				sv.Choices = append(sv.Choices, o.Label)
			case engine.OptionCondition:
				sv.Conditions = append(sv.Conditions, o.Label)
			}
		}
		v.Steps = append(v.Steps, sv)
	}
	return v
}

// numberRange prints a number question's bounds.
func numberRange(lo, hi *float64) string {
	f := func(p *float64) string {
		if p == nil {
			return "…"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	return f(lo) + "–" + f(hi)
}

// staffUploadDefinition answers POST /staff/processes: the file
// is parsed and validated as the admin API does, and stored as a new
// version in use.
func (s *Server) staffUploadDefinition(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	data, _, err := staffpage.StaffUpload(c, "")
	if status, problem, ok := staffpage.UploadProblem(err, staffpage.StaffOpsTextIn(c).DefTooLarge, staffpage.StaffOpsTextIn(c).DefMissing); ok {
		return s.renderDefinitions(c, status, problem)
	} else if err != nil {
		return err
	}
	spec, err := definition.ParseDefinitionFor(data, u.OrganisationID) // the staff member's organisation, whatever the file names
	if err == nil {
		var res definition.ImportResult
		res, err = definition.Of(s.engine).StaffImportDefinition(c.Request().Context(), u.Actor(), u.OrganisationID, spec)
		if err == nil {
			flash := flashDefImported
			if res.Unchanged {
				flash = flashDefUnchanged
			}
			return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffDefinitionsPath+"?done="+flash))
		}
	}
	e, ok := engine.AsError(err)
	if !ok || e.Code == engine.CodeUnavailable {
		return s.StaffEngineError(c, err)
	}
	return s.renderDefinitions(c, http.StatusUnprocessableEntity, e.Message+staffpage.FieldSummary(e))
}

// staffActivateDefinition answers POST
// /staff/processes/{id}/activate, after asking.
func (s *Server) staffActivateDefinition(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, proceed, err := s.StaffConfirmedID(c, staffpage.StaffOpsTextIn(c).DefActivateQuestion, staffpage.StaffOpsTextIn(c).DefActivateDetail,
		staffpage.RequestOf(c).StaffPath(server.StaffDefinitionsPath))
	if !proceed {
		return err
	}
	if _, err := definition.Of(s.engine).SetDefinitionActive(c.Request().Context(), u.Actor(), u.OrganisationID, definition.Ref{ID: id}, definition.DefinitionUse); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffDefinitionsPath+"?done="+flashDefActivated))
}
