package members

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views/memberview"
)

// SubmitPersons answers POST /membership/register/:periodId/persons (fields person=id...).
func (s *Server) SubmitPersons(c echo.Context) error {
	return s.submitStep(c, 0)
}

// SubmitAnswers answers POST /membership/register/:periodId/step/:n.
func (s *Server) SubmitAnswers(c echo.Context) error {
	n, ok := server.StepParam(c)
	if !ok {
		return server.NewAPIError(http.StatusNotFound, "No such step.")
	}
	return s.submitStep(c, n)
}

// submitStep stores one page's answers and moves on (POST, then 303, then
// GET). The last question holds its commit for the check-your-answers page.
func (s *Server) submitStep(c echo.Context, n int) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone || form.Step != n {
		return s.renderCurrent(c, form, server.Tr(c, "flow_stale_notice"))
	}
	values, err := c.FormParams()
	if err != nil {
		return server.NewAPIError(http.StatusBadRequest, "The form could not be read.")
	}
	in := registration.NextInput{ProcessID: form.ProcessIDString(), Step: n, HoldCommit: n == form.TotalSteps}
	posted := postedAnswers(form, values)
	if n == 0 {
		for _, raw := range values["person"] {
			if id, err := strconv.ParseInt(raw, 10, 64); err == nil {
				in.People = append(in.People, registration.PersonInput{ID: id})
			}
		}
	} else {
		for _, p := range form.People {
			if a, ok := posted[p.ID]; ok && !p.Hide {
				in.People = append(in.People, registration.PersonInput{ID: p.ID, Answer: &a})
			}
		}
	}
	next, err := registration.Of(s.engine).Next(c.Request().Context(), r.userKey, in)
	if err != nil {
		if e, ok := engine.AsError(err); ok {
			switch e.Code {
			case engine.CodeValidation:
				m := s.stepModel(c, form, values, e, "")
				return server.Render(c, http.StatusUnprocessableEntity, memberview.Step(m))
			case engine.CodeConflict:
				return s.reloadWithNotice(c, r)
			}
		}
		return err
	}
	if in.HoldCommit {
		return c.Redirect(http.StatusSeeOther, server.RegisterPath(c, r.periodID, "review"))
	}
	return c.Redirect(http.StatusSeeOther, stepURL(c, next))
}

// postedAnswers reads a question page's inputs as the engine's answers.
func postedAnswers(form *registration.Form, values map[string][]string) map[int64]string {
	out := map[int64]string{}
	if form.Question == nil {
		return out
	}
	one := first(values["one"])
	for _, p := range form.People {
		key := fieldID(p.ID)
		switch form.Question.Type {
		case engine.TypeCheckbox, engine.TypeAccept:
			out[p.ID] = "0"
			if first(values[key]) == "1" {
				out[p.ID] = "1"
			}
		case engine.TypeOne:
			out[p.ID] = "0"
			if one == strconv.FormatInt(p.ID, 10) {
				out[p.ID] = "1"
			}
		case engine.TypeMulti:
			out[p.ID] = strings.Join(values[key], ",")
		default:
			if v, ok := values[key]; ok {
				out[p.ID] = first(v)
			}
		}
	}
	return out
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
