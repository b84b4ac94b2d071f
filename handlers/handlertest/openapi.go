package handlertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// APIChecker sends requests to a running test server and validates every
// response against the document; it records which documented responses
// were seen.
type APIChecker struct {
	T      *testing.T
	Env    *Env
	Router routers.Router
	Opts   *openapi3filter.Options
	Seen   map[string]bool // "POST /api/forms/next 409"
}

// BodyBytes is body as a request sends it: nil, a string, bytes, or JSON.
func BodyBytes(t *testing.T, body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
}

// Do sends a request with env.do and validates the response against the document.
func (ck *APIChecker) Do(c *http.Client, method, path string, body any, headers ...string) Response {
	ck.T.Helper()
	res := ck.Env.Do(c, method, path, body, headers...)
	ck.Validate(ck.Request(method, path, body, headers...), res)
	return res
}

// Conforming is do for a request that must itself conform to the document.
func (ck *APIChecker) Conforming(c *http.Client, method, path string, body any, headers ...string) Response {
	ck.T.Helper()
	req := ck.Request(method, path, body, headers...)
	route, params, err := ck.Router.FindRoute(req)
	if err != nil {
		ck.T.Fatalf("%s %s: no route in the document: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: ck.Opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		ck.T.Errorf("%s %s: the request does not conform to the document: %v", method, path, err)
	}
	return ck.Do(c, method, path, body, headers...)
}

// Request rebuilds the request env.do sends, for routing and validation.
func (ck *APIChecker) Request(method, path string, body any, headers ...string) *http.Request {
	ck.T.Helper()
	raw := BodyBytes(ck.T, body)
	req, err := http.NewRequest(method, ck.Env.Server.URL+path, bytes.NewReader(raw))
	if err != nil {
		ck.T.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// Validate fails the test if the exchange does not match the OpenAPI document.
func (ck *APIChecker) Validate(req *http.Request, res Response) {
	ck.T.Helper()
	if err := ck.Check(req, res); err != nil {
		ck.T.Errorf("%s %s -> %d %s: %v", req.Method, req.URL.RequestURI(), res.Status, res.Body, err)
	}
}

// Check validates one response against the document and records it as seen.
func (ck *APIChecker) Check(req *http.Request, res Response) error {
	route, params, err := ck.Router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("no route in the document: %w", err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: ck.Opts},
		Status:                 res.Status,
		Header:                 res.Header,
		Options:                ck.Opts,
	}
	in.SetBodyBytes(res.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("the response violates the document: %w", err)
	}
	ref := route.Operation.Responses.Status(res.Status)
	if len(ref.Value.Content) == 0 {
		if len(res.Body) != 0 {
			return errors.New("the document promises an empty body")
		}
	} else if ct := res.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/csv") || ct == "application/yaml" || strings.HasPrefix(ct, "application/xml") {
		// An export, a definition or a bank file in another format: the validation above is all there is to check.
	} else {
		var value any
		if err := json.Unmarshal(res.Body, &value); err != nil {
			return fmt.Errorf("the body is not JSON: %w", err)
		}
		media := ref.Value.Content.Get(res.Header.Get("Content-Type"))
		if extra := Undocumented(media.Schema.Value, value, "body"); len(extra) > 0 {
			return fmt.Errorf("members not in the document: %s", strings.Join(extra, ", "))
		}
	}
	ck.Seen[fmt.Sprintf("%s %s %d", req.Method, route.Path, res.Status)] = true
	return nil
}

// Undocumented lists the object members of v that its schema does not name.
func Undocumented(s *openapi3.Schema, v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if len(s.Properties) == 0 {
			return nil
		}
		for k, member := range v {
			p, ok := s.Properties[k]
			if !ok {
				out = append(out, at+"."+k)
				continue
			}
			out = append(out, Undocumented(p.Value, member, at+"."+k)...)
		}
	case []any:
		if s.Items == nil {
			return nil
		}
		for i, item := range v {
			out = append(out, Undocumented(s.Items.Value, item, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return out
}

// DecodeForm decodes a FormDTO, failing the test on another status.
func DecodeForm(t *testing.T, res Response, status int) Form {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	var f Form
	res.JSON(t, &f)
	return f
}

// WantStatus fails the test unless res has status.
func WantStatus(t *testing.T, res Response, status int) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}

// PayDTO settles the payment of paymentURL with success at the test gateway.
func PayDTO(t *testing.T, env *Env, c *http.Client, paymentURL string) {
	t.Helper()
	u := env.Checkout(c, paymentURL)
	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+u.Path, strings.NewReader("status=success"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	ret, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil {
		t.Fatalf("gateway answered %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if page := env.Do(c, http.MethodGet, ret.RequestURI(), nil); page.Status != http.StatusOK {
		t.Fatalf("payment return: %d %s", page.Status, page.Body)
	}
}
