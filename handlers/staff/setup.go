package staff

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The administrators' setup (GET /staff/setup and its sections,
// setup_sections.go) and its changes. Each
// change calls the engine function the admin API calls, with the same
// validation; field errors are shown by their field on the page again.

// calcSlots is how many persons the price calculator offers.
const calcSlots = 4

// Flash keys of the setup page.
const (
	flashOrgSaved      = "org-saved"
	flashPeriodOpened  = "period-opened"
	flashPeriodClosed  = "period-closed"
	flashStaffAdded    = "staff-added"
	flashStaffRole     = "staff-role"
	flashStaffDisabled = "staff-disabled"
)

func init() {
	for k, text := range map[string]func(*staffview.OpsTexts) string{
		flashOrgSaved:      func(t *staffview.OpsTexts) string { return t.OrgSaved },
		flashPeriodOpened:  func(t *staffview.OpsTexts) string { return t.PeriodOpened },
		flashPeriodClosed:  func(t *staffview.OpsTexts) string { return t.PeriodClosed },
		flashStaffAdded:    func(t *staffview.OpsTexts) string { return t.StaffAdded },
		flashStaffRole:     func(t *staffview.OpsTexts) string { return t.StaffRoleChanged },
		flashStaffDisabled: func(t *staffview.OpsTexts) string { return t.StaffDisabledDone },
	} {
		staffpage.StaffFlashes[k] = func(c echo.Context) string { return text(staffpage.StaffOpsTextIn(c)) }
	}
}

// loadSetupOrganisation fills the organisation section.
func (s *Server) loadSetupOrganisation(c echo.Context, m *staffview.SetupModel) error {
	u := staffpage.StaffUserOf(c)
	org, err := s.engine.Organisation(c.Request().Context(), u.OrganisationID)
	if err != nil {
		return err
	}
	m.Org = staffview.OrgForm{Action: staffpage.RequestOf(c).StaffPath(server.StaffSetupPath + "/organisation"), Name: org.Name, ContactEmail: org.ContactEmail,
		LogoURL: org.LogoURL, AccentColour: org.AccentColour, TimeZone: org.Location().String(), HashSecretSet: org.HashSecretSealed != ""}
	return nil
}

// loadSetupLanguages fills the languages section.
func (s *Server) loadSetupLanguages(c echo.Context, m *staffview.SetupModel) error {
	org, err := s.engine.Organisation(c.Request().Context(), staffpage.StaffUserOf(c).OrganisationID)
	if err != nil {
		return err
	}
	m.Languages = languagesForm(staffpage.RequestOf(c).StaffPath(server.StaffSetupPath), org)
	m.ToDo, err = s.textsToDo(c)
	return err
}

// loadSetupPayments fills the payments section.
func (s *Server) loadSetupPayments(c echo.Context, m *staffview.SetupModel) (err error) {
	base, orgID := staffpage.RequestOf(c).StaffPath(server.StaffSetupPath), staffpage.StaffUserOf(c).OrganisationID
	if m.Payments, err = s.paymentForm(c, base, orgID); err != nil {
		return err
	}
	m.PaymentMethods, err = s.paymentMethodsForm(c, base, orgID)
	return err
}

// loadSetupMessages fills the reminders and e-mail section.
func (s *Server) loadSetupMessages(c echo.Context, m *staffview.SetupModel) (err error) {
	m.Messages, err = s.messagesForm(c, staffpage.RequestOf(c).StaffPath(server.StaffSetupPath), staffpage.StaffUserOf(c).OrganisationID)
	return err
}

// loadSetupMemberships fills the memberships and prices section: the
// periods, the membership types with their form, the price rules of each
// period and the price calculator (its result when its form was sent:
// calc_period=...).
func (s *Server) loadSetupMemberships(c echo.Context, m *staffview.SetupModel) error {
	ctx := c.Request().Context()
	u := staffpage.StaffUserOf(c)
	org, err := s.engine.Organisation(ctx, u.OrganisationID)
	if err != nil {
		return err
	}
	periods, err := organisation.Of(s.engine).Periods(ctx, u.OrganisationID)
	if err != nil {
		return err
	}
	types, err := organisation.Of(s.engine).MembershipTypes(ctx, u.OrganisationID)
	if err != nil {
		return err
	}
	base := staffpage.RequestOf(c).StaffPath(server.StaffSetupPath)
	page := setupURL(c, SetupMemberships)
	typeNames := map[int64]string{}
	code := server.LangOf(c).Code // the club's own texts in the page's language
	for _, t := range types {
		typeNames[t.ID] = t.NameTexts.In(code, t.Name)
		id := strconv.FormatInt(t.ID, 10)
		m.Types = append(m.Types, staffview.TypeRow{ID: id, Code: t.Code, Name: t.Name, Ages: ageRange(c, t.MinAge, t.MaxAge),
			EditURL: page + "?edit_type=" + id + "#type-form", DeleteURL: base + "/types/" + id + "/delete"})
	}
	m.TypeForm = typeForm(c, base, types, org)
	for _, p := range periods {
		id := strconv.FormatInt(p.ID, 10)
		m.Periods = append(m.Periods, staffview.PeriodRow{ID: id, Name: p.Name, Dates: p.StartDate.Format(time.DateOnly) + " – " + p.EndDate.Format(time.DateOnly),
			Status: staffpage.StatusLabel(c, p.Status), Currency: p.Currency, Definition: p.DefinitionKey, Open: p.Status == engine.PeriodOpen,
			StatusURL: base + "/periods/" + id + "/status"})
		rules, err := organisation.Of(s.engine).PriceRules(ctx, u.OrganisationID, p.ID)
		if err != nil {
			return err
		}
		rt := staffview.RuleTable{Period: p.NameTexts.In(code, p.Name), Texts: periodTextsForm(c, base, org, p, rules)}
		for _, r := range rules {
			r.Localize(code)
			rt.Rules = append(rt.Rules, ruleRow(c, r, p.Currency, typeNames))
		}
		m.Rules = append(m.Rules, rt)
	}
	m.Calc = s.priceCalculator(c, page, periods, types)
	m.ToDo, err = s.textsToDo(c)
	return err
}

// loadSetupStaff fills the staff section.
func (s *Server) loadSetupStaff(c echo.Context, m *staffview.SetupModel) error {
	u := staffpage.StaffUserOf(c)
	members, err := staff.Of(s.engine).ListStaff(c.Request().Context(), u.OrganisationID)
	if err != nil {
		return err
	}
	base := staffpage.RequestOf(c).StaffPath(server.StaffSetupPath)
	m.AddForm = staffview.AddForm{Action: base + "/staff", Role: string(staff.RoleViewer)}
	for _, sm := range members {
		id := strconv.FormatInt(sm.ID, 10)
		row := staffview.MemberRow{ID: id, Email: sm.Email, Name: sm.Name, Role: string(sm.Role), RoleLabel: staffpage.StaffRoleLabel(c, sm.Role),
			Active: sm.Active(), LastSignIn: staffpage.StaffOpsTextIn(c).Never, RoleURL: base + "/staff/" + id + "/role", DisableURL: base + "/staff/" + id + "/disable"}
		if sm.LastSignInAt != nil {
			row.LastSignIn = staffpage.StaffDateTime(c, *sm.LastSignInAt)
		}
		m.Staff = append(m.Staff, row)
	}
	return nil
}

// ageRange prints a membership type's ages.
func ageRange(c echo.Context, minAge, maxAge *int) string {
	switch {
	case minAge != nil && maxAge != nil:
		return fmt.Sprintf("%d–%d", *minAge, *maxAge)
	case minAge != nil:
		return fmt.Sprintf("%d+", *minAge)
	case maxAge != nil:
		return fmt.Sprintf("0–%d", *maxAge)
	}
	return staffpage.StaffOpsTextIn(c).TypeAnyAge
}

// ruleKindLabel says what a price rule does, in the page's language; a
// kind this portal does not know, in words made of its code.
func ruleKindLabel(c echo.Context, kind engine.PriceRuleKind) string {
	t := staffpage.StaffOpsTextIn(c)
	switch kind {
	case engine.RuleMembershipFee:
		return t.RuleKindMembershipFee
	case engine.RuleMemberType:
		return t.RuleKindMemberType
	case engine.RuleEarlyBird:
		return t.RuleKindEarlyBird
	case engine.RuleLateFee:
		return t.RuleKindLateFee
	case engine.RuleFamily:
		return t.RuleKindFamily
	case engine.RuleAdminFee:
		return t.RuleKindAdminFee
	}
	return staffview.AuditFieldIn(c.Request().Context(), strings.ToLower(string(kind)))
}

// ruleRow prints a price rule.
func ruleRow(c echo.Context, r engine.PriceRule, currency string, typeNames map[int64]string) staffview.RuleRow {
	row := staffview.RuleRow{Code: r.Code, Kind: ruleKindLabel(c, r.Kind), Label: r.Label, Valid: staffpage.StaffOpsTextIn(c).RuleAlways}
	var applies []string
	if r.MembershipTypeID != nil {
		applies = append(applies, typeNames[*r.MembershipTypeID])
	}
	if r.MemberType != nil {
		applies = append(applies, staffpage.MemberTypeLabel(c, *r.MemberType))
	}
	if r.MinPersons != nil {
		applies = append(applies, fmt.Sprintf("%s %d", staffpage.StaffOpsTextIn(c).RuleFromPersons, *r.MinPersons))
	}
	row.AppliesTo = strings.Join(applies, ", ")
	if row.AppliesTo == "" {
		row.AppliesTo = staffpage.StaffOpsTextIn(c).RuleEveryone
	}
	switch {
	case r.AmountMinor != nil:
		row.Amount = staffpage.StaffMoney(c, *r.AmountMinor, currency)
	case r.PercentBP != nil:
		row.Amount = fmt.Sprintf("%.2f %%", float64(*r.PercentBP)/100)
	}
	if r.ValidFrom != nil || r.ValidUntil != nil {
		from, until := "…", "…"
		if r.ValidFrom != nil {
			from = r.ValidFrom.Format(time.DateOnly)
		}
		if r.ValidUntil != nil {
			until = r.ValidUntil.Format(time.DateOnly)
		}
		row.Valid = from + " – " + until
	}
	return row
}

// priceCalculator is the calculator's form and, when it was sent, the
// price the engine computes for it.
func (s *Server) priceCalculator(c echo.Context, base string, periods []engine.MembershipPeriod, types []engine.MembershipType) staffview.CalcForm {
	q := c.QueryParams()
	f := staffview.CalcForm{Action: base, Period: q.Get("calc_period"), On: q.Get("calc_on"), Persons: make([]staffview.CalcPerson, calcSlots)}
	for _, p := range periods {
		f.Periods = append(f.Periods, staffview.Option{Value: strconv.FormatInt(p.ID, 10), Label: p.Name})
	}
	f.Types = []staffview.Option{{Value: "", Label: staffpage.StaffOpsTextIn(c).CalcNoPerson}}
	for _, t := range types {
		f.Types = append(f.Types, staffview.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
	}
	typeVals, memberVals := q["calc_type"], q["calc_member"]
	for i := range f.Persons {
		f.Persons[i].Member = engine.MemberNew
		if i < len(typeVals) {
			f.Persons[i].Type = typeVals[i]
		}
		if i < len(memberVals) {
			f.Persons[i].Member = memberVals[i]
		}
	}
	if f.On == "" {
		f.On = clock.Now().Format(time.DateOnly)
	}
	if f.Period == "" {
		return f
	}
	f.Done = true
	periodID, err := strconv.ParseInt(f.Period, 10, 64)
	on, dateErr := time.Parse(time.DateOnly, f.On)
	if err != nil || dateErr != nil {
		f.Error = staffpage.StaffTextIn(c).Invalid
		return f
	}
	var people []staff.PriceCheckPerson
	for _, p := range f.Persons {
		if p.Type == "" {
			continue
		}
		id, _ := strconv.ParseInt(p.Type, 10, 64)
		people = append(people, staff.PriceCheckPerson{MembershipTypeID: id, MemberType: p.Member})
	}
	quote, err := staff.Of(s.engine).PriceCheck(c.Request().Context(), staffpage.StaffUserOf(c).OrganisationID, periodID, people, on)
	if err != nil {
		e, ok := engine.AsError(err)
		if !ok {
			s.LogFor(c).Error("price calculator", "err", err)
			f.Error = staffpage.StaffTextIn(c).Internal
			return f
		}
		f.Error = e.Message + staffpage.FieldSummary(e)
		return f
	}
	for _, l := range quote.Lines {
		f.Lines = append(f.Lines, staffview.CalcLine{Description: l.Description, Amount: staffpage.StaffMoney(c, l.AmountMinor, quote.Currency)})
	}
	f.Total = staffpage.StaffMoney(c, quote.TotalMinor, quote.Currency)
	return f
}

// staffSetupProblem shows a change's error on the setup page: field
// errors by their field (put by show; nil: at the top too), others at
// the top.
func (s *Server) staffSetupProblem(c echo.Context, slug string, err error, show func(*staffview.SetupModel, map[string]string)) error {
	if errs, ok := server.FieldErrors(err); ok && show != nil {
		status := http.StatusUnprocessableEntity
		if engine.ErrorCode(err) == engine.CodeConflict {
			status = http.StatusConflict
		}
		return s.renderSetup(c, slug, status, func(m *staffview.SetupModel) { show(m, errs) })
	}
	e, ok := engine.AsError(err)
	if !ok || e.Code == engine.CodeUnavailable {
		return s.StaffEngineError(c, err)
	}
	status := http.StatusUnprocessableEntity
	switch e.Code {
	case engine.CodeConflict:
		status = http.StatusConflict
	case engine.CodeNotFound:
		status = http.StatusNotFound
	}
	return s.renderSetup(c, slug, status, func(m *staffview.SetupModel) { m.Problem = e.Message + staffpage.FieldSummary(e) })
}

// staffSaveOrganisation answers POST /staff/setup/organisation.
func (s *Server) staffSaveOrganisation(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form := staffview.OrgForm{Name: c.FormValue("name"), ContactEmail: c.FormValue("contactEmail"), LogoURL: c.FormValue("logoUrl"),
		AccentColour: c.FormValue("accentColour"), TimeZone: c.FormValue("timeZone")}
	show := func(m *staffview.SetupModel, errs map[string]string) {
		form.Action, form.HashSecretSet, form.Errors = m.Org.Action, m.Org.HashSecretSet, errs
		m.Org = form
	}
	change := organisation.OrganisationChange{Name: &form.Name, ContactEmail: &form.ContactEmail, LogoURL: &form.LogoURL,
		AccentColour: &form.AccentColour}
	if _, sent := c.Request().PostForm["timeZone"]; sent { // a form of before the field changes nothing
		change.TimeZone = &form.TimeZone
	}
	if secret := c.FormValue("hashSecret"); secret != "" {
		switch {
		case len(secret) < server.MinHashSecret || len(secret) > 200:
			return s.renderSetup(c, SetupOrganisation, http.StatusUnprocessableEntity, func(m *staffview.SetupModel) {
				show(m, map[string]string{"hashSecret": staffpage.StaffOpsTextIn(c).OrgSecretShort})
			})
		case s.Organisations().Sealer == nil:
			return s.renderSetup(c, SetupOrganisation, http.StatusUnprocessableEntity, func(m *staffview.SetupModel) {
				show(m, map[string]string{"hashSecret": staffpage.StaffOpsTextIn(c).OrgSecretNoKey})
			})
		}
		sealed := s.Organisations().Sealer.Seal([]byte(secret), server.HashSecretAAD(u.OrganisationID))
		change.HashSecretSealed = &sealed
	}
	if _, err := staff.Of(s.engine).StaffUpdateOrganisation(c.Request().Context(), u.Actor(), u.OrganisationID, change); err != nil {
		return s.staffSetupProblem(c, SetupOrganisation, err, show)
	}
	s.RefreshOrganisations() // the member pages show the new name, logo and colour at once
	return staffSetupDone(c, SetupOrganisation, flashOrgSaved)
}

// staffSetPeriodStatus answers POST /staff/setup/periods/{id}/status with
// status=open or closed; closing asks first.
func (s *Server) staffSetPeriodStatus(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	status := c.FormValue("status")
	if status != engine.PeriodOpen && status != engine.PeriodClosed {
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffTextIn(c).Invalid)
	}
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if status == engine.PeriodClosed {
		if ok, err := s.StaffConfirmed(c, staffpage.StaffOpsTextIn(c).PeriodCloseQuestion, staffpage.StaffOpsTextIn(c).PeriodCloseDetail,
			setupURL(c, SetupMemberships)+"#periods"); !ok {
			return err
		}
	}
	if _, err := staff.Of(s.engine).StaffUpdatePeriod(c.Request().Context(), u.Actor(), u.OrganisationID, id, organisation.PeriodInput{Status: &status}); err != nil {
		return s.staffSetupProblem(c, SetupMemberships, err, nil)
	}
	flash := flashPeriodOpened
	if status == engine.PeriodClosed {
		flash = flashPeriodClosed
	}
	return staffSetupDone(c, SetupMemberships, flash)
}

// staffAddStaff answers POST /staff/setup/staff: a staff member added (or
// a disabled one given access back).
func (s *Server) staffAddStaff(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form := staffview.AddForm{Email: c.FormValue("email"), Name: c.FormValue("name"), Role: c.FormValue("role")}
	_, err := staff.Of(s.engine).AddStaff(c.Request().Context(), u.Actor(), u.OrganisationID,
		staff.StaffInput{Email: form.Email, Name: form.Name, Role: staff.StaffRole(form.Role)})
	if err != nil {
		return s.staffSetupProblem(c, setupStaff, err, func(m *staffview.SetupModel, errs map[string]string) {
			form.Action, form.Errors = m.AddForm.Action, errs
			m.AddForm = form
		})
	}
	return staffSetupDone(c, setupStaff, flashStaffAdded)
}

// staffChangeRole answers POST /staff/setup/staff/{id}/role.
func (s *Server) staffChangeRole(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	err := staff.Of(s.engine).ChangeStaffRole(c.Request().Context(), u.Actor(), u.OrganisationID, id, staff.StaffRole(c.FormValue("role")))
	if err != nil {
		return s.staffSetupProblem(c, setupStaff, err, nil)
	}
	return staffSetupDone(c, setupStaff, flashStaffRole)
}

// staffDisableStaff answers POST /staff/setup/staff/{id}/disable, after
// asking.
func (s *Server) staffDisableStaff(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if ok, err := s.StaffConfirmed(c, staffpage.StaffOpsTextIn(c).StaffDisableQuestion, staffpage.StaffOpsTextIn(c).StaffDisableDetail,
		setupURL(c, setupStaff)); !ok {
		return err
	}
	if err := staff.Of(s.engine).DisableStaff(c.Request().Context(), u.Actor(), u.OrganisationID, id); err != nil {
		return s.staffSetupProblem(c, setupStaff, err, nil)
	}
	return staffSetupDone(c, setupStaff, flashStaffDisabled)
}
