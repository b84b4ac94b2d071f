package server

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine/registration"
)

// RejectControlCharacters answers 400 when the path, a query parameter or a
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
// decoded (parseNext). The form bodies of the staff pages and the admin
// API are checked after their authentication (bodyAfterAuthentication).
func (s *Server) RejectControlCharacters(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if s.Relay != nil && s.isRelayPath(req.URL.Path) {
			return next(c)
		}
		var bad []string
		if !registration.PlainText(req.URL.Path) {
			bad = append(bad, "path")
		}
		bad = append(bad, UnplainFields(req.URL.Query(), "")...)
		if len(bad) > 0 {
			return PlainTextError(bad)
		}
		if s.bodyAfterAuthentication(c) {
			return next(c) // its authentication reads the form (checkFormText), never anyone before it
		}
		if err := CheckFormText(req); err != nil {
			return err
		}
		return next(c)
	}
}

// bodyAfterAuthentication reports whether c's route is one of the staff
// pages or the admin API, whose body no one reads before the request is
// authenticated: their checks (requireStaff, requireAPIKey) call
// checkFormText once they let the request in, and the staff uploads read
// theirs in staffUpload under limits of their own. An anonymous upload
// is then refused having read (almost) nothing, instead of parsed whole.
func (s *Server) bodyAfterAuthentication(c echo.Context) bool {
	p := c.Path()
	return p == AdminPrefix || strings.HasPrefix(p, AdminPrefix+"/") || s.StaffPaths[p]
}

// CheckFormText reads a form body of req (URL-encoded, or multipart held
// to MaxBodyBytes in memory) and answers 400 when a field's name or value
// is not plain text; answer fields are the engine's to judge. A request
// without a form body is not read.
func CheckFormText(req *http.Request) error {
	kind := formBody(req)
	if kind == "" {
		return nil
	}
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
		return NewAPIError(http.StatusBadRequest, "The form could not be read.")
	}
	if bad := UnplainFields(req.PostForm, AnswerFieldPrefix); len(bad) > 0 {
		return PlainTextError(bad)
	}
	return nil
}

// PlainTextError is the 400 naming the fields that are not plain text.
func PlainTextError(bad []string) error {
	fields := make([]FieldErrorBody, len(bad))
	for i, name := range bad {
		fields[i] = FieldErrorBody{Field: name, Message: "contains control characters or invalid text"}
	}
	return NewAPIError(http.StatusBadRequest, "The request contains characters that are not allowed.", fields...)
}

// RemoveUploadedFiles deletes the temporary files of a multipart form
// parsed while serving the request, whatever the outcome (an answer, a
// refusal, a client gone mid-upload). net/http removes only those of the
// request it passed in, and the form is parsed on a copy of it (the
// organisation, session and staff checks each put a new context on the
// request), so without this every spooled upload would stay on disk.
func RemoveUploadedFiles(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		first := c.Request()
		defer func() {
			for _, r := range []*http.Request{first, c.Request()} {
				if r.MultipartForm != nil {
					_ = r.MultipartForm.RemoveAll()
				}
			}
		}()
		return next(c)
	}
}

// UnplainFields names the fields whose name or a value is not plain text,
// skipping names that start with skipPrefix (when set). A name that is
// itself not plain text is reported as "(field name)", never echoed.
func UnplainFields(values map[string][]string, skipPrefix string) []string {
	var bad []string
	for name, vs := range values {
		if skipPrefix != "" && strings.HasPrefix(name, skipPrefix) && registration.PlainText(name) {
			continue
		}
		if !registration.PlainText(name) {
			bad = append(bad, "(field name)")
			continue
		}
		for _, v := range vs {
			if !registration.PlainText(v) {
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
	if mt := MediaType(r); mt == echo.MIMEApplicationForm || mt == echo.MIMEMultipartForm {
		return mt
	}
	return ""
}

// PathID reads the path parameter name as a record id: a positive whole
// number. Anything else names no record, and each caller answers that as
// its audience expects (a 404 page, a 404 body, a field error).
func PathID(c echo.Context, name string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	return id, err == nil && id > 0
}

// AnswerFieldPrefix starts the name of every answer field of a question page.
const AnswerFieldPrefix = "answer-"
