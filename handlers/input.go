package handlers

import (
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
)

// rejectControlCharacters answers 400 when the path, a query parameter or a
// form field of one of our own routes holds invalid UTF-8 or a control
// character other than tab, CR and LF (engine.PlainText). Those values are
// identifiers the portal looks up (period ids, user keys, payment
// references, process ids); PostgreSQL refuses NUL in text, so without this
// they became 500s. One middleware rather than a check at each lookup: every
// route present and future gets it, and a handler never sees such a value.
//
// Two kinds of input pass through untouched: the relay under the gateway
// prefix, which forwards requests as they came and lets the backend judge
// them, and the answer fields of question pages, which are the engine's to
// judge so that the member sees a per-person error next to the question
// (422) instead of an error page. JSON bodies are checked where they are
// decoded (parseNext).
func (s *Server) rejectControlCharacters(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if s.gw != nil && s.isRelayPath(req.URL.Path) {
			return next(c)
		}
		var bad []string
		if !engine.PlainText(req.URL.Path) {
			bad = append(bad, "path")
		}
		bad = append(bad, unplainFields(req.URL.Query(), "")...)
		if kind := formBody(req); kind != "" {
			var err error
			if kind == echo.MIMEMultipartForm {
				err = req.ParseMultipartForm(MaxBodyBytes) // fills PostForm too
			} else {
				err = req.ParseForm()
			}
			if err != nil {
				if tooLarge(err) {
					return err
				}
				return newAPIError(http.StatusBadRequest, "The form could not be read.")
			}
			bad = append(bad, unplainFields(req.PostForm, answerFieldPrefix)...)
		}
		if len(bad) == 0 {
			return next(c)
		}
		fields := make([]FieldErrorBody, len(bad))
		for i, name := range bad {
			fields[i] = FieldErrorBody{Field: name, Message: "contains control characters or invalid text"}
		}
		return newAPIError(http.StatusBadRequest, "The request contains characters that are not allowed.", fields...)
	}
}

// unplainFields names the fields whose name or a value is not plain text,
// skipping names that start with skipPrefix (when set). A name that is
// itself not plain text is reported as "(field name)", never echoed.
func unplainFields(values map[string][]string, skipPrefix string) []string {
	var bad []string
	for name, vs := range values {
		if skipPrefix != "" && strings.HasPrefix(name, skipPrefix) && engine.PlainText(name) {
			continue
		}
		if !engine.PlainText(name) {
			bad = append(bad, "(field name)")
			continue
		}
		for _, v := range vs {
			if !engine.PlainText(v) {
				bad = append(bad, name)
				break
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// formBody returns the media type of a form body (URL-encoded, as our
// pages post, or multipart, which c.FormValue reads just as well), or "".
func formBody(r *http.Request) string {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return ""
	}
	if mt := mediaType(r); mt == echo.MIMEApplicationForm || mt == echo.MIMEMultipartForm {
		return mt
	}
	return ""
}
