package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/views/lang"
)

// HTTPErrorBody is the spec's error body for 400/401/404/409/413/415/429/500/503.
type HTTPErrorBody struct {
	Timestamp string           `json:"timestamp"`
	Status    int              `json:"status"`
	Error     string           `json:"error"`
	Message   string           `json:"message"`
	Path      string           `json:"path"`
	Errors    []FieldErrorBody `json:"errors"`
}

// FieldErrorBody names one bad field of a request.
type FieldErrorBody struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ProcessErrorBody is the spec's process error: answers that broke a rule (422).
type ProcessErrorBody struct {
	ProcessID    string            `json:"processId"`
	Step         int               `json:"step"`
	ProcessState string            `json:"processState"`
	Message      string            `json:"message"`
	Errors       ProcessErrorsBody `json:"errors"`
}

// ProcessErrorsBody holds the failures per person.
type ProcessErrorsBody struct {
	People []PersonErrorBody `json:"people"`
}

// PersonErrorBody is one person's failure.
type PersonErrorBody struct {
	ID    int64  `json:"id"`
	Error string `json:"error"`
}

var codeStatus = map[engine.Code]int{
	engine.CodeInvalid:      http.StatusBadRequest,
	engine.CodeUnauthorized: http.StatusUnauthorized,
	engine.CodeNotFound:     http.StatusNotFound,
	engine.CodeConflict:     http.StatusConflict,
	engine.CodeValidation:   http.StatusUnprocessableEntity,
	engine.CodeUnavailable:  http.StatusServiceUnavailable,
	engine.CodeTooMany:      http.StatusTooManyRequests,
	engine.CodeInternal:     http.StatusInternalServerError,
}

// apiError is an error the HTTP layer raises itself, with a status and a safe message.
type apiError struct {
	status  int
	message string
	fields  []FieldErrorBody
}

func (e *apiError) Error() string { return e.message }

func NewAPIError(status int, message string, fields ...FieldErrorBody) *apiError {
	return &apiError{status: status, message: message, fields: fields}
}

// describe turns any error into a status, a message safe for users, the
// field errors, and whether it is a server fault to log.
func describe(err error) (status int, message string, fields []FieldErrorBody, fault bool) {
	var ae *apiError
	var ee *engine.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.message, ae.fields, false
	case errors.As(err, &ee):
		return describeEngine(ee)
	case errors.As(err, &he):
		msg := http.StatusText(he.Code)
		switch he.Code {
		case http.StatusNotFound:
			msg = "No such resource."
		case http.StatusMethodNotAllowed:
			msg = "This method is not allowed here."
		case http.StatusRequestEntityTooLarge:
			msg = "The request body is larger than 64 KiB."
		}
		return he.Code, msg, nil, he.Code >= 500
	}
	// Not classified by anyone: a database out of reach reads as
	// unavailable (engine.AsError, the one place that decides it), anything
	// else is a defect.
	if ee, ok := engine.AsError(err); ok {
		return describeEngine(ee)
	}
	return http.StatusInternalServerError, "", nil, true
}

// describeEngine is describe of an engine error: its code picks the status.
func describeEngine(ee *engine.Error) (status int, message string, fields []FieldErrorBody, fault bool) {
	status = codeStatus[ee.Code]
	if status == 0 || status == http.StatusInternalServerError {
		return http.StatusInternalServerError, "", nil, true
	}
	for _, f := range ee.Fields {
		fields = append(fields, FieldErrorBody{Field: f.Field, Message: f.Message})
	}
	return status, ee.Message, fields, status >= 500
}

// RetryAfterSeconds is the Retry-After of a 503: long enough for a pool to
// reconnect or a database to fail over, short enough that a member who
// reloads by hand is not made to wait.
const RetryAfterSeconds = "5"

const unavailableMessage = "The service is temporarily unavailable. Please try again shortly."

// ErrorHandler is echo's one error handler: JSON bodies of the spec for the
// API, a small page for browsers. Internal error text never reaches a client.
func (s *Server) ErrorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	req := c.Request()
	status, message, fields, fault := describe(err)
	reqID := requestID(c)
	log := s.LogFor(c).With(slog.Int("status", status))
	switch {
	case status == http.StatusServiceUnavailable:
		// A dependency is down (database, session store, payment provider):
		// an operator's concern, not a defect, and the client should simply
		// come back. No request id: there is nothing to report.
		c.Response().Header().Set("Retry-After", RetryAfterSeconds)
		log.WarnContext(req.Context(), "dependency unavailable", "err", err)
		if message == "" {
			message = unavailableMessage
		}
	case fault:
		log.ErrorContext(req.Context(), "request failed", "err", err)
		message = "An unexpected error occurred. Quote request id " + reqID + " when you contact support."
	default:
		log.DebugContext(req.Context(), "request rejected", "err", err)
	}
	var ee *engine.Error
	jsonBody := IsAPI(req) || (s.Relay != nil && s.isRelayPath(req.URL.Path))
	if status == http.StatusUnprocessableEntity && errors.As(err, &ee) && jsonBody {
		body := ProcessErrorBody{ProcessID: ee.ProcessID, Step: ee.Step, ProcessState: string(engine.StateError),
			Message: ee.Message, Errors: ProcessErrorsBody{People: []PersonErrorBody{}}}
		if len(ee.People) > 0 {
			body.Message = Tr(c, "api_answers_invalid") // the engine's "Some answers are not valid.", in the request's language
		}
		for _, p := range ee.People {
			body.Errors.People = append(body.Errors.People, PersonErrorBody{ID: p.PersonID, Error: PersonProblem(LangOf(c), p)})
		}
		s.writeJSON(c, status, body)
		return
	}
	if jsonBody {
		if fields == nil {
			fields = []FieldErrorBody{}
		}
		s.writeJSON(c, status, HTTPErrorBody{
			Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Status: status, Error: http.StatusText(status),
			Message: message, Path: req.URL.Path, Errors: fields,
		})
		return
	}
	s.RenderErrorPage(c, status, pageMessage(c, status, message))
}

// pageMessage is an error page's message in the request's language. The
// engine's messages are English: in another language the page says the
// status's own message (error_message_<status>) instead, less specific
// but readable.
func pageMessage(c echo.Context, status int, message string) string {
	l := LangOf(c)
	if l.Code == lang.Codes[0] {
		return message
	}
	if id := fmt.Sprintf("error_message_%d", status); lang.Has(id) {
		return l.T(id, map[string]any{"RequestID": requestID(c)})
	}
	return message
}

func (s *Server) writeJSON(c echo.Context, status int, body any) {
	if err := c.JSON(status, body); err != nil {
		s.LogFor(c).Warn("write error response", "err", err)
	}
}

func IsAPI(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/api"
}

// FieldErrors are an engine validation error's field messages by field,
// or a conflict's that names its field (a code already used).
func FieldErrors(err error) (map[string]string, bool) {
	e, ok := engine.AsError(err)
	if !ok || (e.Code != engine.CodeValidation && e.Code != engine.CodeInvalid && e.Code != engine.CodeConflict) || len(e.Fields) == 0 {
		return nil, false
	}
	out := map[string]string{}
	for _, f := range e.Fields {
		out[f.Field] = f.Message
	}
	return out, true
}
