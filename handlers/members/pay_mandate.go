package members

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/directdebit"
)

// A household's mandate offered again on the pay link of its next
// direct-debit order (issue 29): the member keeps it, changes its account
// or revokes it, each a plain form that posts the mandate's id and comes
// back to the pay link (POST, 303, GET). A choice sent twice changes
// nothing more.

// postedMandate is the mandate id a choice posts.
func postedMandate(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.FormValue("mandate"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &engine.Error{Code: engine.CodeValidation, Message: "Choose the mandate again.",
			Fields: []engine.FieldError{{Field: "mandate", Message: "is not a mandate"}}}
	}
	return id, nil
}

// KeepMandate answers POST /pay/:reference/mandate/keep: the order is
// collected under the household's mandate.
func (s *Server) KeepMandate(c echo.Context) error {
	id, err := postedMandate(c)
	if err != nil {
		return err
	}
	_, err = directdebit.Of(s.engine).KeepMandate(c.Request().Context(), c.Param("reference"), id)
	return s.mandateAnswered(c, nil, err)
}

// ChangeMandate answers POST /pay/:reference/mandate/change: the mandate's
// account changes (an amendment) and the order is collected from the new
// one; a refusal shows the page again as typed, each problem at its field.
func (s *Server) ChangeMandate(c echo.Context) error {
	id, err := postedMandate(c)
	if err != nil {
		return err
	}
	in := mandateForm(c)
	_, err = directdebit.Of(s.engine).AmendMandate(c.Request().Context(), c.Param("reference"), id, in)
	return s.mandateAnswered(c, &in, err)
}

// RevokeMandate answers POST /pay/:reference/mandate/revoke: the mandate
// no longer holds; the pay link then offers the methods again (or the
// form for a new mandate).
func (s *Server) RevokeMandate(c echo.Context) error {
	id, err := postedMandate(c)
	if err != nil {
		return err
	}
	_, err = directdebit.Of(s.engine).RevokeMandate(c.Request().Context(), c.Param("reference"), id)
	return s.mandateAnswered(c, nil, err)
}
