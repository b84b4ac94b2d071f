package members

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/privacy"
	"portal/handlers/server"
	"portal/views"
	"portal/views/memberview"
)

// Personal data (issue 30): the member's "Your data" page, its JSON
// download and the request form. Every view of a person's data (this
// page, the staff person page in handlers/staff/registrations, the admin
// API's export) is the engine's one export (privacy.PersonalData), read
// as the same tables (handlers/server/personal_data.go).

// Member routes of the "Your data" page.
const (
	memberDataPath        = "/membership/data"
	memberDataJSONPath    = "/membership/data.json"
	memberDataRequestPath = "/membership/data/request"
)

// MountPersonalData adds the member routes.
func (s *Server) MountPersonalData(e *echo.Echo) {
	e.GET(memberDataPath, s.memberDataPage)
	e.GET(memberDataJSONPath, s.memberDataDownload)
	e.POST(memberDataRequestPath, s.memberDataRequest)
}

// memberHousehold is the signed-in household of a member page and its
// organisation, or what to answer instead (browserSession).
func (s *Server) memberHousehold(c echo.Context) (orgID int64, userKey string, ok bool, err error) {
	sess, ok, err := s.BrowserSession(c)
	if !ok {
		return 0, "", false, err
	}
	t := server.OrganisationOfRequest(c)
	if t == nil {
		return 0, "", false, s.AccessDenied(c, "session")
	}
	return t.ID, sess.UserKey, true, nil
}

// memberDataPage answers GET /membership/data: what the club holds about
// the signed-in household, in the member's language.
func (s *Server) memberDataPage(c echo.Context) error {
	orgID, key, ok, err := s.memberHousehold(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	x, err := privacy.Of(s.engine).ExportHousehold(ctx, orgID, key)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return s.AccessDenied(c, "session")
		}
		return err
	}
	t := views.PersonalDataTextIn(ctx)
	m := memberview.PersonalDataModel{Chrome: s.Chrome(t.Title), T: t, Tables: server.PersonalDataTables(server.LangOf(c), t, x),
		DownloadURL: server.OrganisationPath(c, memberDataJSONPath), RequestURL: server.OrganisationPath(c, memberDataRequestPath)}
	for _, p := range x.Persons {
		m.Persons = append(m.Persons, views.DataChoice{Value: strconv.FormatInt(p.ID, 10), Label: p.FirstName + " " + p.LastName})
	}
	status := http.StatusOK
	switch {
	case c.QueryParam("sent") == "1":
		m.Notice = t.RequestSent
	case c.QueryParam("error") == "request":
		m.Problem, status = t.RequestInvalid, http.StatusUnprocessableEntity
	case c.QueryParam("error") == "limit":
		m.Problem, status = t.RequestLimit, http.StatusTooManyRequests
	}
	return server.Render(c, status, memberview.PersonalData(m))
}

// memberDataDownload answers GET /membership/data.json: the household's
// export as a file.
func (s *Server) memberDataDownload(c echo.Context) error {
	orgID, key, ok, err := s.memberHousehold(c)
	if !ok {
		return err
	}
	x, err := privacy.Of(s.engine).ExportHousehold(c.Request().Context(), orgID, key)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return s.AccessDenied(c, "session")
		}
		return err
	}
	return server.PersonalDataDownload(c, x, "personal-data.json")
}

// memberDataRequest answers POST /membership/data/request (kind, person,
// writer: who of the household writes, message): the request is stored and sent to the club, then 303 back
// to the page, which thanks the member or says what was wrong, or, over
// the household's requests a day (privacy.MaxDataRequestsPerDay), that it
// was not sent and when to try again (429).
func (s *Server) memberDataRequest(c echo.Context) error {
	orgID, key, ok, err := s.memberHousehold(c)
	if !ok {
		return err
	}
	r := privacy.NewDataRequest{Kind: c.FormValue("kind"), Message: c.FormValue("message")}
	for field, to := range map[string]**int64{"person": &r.PersonID, "writer": &r.WriterID} {
		if p := c.FormValue(field); p != "" {
			id, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?error=request#request")
			}
			*to = &id
		}
	}
	if _, err := privacy.Of(s.engine).RequestDataChange(c.Request().Context(), orgID, key, r); err != nil {
		switch engine.ErrorCode(err) {
		case engine.CodeInvalid, engine.CodeNotFound:
			return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?error=request#request")
		case engine.CodeTooMany:
			return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?error=limit#request")
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?sent=1")
}
