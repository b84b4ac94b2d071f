package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
	"portal/views"
)

// Flash keys of the operations pages (?done=).
const (
	flashJobRetried = "job-retried"
	flashJobRun     = "job-run"
)

// The result messages of the operations pages join the staff flashes.
func init() {
	staffFlashes[flashJobRetried] = func(c echo.Context) string { return staffOpsTextIn(c).JobRetried }
	staffFlashes[flashJobRun] = func(c echo.Context) string { return staffOpsTextIn(c).JobRunQueued }
}

// staffJobsPortalWide reports whether u sees the portal's own jobs (the
// schedules, no organisation's): administrators do.
func staffJobsPortalWide(u *staffUser) bool { return u.Role.AtLeast(staff.RoleAdmin) }

// staffJobsPage answers GET /staff/jobs: the organisation's failed and
// dead jobs with their last error, and a retry for registrars and up.
func (s *Server) staffJobsPage(c echo.Context) error {
	u := staffUserOf(c)
	list, err := staff.Of(s.engine).StaffJobs(c.Request().Context(), u.OrganisationID, staffJobsPortalWide(u))
	if err != nil {
		return s.staffEngineError(c, err)
	}
	m := views.StaffJobsModel{StaffChrome: s.staffChrome(c, staffOpsTextIn(c).JobsTitle)}
	for _, j := range list {
		row := views.StaffJobRow{ID: strconv.FormatInt(j.ID, 10), Kind: j.Kind, State: string(j.State),
			Attempts: strconv.Itoa(j.Attempts) + "/" + strconv.Itoa(j.MaxAttempts), Recipient: j.Recipient,
			Error: j.LastError, Due: staffDateTime(c, j.RunAt), PortalWide: j.OrganisationID == 0}
		if u.Role.AtLeast(staff.RoleRegistrar) {
			row.RetryURL = organisationPath(c, StaffPrefix+"/jobs/"+row.ID+"/retry")
		}
		m.Jobs = append(m.Jobs, row)
	}
	if u.Role.AtLeast(staff.RoleAdmin) {
		m.RunURL, m.RunKinds = organisationPath(c, StaffPrefix+"/jobs/run"), engine.ScheduledKinds
	}
	return staffRender(c, http.StatusOK, views.StaffJobsPage(m))
}

// staffRunJob answers POST /staff/jobs/run (administrators): a scheduled
// job runs now, once in the cluster (audited), then back to the list.
func (s *Server) staffRunJob(c echo.Context) error {
	u := staffUserOf(c)
	if _, err := staff.Of(s.engine).RunScheduledJob(c.Request().Context(), u.actor(), u.OrganisationID, c.FormValue("kind")); err != nil {
		return s.staffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, organisationPath(c, StaffPrefix+"/jobs?done="+flashJobRun))
}

// staffRetryJob answers POST /staff/jobs/{id}/retry: the job is due now
// with a fresh set of attempts (audited), then back to the list.
func (s *Server) staffRetryJob(c echo.Context) error {
	u := staffUserOf(c)
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	if err := staff.Of(s.engine).RetryStaffJob(c.Request().Context(), u.actor(), u.OrganisationID, staffJobsPortalWide(u), id); err != nil {
		return s.staffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, organisationPath(c, StaffPrefix+"/jobs?done="+flashJobRetried))
}
