package engine

import (
	"database/sql"
	"errors"
	"fmt"
)

// Code classifies an engine error; the HTTP layer maps each code to a status.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"      // malformed input: 400
	CodeUnauthorized Code = "unauthorized" // missing or wrong identity: 401
	CodeNotFound     Code = "not_found"    // 404
	CodeConflict     Code = "conflict"     // stale step, finished process, lost race: 409
	CodeValidation   Code = "validation"   // answers break a rule: 422
	CodeUnavailable  Code = "unavailable"  // a dependency is down: 503
	CodeTooMany      Code = "too_many"     // over a limit of requests, try later: 429
	CodeInternal     Code = "internal"     // 500
)

// FieldError names one bad field of a request, as `people[0].answer`.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// PersonError is a validation failure of one person's answer.
type PersonError struct {
	PersonID int64
	Message  string
	// Key names the message for translation (the views' message
	// validation_<Key>), Param fills its placeholder (a name, a limit);
	// Key is "" for a text that has no translation (a definition's own
	// format message).
	Key   string
	Param string
}

// Problem is a validation message: its English text and its translation key.
type Problem struct {
	Key, Text, Param string
}

func (p Problem) ForPerson(id int64) PersonError {
	return PersonError{PersonID: id, Message: p.Text, Key: p.Key, Param: p.Param}
}

// Error is the engine's error: a code, a message safe to show to users and,
// for validation errors, the failures per field or per person.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	People  []PersonError
	// Process identifies the instance and step a validation error belongs to.
	ProcessID string
	Step      int
	Err       error // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an Error with a user-facing message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err as AsError reads it, or CodeInternal
// for errors the engine did not classify.
func ErrorCode(err error) Code {
	if e, ok := AsError(err); ok {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err as an engine Error when it is one. It is where the
// engine's unavailability is classified, once for every caller: an error
// the engine did not classify that is a failure to reach the database
// (unavailable.go) reads as CodeUnavailable (503, try again) wrapping its
// cause, whichever statement met the outage, rather than as a defect; so no
// engine function has to remember to classify its own errors.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	if err != nil && isConnectionFailure(err) {
		return unavailable(err), true
	}
	return nil, false
}

// NotFoundOr turns sql.ErrNoRows into a not-found engine error and wraps anything else.
func NotFoundOr(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(CodeNotFound, "%s not found", what)
	}
	return fmt.Errorf("load %s: %w", what, err)
}
