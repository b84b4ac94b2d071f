package staff

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// Flash keys of the operations pages (?done=).
const (
	flashJobRetried = "job-retried"
	flashJobRun     = "job-run"
)

// The result messages of the operations pages join the staff flashes.
func init() {
	staffpage.StaffFlashes[flashJobRetried] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).JobRetried }
	staffpage.StaffFlashes[flashJobRun] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).JobRunQueued }
}

// staffJobsPortalWide reports whether u sees the portal's own jobs (the
// schedules, no organisation's): administrators do.
func staffJobsPortalWide(u *staffpage.StaffUser) bool { return u.Role.AtLeast(staff.RoleAdmin) }

// staffJobsPage answers GET /staff/jobs: the organisation's failed and
// dead jobs with their last error, and a retry for registrars and up.
func (s *Server) staffJobsPage(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	list, err := staff.Of(s.engine).StaffJobs(c.Request().Context(), u.OrganisationID, staffJobsPortalWide(u))
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m := staffview.JobsModel{Chrome: s.StaffChrome(c, staffpage.StaffOpsTextIn(c).JobsTitle)}
	for _, j := range list {
		row := staffview.JobRow{ID: strconv.FormatInt(j.ID, 10), Kind: j.Kind, State: string(j.State),
			Attempts: strconv.Itoa(j.Attempts) + "/" + strconv.Itoa(j.MaxAttempts), Recipient: j.Recipient,
			Error: j.LastError, Due: staffpage.StaffDateTime(c, j.RunAt), PortalWide: j.OrganisationID == 0}
		if u.Role.AtLeast(staff.RoleRegistrar) {
			row.RetryURL = staffpage.RequestOf(c).StaffPath("/jobs/" + row.ID + "/retry")
		}
		m.Jobs = append(m.Jobs, row)
	}
	if u.Role.AtLeast(staff.RoleAdmin) {
		m.RunURL, m.RunKinds = staffpage.RequestOf(c).StaffPath("/jobs/run"), engine.ScheduledKinds
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.Jobs(m))
}

// staffRunJob answers POST /staff/jobs/run (administrators): a scheduled
// job runs now, once in the cluster (audited), then back to the list.
func (s *Server) staffRunJob(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	if _, err := staff.Of(s.engine).RunScheduledJob(c.Request().Context(), u.Actor(), u.OrganisationID, c.FormValue("kind")); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath("/jobs?done="+flashJobRun))
}

// staffRetryJob answers POST /staff/jobs/{id}/retry: the job is due now
// with a fresh set of attempts (audited), then back to the list.
func (s *Server) staffRetryJob(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if err := staff.Of(s.engine).RetryStaffJob(c.Request().Context(), u.Actor(), u.OrganisationID, staffJobsPortalWide(u), id); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath("/jobs?done="+flashJobRetried))
}
