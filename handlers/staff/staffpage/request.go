package staffpage

import (
	"context"

	"github.com/labstack/echo/v4"

	"portal/handlers/server"
	"portal/views/lang"
	"portal/views/staffview"
)

// Request is what a staff page needs to know of its request: the signed-in
// member of staff and their role, the organisation, the language, and the
// path prefix the organisation is addressed under. It is computed once per
// request (RequireStaff, or the first RequestOf of a page outside the staff
// check such as the sign-in) and kept in the request's context; the
// handler, the frame (StaffChrome), the error and confirmation pages and
// the rows of a page's view model all read that one value rather than
// asking the context, the session or the organisation again.
type Request struct {
	// User is the signed-in member of staff; nil outside the staff check
	// (the sign-in page, its errors).
	User *StaffUser
	// Organisation is the request's organisation; nil on a path that
	// resolved to none.
	Organisation *server.Organisation
	// Language is the language the page is shown in.
	Language lang.Language
	// Base is the organisation's path prefix (/o/{slug}), "" when it is
	// addressed by a hostname of its own.
	Base string
	// Texts are the staff pages' texts in Language.
	Texts *staffview.Texts
}

// Path puts the organisation's prefix before a path of this site.
func (r *Request) Path(p string) string { return r.Base + p }

// StaffPath is the address of a staff page: p below /staff, with the
// organisation's prefix.
func (r *Request) StaffPath(p string) string { return r.Base + server.StaffPrefix + p }

// OrganisationID is the signed-in member of staff's organisation; 0
// outside the staff check.
func (r *Request) OrganisationID() int64 {
	if r.User == nil {
		return 0
	}
	return r.User.OrganisationID
}

type requestKey struct{}

// newRequest computes the staff context of c for the member of staff u
// (nil: none signed in). onNewRequest, when set (by a test), is told of
// every computation.
func newRequest(c echo.Context, u *StaffUser) *Request {
	if onNewRequest != nil {
		onNewRequest()
	}
	ctx := c.Request().Context()
	r := &Request{User: u, Organisation: server.OrganisationOfRequest(c), Language: lang.Of(ctx), Texts: staffview.TextIn(ctx)}
	if r.Organisation != nil {
		r.Base = r.Organisation.Brand.Base
	}
	return r
}

// onNewRequest is a test's counter of newRequest; nil in the server.
var onNewRequest func()

// WithUser computes the request's staff context for the signed-in member
// of staff u and keeps it for the rest of the request: the staff check
// (RequireStaff) and the admin API's staff sessions call it once.
func WithUser(c echo.Context, u *StaffUser) *Request {
	r := newRequest(c, u)
	req := c.Request()
	c.SetRequest(req.WithContext(context.WithValue(req.Context(), requestKey{}, r)))
	return r
}

// RequestOf returns the request's staff context. Behind the staff check it
// is the one RequireStaff computed; elsewhere (the sign-in page and its
// errors) it is computed on first use, without a member of staff, and kept.
func RequestOf(c echo.Context) *Request {
	if r, ok := c.Request().Context().Value(requestKey{}).(*Request); ok {
		return r
	}
	return WithUser(c, nil)
}

// StaffUserOf returns the request's staff member; nil outside the staff check.
func StaffUserOf(c echo.Context) *StaffUser {
	if r, ok := c.Request().Context().Value(requestKey{}).(*Request); ok {
		return r.User
	}
	return nil
}
