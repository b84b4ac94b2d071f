package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine/registration"
)

// FormDTO is the spec's response of every form endpoint. Absent values are null.
type FormDTO struct {
	ProcessID    string          `json:"processId"`
	Step         int             `json:"step"`
	ProcessState string          `json:"processState"`
	Question     *string         `json:"question"`
	QuestionType *string         `json:"questionType"`
	Required     *bool           `json:"required"`
	Options      []string        `json:"options"`
	People       []FormPersonDTO `json:"people"`
	PaymentURL   *string         `json:"paymentUrl"`
	// PaymentMethods are the payment methods the member may choose
	// (NextRequest.paymentMethod), the club's default first: listed on
	// the last question, empty on the other steps.
	PaymentMethods []string `json:"paymentMethods"`
}

// FormPersonDTO is one person of a FormDTO.
type FormPersonDTO struct {
	ID          int64   `json:"id"`
	FirstName   string  `json:"firstName"`
	LastName    string  `json:"lastName"`
	DateOfBirth string  `json:"dateOfBirth"`
	Answer      *string `json:"answer"`
	Hide        bool    `json:"hide"`
	Selected    bool    `json:"selected"`
	CanSelect   bool    `json:"canSelect"`
	Status      string  `json:"status"`
	PaymentURL  *string `json:"paymentUrl"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NewFormDTO converts the engine's form to the wire shape; methods are the
// club's payment methods (engine.Service.PaymentMethods).
func NewFormDTO(f *registration.Form, methods []string) FormDTO {
	dto := FormDTO{
		ProcessID: f.ProcessIDString(), Step: f.Step, ProcessState: string(f.State),
		PaymentURL: optional(f.PaymentURL), People: make([]FormPersonDTO, 0, len(f.People)),
		PaymentMethods: append(make([]string, 0, len(methods)), methods...),
	}
	if q := f.Question; q != nil {
		questionType := string(q.Type)
		dto.Question, dto.QuestionType, dto.Required = &q.Text, &questionType, &q.Required
		if len(q.Options) > 0 {
			dto.Options = make([]string, len(q.Options))
			for i, o := range q.Options {
				dto.Options[i] = o.Value
			}
		}
	}
	for _, p := range f.People {
		dto.People = append(dto.People, FormPersonDTO{
			ID: p.ID, FirstName: p.FirstName, LastName: p.LastName, DateOfBirth: p.DateOfBirth.Format("2006-01-02"),
			Answer: p.Answer, Hide: p.Hide, Selected: p.Selected, CanSelect: p.CanSelect, Status: p.Status,
			PaymentURL: optional(p.PaymentURL),
		})
	}
	return dto
}

// nextRequestWire is the raw shape of a next body; fields are checked one by
// one so that every problem is named. Unknown fields are ignored because
// clients commonly send back the whole FormPersonDTO they received.
type nextRequestWire struct {
	ProcessID json.RawMessage `json:"processId"`
	Step      json.RawMessage `json:"step"`
	// People is read as an array below, so that any other JSON value is
	// refused naming people, not the body.
	People json.RawMessage `json:"people"`
	// PaymentMethod is the member's choice among FormDTO.paymentMethods,
	// read when the last step commits.
	PaymentMethod json.RawMessage `json:"paymentMethod"`
}

type personWire struct {
	ID       json.RawMessage `json:"id"`
	Selected json.RawMessage `json:"selected"`
	Answer   json.RawMessage `json:"answer"`
}

// ParseNext decodes and checks a POST /api/forms/next body.
func ParseNext(body io.Reader) (registration.NextInput, error) {
	var in registration.NextInput
	var wire nextRequestWire
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if err := dec.Decode(&wire); err != nil {
		if tooLarge(err) {
			return in, err
		}
		return in, NewAPIError(400, "The request body is not valid JSON for this operation.", decodeProblem(err))
	}
	if dec.More() {
		return in, NewAPIError(400, "The request body must hold one JSON object.")
	}
	var fields []FieldErrorBody
	bad := func(field, msg string) { fields = append(fields, FieldErrorBody{Field: field, Message: msg}) }
	switch id, ok := scalarText(wire.ProcessID); {
	case wire.ProcessID == nil || isNull(wire.ProcessID):
		bad("processId", "is required")
	case !ok:
		bad("processId", "must be a string")
	case !registration.PlainText(id):
		bad("processId", "contains control characters or invalid text")
	default:
		in.ProcessID = id
	}
	if wire.Step == nil || isNull(wire.Step) {
		bad("step", "is required")
	} else if n, err := strconv.Atoi(string(wire.Step)); err != nil || n < 0 {
		bad("step", "must be a whole number, 0 or more")
	} else {
		in.Step = n
	}
	var people []json.RawMessage
	switch {
	case wire.People == nil || isNull(wire.People):
		bad("people", "is required (an array, possibly empty)")
	case json.Unmarshal(wire.People, &people) != nil:
		bad("people", "must be an array")
	}
	if wire.PaymentMethod != nil && !isNull(wire.PaymentMethod) {
		switch m, ok := scalarText(wire.PaymentMethod); {
		case !ok || !registration.PlainText(m):
			bad("paymentMethod", "must be the name of one of the paymentMethods")
		default:
			in.PaymentMethod = m
		}
	}
	if len(people) > 100 {
		bad("people", "has more than 100 entries")
		people = nil
	}
	for i, raw := range people {
		var pw personWire
		where := fmt.Sprintf("people[%d]", i)
		if err := json.Unmarshal(raw, &pw); err != nil {
			bad(where, "must be an object")
			continue
		}
		var p registration.PersonInput
		if id, err := strconv.ParseInt(string(pw.ID), 10, 64); err != nil || id <= 0 {
			bad(where+".id", "must be a positive whole number")
		} else {
			p.ID = id
		}
		if pw.Selected != nil && !isNull(pw.Selected) {
			var b bool
			if err := json.Unmarshal(pw.Selected, &b); err != nil {
				bad(where+".selected", "must be true or false")
			}
			p.Selected = &b
		}
		if pw.Answer != nil && !isNull(pw.Answer) {
			text, ok := scalarText(pw.Answer)
			if !ok {
				bad(where+".answer", "must be a string")
			}
			p.Answer = &text
		}
		in.People = append(in.People, p)
	}
	if len(fields) > 0 {
		return in, NewAPIError(400, "The request body has invalid fields.", fields...)
	}
	return in, nil
}

// tooLarge reports whether a read failed on the body limit, which must stay a 413.
func tooLarge(err error) bool {
	var he *echo.HTTPError
	return errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// scalarText reads a JSON string, or a number as its literal text (clients
// send answers like 1 and process ids like 42 unquoted).
func scalarText(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true
	}
	return "", false
}

// decodeProblem names what a decode error is about without echoing the
// input: the field whose value has the wrong type, else the body.
func decodeProblem(err error) FieldErrorBody {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		return FieldErrorBody{Field: typ.Field, Message: "must be " + jsonKind(typ.Type)}
	}
	return FieldErrorBody{Field: "body", Message: jsonProblem(err)}
}

// jsonKind is a Go type as the JSON value it is read from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// jsonProblem describes a decode error without echoing the input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == io.EOF:
		return "the body is empty"
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return "must be " + jsonKind(typ.Type)
	}
	return "malformed JSON"
}
