package registrations

import (
	"bytes"
	"cmp"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/invitation"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/relay/hashlink"
	"portal/views/staffview"
)

// staffPersonsPageSize is how many persons the invitations page lists.
const staffPersonsPageSize = 100

// StaffInvitationsPage answers GET /staff/invitations?from=N: the person
// import and the organisation's persons with their user keys.
func (s *Server) StaffInvitationsPage(c echo.Context) error {
	return s.renderStaffInvitations(c, http.StatusOK, "")
}

func (s *Server) renderStaffInvitations(c echo.Context, status int, uploadError string) error {
	return s.renderInvitations(c, status, invitationsState{uploadError: uploadError})
}

// invitationsState is what a POST adds to the invitations page: a problem
// of the uploaded file, the send form as submitted, or what a send did.
type invitationsState struct {
	uploadError string
	form        *staffview.InviteForm
	sent        *staffview.InviteResult
}

func (s *Server) renderInvitations(c echo.Context, status int, st invitationsState) error {
	u := staffpage.StaffUserOf(c)
	ctx := c.Request().Context()
	from, _ := strconv.Atoi(c.QueryParam("from"))
	from = max(from, 0)
	search := strings.TrimSpace(c.QueryParam("q"))
	persons, more, err := staff.Of(s.engine).PersonsPage(ctx, u.OrganisationID, search, from, staffPersonsPageSize)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m := staffview.InvitationsModel{Chrome: s.StaffChrome(c, staffpage.StaffOpsTextIn(c).InvitationsTitle),
		ImportURL: staffpage.RequestOf(c).StaffPath(server.StaffImportPath), Error: st.uploadError, Sent: st.sent,
		PersonsURL: staffpage.RequestOf(c).StaffPath("/invitations"), PersonSearch: search}
	for _, p := range persons {
		row := staffview.DirectoryRow{Name: p.Person.FirstName + " " + p.Person.LastName, Born: staffpage.StaffDate(c, p.Person.DateOfBirth),
			Email: p.Person.Email, UserKeys: strings.Join(p.UserKeys, ", ")}
		if p.Person.ExternalID != nil {
			row.ExternalID = *p.Person.ExternalID
		}
		m.Persons = append(m.Persons, row)
	}
	if more {
		m.MoreURL = staffpage.RequestOf(c).StaffPath("/invitations?" + url.Values{"q": {search}, "from": {strconv.Itoa(from + staffPersonsPageSize)}}.Encode())
	}
	if err := s.addInvitations(c, &m, st.form); err != nil {
		return s.StaffEngineError(c, err)
	}
	return staffpage.StaffRender(c, status, staffview.Invitations(m))
}

// addInvitations fills in the period choice, the send form (st.form when
// one was submitted) and the period's invitations with their counts. A
// period that is not the organisation's is not found.
func (s *Server) addInvitations(c echo.Context, m *staffview.InvitationsModel, form *staffview.InviteForm) error {
	u := staffpage.StaffUserOf(c)
	ctx := c.Request().Context()
	m.PeriodURL = staffpage.RequestOf(c).StaffPath("/invitations")
	periods, err := organisation.Of(s.engine).Periods(ctx, u.OrganisationID)
	if err != nil || len(periods) == 0 {
		return err
	}
	periodID := staffpage.CurrentPeriod(periods, clock.Now())
	if raw := c.FormValue("period"); raw != "" {
		if periodID, err = strconv.ParseInt(raw, 10, 64); err != nil {
			return engine.Errorf(engine.CodeNotFound, "period not found")
		}
	}
	var period *engine.MembershipPeriod
	for i, p := range periods {
		m.Periods = append(m.Periods, staffview.Option{Value: strconv.FormatInt(p.ID, 10), Label: p.Name, Selected: p.ID == periodID})
		if p.ID == periodID {
			period = &periods[i]
		}
	}
	if period == nil {
		return engine.Errorf(engine.CodeNotFound, "period not found")
	}
	if form == nil {
		form = &staffview.InviteForm{Whom: "all", Days: strconv.Itoa(int(engine.DefaultInvitationExpiry / (24 * time.Hour))), Mail: true}
	}
	form.PeriodID = strconv.FormatInt(period.ID, 10)
	if period.Status == engine.PeriodOpen {
		form.Action = staffpage.RequestOf(c).StaffPath(server.StaffInvitePath)
	}
	m.Send = *form
	list, err := invitation.Of(s.engine).Invitations(ctx, u.OrganisationID, period.ID)
	if err != nil {
		return err
	}
	counts := map[invitation.State]int{}
	for _, inv := range list {
		counts[inv.State]++
		row := staffview.InvitationRow{UserKey: inv.UserKey, Persons: strings.Join(inv.Persons, ", "), StateKey: string(inv.State),
			State: invitationStateLabel(c, inv.State), Created: staffpage.StaffDateTime(c, inv.CreatedAt), Expires: staffpage.StaffDateTime(c, inv.ExpiresAt)}
		if inv.State != invitation.InvitationRevoked && inv.State != invitation.InvitationExpired {
			row.RevokeURL = staffpage.RequestOf(c).StaffPath("/invitations/" + strconv.FormatInt(inv.ID, 10) + "/revoke")
		}
		m.Invitations = append(m.Invitations, row)
	}
	for _, state := range invitationStates {
		m.Counts = append(m.Counts, staffview.CountLink{Key: string(state), Label: invitationStateLabel(c, state), Count: counts[state]})
	}
	return nil
}

// invitationStates are the states in the order the page counts them.
var invitationStates = []invitation.State{invitation.InvitationInvited, invitation.InvitationSent, invitation.InvitationOpened,
	invitation.InvitationRegistered, invitation.InvitationPaid, invitation.InvitationExpired, invitation.InvitationRevoked}

// invitationStateLabel is how the page names a state.
func invitationStateLabel(c echo.Context, st invitation.State) string {
	switch st {
	case invitation.InvitationSent:
		return staffpage.StaffOpsTextIn(c).InvStateSent
	case invitation.InvitationOpened:
		return staffpage.StaffOpsTextIn(c).InvStateOpened
	case invitation.InvitationRegistered:
		return staffpage.StaffOpsTextIn(c).InvStateRegistered
	case invitation.InvitationPaid:
		return staffpage.StaffOpsTextIn(c).InvStatePaid
	case invitation.InvitationExpired:
		return staffpage.StaffOpsTextIn(c).InvStateExpired
	case invitation.InvitationRevoked:
		return staffpage.StaffOpsTextIn(c).InvStateRevoked
	}
	return staffpage.StaffOpsTextIn(c).InvStateInvited
}

// StaffSendInvitations answers POST /staff/invitations/send: invites every
// linked household or the chosen persons (by external id) to the period,
// with links valid for the given days, e-mailed when asked. Errors are
// shown per field and change nothing; the result lists who was left out.
func (s *Server) StaffSendInvitations(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form := &staffview.InviteForm{Whom: c.FormValue("whom"), ExternalIDs: c.FormValue("externalIds"),
		Days: strings.TrimSpace(c.FormValue("days")), Mail: c.FormValue("mail") == "1", Errors: map[string]string{}}
	periodID, err := strconv.ParseInt(c.FormValue("period"), 10, 64)
	if err != nil {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).Invalid)
	}
	req := invitation.Request{PeriodID: periodID, Send: form.Mail}
	switch form.Whom {
	case "all":
		req.All = true
	case "chosen":
		req.ExternalIDs = strings.FieldsFunc(form.ExternalIDs, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
		if len(req.ExternalIDs) == 0 {
			form.Errors["externalIds"] = staffpage.StaffOpsTextIn(c).InvWhomMissing
		}
	default:
		form.Errors["whom"] = staffpage.StaffOpsTextIn(c).InvWhomMissing
	}
	days, err := strconv.Atoi(form.Days)
	if err != nil || days < 1 || days > 366 {
		form.Errors["days"] = staffpage.StaffOpsTextIn(c).InvDaysInvalid
	}
	req.Expires = time.Duration(days) * 24 * time.Hour
	if len(form.Errors) == 0 {
		rep, err := invitation.Of(s.engine).CreateInvitations(c.Request().Context(), u.Actor(), u.OrganisationID, req)
		if err == nil {
			sent := &staffview.InviteResult{Invited: len(rep.Created)}
			for _, k := range rep.Skipped {
				sent.Skipped = append(sent.Skipped, staffview.InviteSkip{Who: cmp.Or(k.ExternalID, k.UserKey), Reason: k.Reason})
			}
			return s.renderInvitations(c, http.StatusOK, invitationsState{sent: sent})
		}
		e, ok := engine.AsError(err)
		if !ok || e.Code == engine.CodeUnavailable || e.Code == engine.CodeNotFound {
			return s.StaffEngineError(c, err)
		}
		for _, f := range e.Fields {
			form.Errors[f.Field] = f.Message
		}
		form.Error = e.Message
	}
	if form.Error == "" {
		form.Error = staffpage.StaffOpsTextIn(c).InvErrors
	}
	return s.renderInvitations(c, http.StatusUnprocessableEntity, invitationsState{form: form})
}

// StaffRevokeInvitation answers POST /staff/invitations/{id}/revoke, after
// asking: the link is refused from then on.
func (s *Server) StaffRevokeInvitation(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	back := staffpage.RequestOf(c).StaffPath("/invitations")
	id, proceed, err := s.StaffConfirmedID(c, staffpage.StaffOpsTextIn(c).InvRevokeQuestion, staffpage.StaffOpsTextIn(c).InvRevokeDetail, back)
	if !proceed {
		return err
	}
	inv, err := invitation.Of(s.engine).RevokeInvitation(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, back+"?period="+strconv.FormatInt(inv.PeriodID, 10)+"&done="+flashInvRevoked)
}

// flashInvRevoked is the invitations page's flash after a revocation.
const flashInvRevoked = "invitation-revoked"

func init() {
	staffpage.StaffFlashes[flashInvRevoked] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).InvRevoked }
}

// StaffImportPersons answers POST /staff/invitations/import. A chosen CSV
// file is imported in a transaction rolled back, and its changes shown
// with a form that posts the same file back with apply=1, which imports
// it (audited). The import is an upsert: applying twice changes nothing
// more. Rows in error are listed, and nothing is applied until they are
// corrected.
func (s *Server) StaffImportPersons(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	data, fromCopy, err := staffpage.StaffUpload(c, "csv")
	if status, problem, ok := staffpage.UploadProblem(err, staffpage.StaffOpsTextIn(c).ImportTooLarge, staffpage.StaffOpsTextIn(c).ImportMissing); ok {
		return s.renderStaffInvitations(c, status, problem)
	} else if err != nil {
		return err
	}
	rows, err := organisation.ParsePersonCSV(bytes.NewReader(data))
	if err != nil {
		if e, ok := engine.AsError(err); ok {
			return s.renderStaffInvitations(c, http.StatusUnprocessableEntity, e.Message)
		}
		return err
	}
	if len(rows) == 0 {
		return s.renderStaffInvitations(c, http.StatusUnprocessableEntity, staffpage.StaffOpsTextIn(c).ImportEmpty)
	}
	apply := fromCopy && c.FormValue("apply") == "1"
	actor := u.Actor()
	rep, err := organisation.Of(s.engine).StaffImportPersons(c.Request().Context(), u.OrganisationID, rows, hashlink.ValidUserKey,
		organisation.PersonImportOptions{DryRun: !apply, Actor: &actor})
	status := http.StatusOK
	if err != nil {
		if e, ok := engine.AsError(err); !ok || e.Code != engine.CodeValidation || rep == nil {
			return s.StaffEngineError(c, err)
		}
		status = http.StatusUnprocessableEntity // rows in error, listed below
	}
	title := staffpage.StaffOpsTextIn(c).ImportPreviewTitle
	if apply {
		title = staffpage.StaffOpsTextIn(c).ImportDoneTitle
	}
	m := staffview.ImportModel{Chrome: s.StaffChrome(c, title), Preview: !apply, Created: rep.Created, Updated: rep.Updated,
		Unchanged: rep.Unchanged, Errors: rep.Errors, ApplyURL: staffpage.RequestOf(c).StaffPath(server.StaffImportPath),
		BackURL: staffpage.RequestOf(c).StaffPath("/invitations")}
	if !apply && rep.Errors == 0 {
		m.File = staffpage.StaffUploadCopy(data)
	}
	outcomes := map[organisation.RowOutcome]string{organisation.RowCreated: staffpage.StaffOpsTextIn(c).ImportCreated, organisation.RowUpdated: staffpage.StaffOpsTextIn(c).ImportUpdated,
		organisation.RowUnchanged: staffpage.StaffOpsTextIn(c).ImportUnchanged, organisation.RowError: staffpage.StaffOpsTextIn(c).ImportErrors}
	for _, r := range rep.Rows {
		if r.Outcome == organisation.RowUnchanged {
			continue // the changes are what a preview is for
		}
		row := staffview.ImportRow{Line: strconv.Itoa(r.Line), ExternalID: r.ExternalID, Outcome: outcomes[r.Outcome]}
		for _, f := range r.Errors {
			row.Problems += f.Field + ": " + f.Message + ". "
		}
		row.Problems = strings.TrimSpace(row.Problems)
		m.Rows = append(m.Rows, row)
	}
	return staffpage.StaffRender(c, status, staffview.Import(m))
}
