package registrations

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine/clock"
	"portal/engine/organisation"
	"portal/engine/report"
	"portal/engine/staff"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// RegistrationsPath is the registrations list below StaffPrefix.
const RegistrationsPath = "/registrations"

// StateLabel is a registration state as the pages name it.
func StateLabel(c echo.Context, r staff.RegistrationState) string {
	switch r {
	case staff.RegSuspended:
		return staffpage.StaffTextIn(c).StateSuspended
	case staff.RegAwaitingPayment:
		return staffpage.StaffTextIn(c).StateAwaitingPayment
	case staff.RegPaid:
		return staffpage.StaffTextIn(c).StatePaid
	case staff.RegCancelled:
		return staffpage.StaffTextIn(c).StateCancelled
	}
	return staffpage.StaffTextIn(c).StateInProgress
}

// registrationQuery reads the list's filters from the query string;
// a filter that does not parse is an error the page names.
func registrationQuery(c echo.Context, orgID int64) (staff.RegistrationQuery, bool) {
	q := staff.RegistrationQuery{OrganisationID: orgID, Search: c.QueryParam("q"), State: staff.RegistrationState(c.QueryParam("state")),
		Sort: staff.RegistrationSort(c.QueryParam("sort"))}
	ok := true
	num := func(name string) int64 {
		raw := strings.TrimSpace(c.QueryParam(name))
		if raw == "" {
			return 0
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 || n > 1<<31 {
			ok = false
			return 0
		}
		return n
	}
	q.PeriodID, q.MembershipTypeID, q.UnpaidDays, q.Page = num("period"), num("type"), int(num("unpaid")), int(num("page"))
	if q.State != "" && !slices.Contains(staff.RegistrationStates, q.State) {
		ok = false
	}
	if len(q.Search) > 200 || !slices.Contains(staff.RegistrationSorts, q.Sort) {
		ok = false
	}
	return q, ok
}

// ListURL is the list's address with q's filters and page.
func ListURL(c echo.Context, path string, q staff.RegistrationQuery, page int) string {
	v := url.Values{}
	if q.Search != "" {
		v.Set("q", q.Search)
	}
	if q.PeriodID != 0 {
		v.Set("period", strconv.FormatInt(q.PeriodID, 10))
	}
	if q.State != "" {
		v.Set("state", string(q.State))
	}
	if q.MembershipTypeID != 0 {
		v.Set("type", strconv.FormatInt(q.MembershipTypeID, 10))
	}
	if q.UnpaidDays != 0 {
		v.Set("unpaid", strconv.Itoa(q.UnpaidDays))
	}
	if q.Sort != staff.SortRegNewest {
		v.Set("sort", string(q.Sort))
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	u := staffpage.RequestOf(c).StaffPath(path)
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// StaffRegistrations answers GET /staff/registrations: search, filters
// (period, state, membership type, unpaid for more than N days) and pages
// of 50, newest first or sorted by the amount owed or the days unpaid
// (sort=owed, owed-asc, unpaid, unpaid-asc).
func (s *Server) StaffRegistrations(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	q, ok := registrationQuery(c, u.OrganisationID)
	if !ok {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	ctx := c.Request().Context()
	page, err := staff.Of(s.engine).Registrations(ctx, q)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	periods, err := organisation.Of(s.engine).Periods(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	types, err := organisation.Of(s.engine).MembershipTypes(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m := staffview.RegistrationsModel{Chrome: s.StaffChrome(c, staffpage.StaffTextIn(c).RegTitle), Action: staffpage.RequestOf(c).StaffPath(RegistrationsPath),
		Search: q.Search, Total: page.Total, Sort: string(q.Sort),
		PageText: fmt.Sprintf(staffpage.StaffTextIn(c).RegPageText, page.Total, page.Page, page.PageCount)}
	if q.UnpaidDays > 0 {
		m.UnpaidDays = strconv.Itoa(q.UnpaidDays)
	}
	periodsByID := map[int64]string{}
	m.Periods = []staffview.Option{{Value: "", Label: staffpage.StaffTextIn(c).RegAll}}
	for _, p := range periods {
		periodsByID[p.ID] = p.Name
		m.Periods = append(m.Periods, staffview.Option{Value: strconv.FormatInt(p.ID, 10), Label: p.Name, Selected: p.ID == q.PeriodID})
	}
	m.States = []staffview.Option{{Value: "", Label: staffpage.StaffTextIn(c).RegAll}}
	for _, st := range staff.RegistrationStates {
		m.States = append(m.States, staffview.Option{Value: string(st), Label: StateLabel(c, st), Selected: st == q.State})
	}
	m.Types = []staffview.Option{{Value: "", Label: staffpage.StaffTextIn(c).RegAll}}
	for _, t := range types {
		m.Types = append(m.Types, staffview.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name, Selected: t.ID == q.MembershipTypeID})
	}
	lt := staffview.ListTextIn(c.Request().Context())
	m.OwedSort = sortLink(c, q, lt.Owed, staff.SortRegOwedDesc, staff.SortRegOwedAsc)
	m.DaysSort = sortLink(c, q, lt.DaysUnpaid, staff.SortRegUnpaidDesc, staff.SortRegUnpaidAsc)
	for _, r := range page.Rows {
		st := staff.RegistrationStateOf(r.Status)
		row := staffview.RegistrationRow{URL: RegistrationURL(c, r.ID), ID: strconv.FormatInt(r.ID, 10), Household: strings.Join(r.Household, ", "),
			UserKey: r.UserKey, State: StateLabel(c, st), StateKey: string(st), Started: staffpage.StaffDateTime(c, r.StartTime), Updated: staffpage.StaffDateTime(c, r.UpdatedAt),
			LinkLabel: fmt.Sprintf(lt.OpenRegistration, strconv.FormatInt(r.ID, 10))}
		if row.Household == "" {
			row.Household = lt.NoPersonsYet
		}
		if r.Reference != nil {
			row.Reference = *r.Reference
		}
		if r.Total != nil && r.Currency != nil {
			row.Total = staffpage.StaffMoney(c, *r.Total, *r.Currency)
			if r.OwedMinor != nil {
				row.Owed, row.DaysUnpaid = staffpage.StaffMoney(c, *r.OwedMinor, *r.Currency), strconv.Itoa(r.DaysUnpaid)
				row.DaysText = fmt.Sprintf(lt.DaysCount, r.DaysUnpaid)
			}
		}
		m.Rows = append(m.Rows, row)
	}
	if page.Page > 1 {
		m.PrevURL = ListURL(c, RegistrationsPath, q, page.Page-1)
	}
	if page.Page < page.PageCount {
		m.NextURL = ListURL(c, RegistrationsPath, q, page.Page+1)
	}
	if u.Role.AtLeast(staff.RoleTreasurer) {
		m.CSVURL = ListURL(c, RegistrationsPath+".csv", q, 1)
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.Registrations(m))
}

// sortLink is a sortable column's header: its link sorts by the column,
// largest first (desc), or smallest first when already so sorted.
func sortLink(c echo.Context, q staff.RegistrationQuery, label string, desc, asc staff.RegistrationSort) staffview.SortLink {
	lt := staffview.ListTextIn(c.Request().Context())
	l := staffview.SortLink{Label: label}
	next := desc
	switch q.Sort {
	case desc:
		l.State, l.Note, next = "descending", lt.SortedDesc, asc
	case asc:
		l.State, l.Note = "ascending", lt.SortedAsc
	}
	l.Title = fmt.Sprintf(map[bool]string{true: lt.SortDesc, false: lt.SortAsc}[next == desc], label)
	q.Sort = next
	l.URL = ListURL(c, RegistrationsPath, q, 1)
	return l
}

// RegistrationURL is the detail page of a registration.
func RegistrationURL(c echo.Context, id int64) string {
	return staffpage.RequestOf(c).StaffPath(RegistrationPath(id))
}

// RegistrationPath is the path of a registration's staff page below /staff.
func RegistrationPath(id int64) string { return RegistrationsPath + "/" + strconv.FormatInt(id, 10) }

// StaffRegistrationsCSV answers GET /staff/registrations.csv (treasurer
// and up): every registration the filters select, streamed.
func (s *Server) StaffRegistrationsCSV(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	q, ok := registrationQuery(c, u.OrganisationID)
	if !ok {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	if err := s.recordListExport(c, "registrations.csv"); err != nil { // the access log: persons.go
		return s.StaffEngineError(c, err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="registrations-`+clock.Now().UTC().Format("2006-01-02")+`.csv"`)
	w := csv.NewWriter(c.Response())
	started := false
	err := staff.Of(s.engine).RegistrationsCSV(c.Request().Context(), q, func(rec []string) error {
		if !started {
			c.Response().WriteHeader(http.StatusOK)
			started = true
		}
		for i, v := range rec {
			rec[i] = report.CSVCell(v)
		}
		return w.Write(rec)
	})
	if err != nil {
		if !started {
			return s.StaffEngineError(c, err)
		}
		s.LogFor(c).Error("registrations export broke off", "err", err)
		return nil
	}
	w.Flush()
	return w.Error()
}
