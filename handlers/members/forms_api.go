package members

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine/payment"
	"portal/engine/registration"
	"portal/handlers/server"
)

// GetMembershipForm answers GET /api/forms/membership/:periodid?userKey=&organisationId=.
// It returns the open registration of the user key for the period, or a new
// one (201 Created when this call created the process instance).
func (s *Server) GetMembershipForm(c echo.Context) error {
	sess := server.SessionOf(c)
	// The spec's status table: 401 for a "missing or invalid userKey", so
	// a missing or empty one is not a bad parameter but no user key.
	userKey := c.QueryParam("userKey")
	if userKey == "" {
		return server.NewAPIError(http.StatusUnauthorized, "The userKey is missing: send the user key the session was signed in with.")
	}
	if userKey != sess.UserKey {
		return server.NewAPIError(http.StatusUnauthorized, "The userKey does not match the signed-in user.")
	}
	var fields []server.FieldErrorBody
	periodID, ok := server.PathID(c, "periodid")
	if !ok {
		fields = append(fields, server.FieldErrorBody{Field: "periodid", Message: "must be a positive whole number"})
	}
	var orgID *int64
	if raw := c.QueryParam("organisationId"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			fields = append(fields, server.FieldErrorBody{Field: "organisationId", Message: "must be a positive whole number"})
		}
		orgID = &id
	}
	if len(fields) > 0 {
		return server.NewAPIError(http.StatusBadRequest, "The request has invalid parameters.", fields...)
	}
	form, created, err := registration.Of(s.engine).LoadMembershipForm(c.Request().Context(), sess.UserKey, periodID, orgID)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return s.formJSON(c, status, form)
}

// PostNext answers POST /api/forms/next: stores the current step's answers
// and returns the next question or the completed registration.
func (s *Server) PostNext(c echo.Context) error {
	in, err := server.ParseNext(c.Request().Body)
	if err != nil {
		return err
	}
	form, err := registration.Of(s.engine).Next(c.Request().Context(), server.SessionOf(c).UserKey, in)
	if err != nil {
		return err
	}
	return s.formJSON(c, http.StatusOK, form)
}

// PostReset answers POST /api/forms/processes/:processid/reset.
func (s *Server) PostReset(c echo.Context) error {
	form, err := registration.Of(s.engine).Reset(c.Request().Context(), server.SessionOf(c).UserKey, c.Param("processid"))
	if err != nil {
		return err
	}
	return s.formJSON(c, http.StatusOK, form)
}

// PostResume answers POST /api/forms/processes/:processid/resume.
func (s *Server) PostResume(c echo.Context) error {
	form, err := registration.Of(s.engine).Resume(c.Request().Context(), server.SessionOf(c).UserKey, c.Param("processid"))
	if err != nil {
		return err
	}
	return s.formJSON(c, http.StatusOK, form)
}

// backRequest is the optional body of the back extension.
type backRequest struct {
	Step *int `json:"step"`
}

// PostBack answers POST /api/forms/processes/:processid/back (an extension of
// the spec): the previous step with its saved answers. An optional body
// {"step": n} guards against going back from a step the client no longer shows.
func (s *Server) PostBack(c echo.Context) error {
	var body backRequest
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := server.DecodeJSON(bytes.NewReader(raw), &body); err != nil {
			return err
		}
	}
	form, err := registration.Of(s.engine).Back(c.Request().Context(), server.SessionOf(c).UserKey, c.Param("processid"), body.Step)
	if err != nil {
		return err
	}
	return s.formJSON(c, http.StatusOK, form)
}

// formJSON answers with a form as its FormDTO. The club's payment methods
// that take the period's currency are listed on the last question, where
// the choice is sent: the other steps keep their one statement
// (TestStepPageStatements).
func (s *Server) formJSON(c echo.Context, status int, form *registration.Form) error {
	var methods []string
	if form.Question != nil && form.Step == form.TotalSteps {
		var err error
		if methods, err = payment.Of(s.engine).PaymentMethods(c.Request().Context(), form.OrganisationID, form.PeriodID); err != nil {
			return err
		}
	}
	return c.JSON(status, server.NewFormDTO(form, methods))
}
