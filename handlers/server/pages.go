package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/relay/session"
	"portal/static"
	"portal/views"
)

// Access-denied reasons: the `error` query value of a denied hash link;
// each shows its message denied_<reason>.
var deniedReasons = map[string]bool{"missing": true, "invalid": true, "period": true, "session": true, "links_off": true}

func (s *Server) Chrome(title string) views.Chrome {
	return views.Chrome{Title: title, Assets: views.Assets{CSS: static.URL("app.css"), HTMX: static.URL("htmx.min.js"), App: static.URL("app.js")}}
}

// AccessDenied renders the access-denied page for a reason.
func (s *Server) AccessDenied(c echo.Context, reason string) error {
	if !deniedReasons[reason] {
		reason = "default"
	}
	m := views.ErrorModel{Chrome: s.Chrome(Tr(c, "denied_title")), Message: Tr(c, "denied_"+reason)}
	return Render(c, http.StatusForbidden, views.ErrorPage(m))
}

// RegisterPath is the clean address of a period's registration, plus an optional sub-path.
func RegisterPath(c echo.Context, periodID int64, sub ...string) string {
	p := fmt.Sprintf("/membership/register/%d", periodID)
	if len(sub) > 0 {
		p += "/" + strings.Join(sub, "/")
	}
	return OrganisationPath(c, p) // under /o/{slug} when the request came so
}

// StepParam is the question number of a step address (1 or more).
func StepParam(c echo.Context) (int, bool) {
	n, err := strconv.Atoi(c.Param("n"))
	return n, err == nil && n >= 1
}

// BrowserSession returns the signed-in user of a page request, or renders
// what the member needs instead: a page that carries a cross-site arrival
// over (SameSite=Strict withholds the cookie on the first, cross-site
// request), or access denied.
func (s *Server) BrowserSession(c echo.Context) (*session.Session, bool, error) {
	req := c.Request()
	sess, err := s.SessionFor(c) // organisation_scope.go: a session of another organisation is none
	MarkSessionLoaded(req.Context())
	switch {
	case err == nil && sess.UserKey != "":
		return sess, true, nil
	case err != nil && !errors.Is(err, session.ErrNotFound):
		return nil, false, SessionStoreError(err)
	}
	if req.Method == http.MethodGet && req.Header.Get("Sec-Fetch-Site") == "cross-site" && req.URL.Query().Get("continue") == "" {
		target := req.URL.Path + "?continue=1"
		m := views.ContinueModel{Chrome: s.Chrome(Tr(c, "title_continue")), URL: target}
		return nil, false, Render(c, http.StatusOK, views.ContinuePage(m))
	}
	return nil, false, s.AccessDenied(c, "session")
}
