package staff

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views"
)

// The setup in sections (administrators): GET /staff/setup lists the
// sections, GET /staff/setup/{slug} is one section's page. The forms post
// to their own routes (staff_setup*.go), which show their section again
// with the errors, or go back to it with a result message.
//
// Adding a section is one row in setupSections (its GET route, its place
// in the section navigation and on the list follow) with a load function
// that fills its part of views.StaffSetupModel and a templ component that
// shows it. Adding a component to a section is a field on the model, a
// line in that section's load function and a line in its component.

// Section slugs: the page of each is /staff/setup/{slug}.
const (
	SetupOrganisation = "organisation"
	setupLanguages    = "languages"
	SetupPayments     = "payments"
	setupMessages     = "messages"
	SetupMemberships  = "memberships"
	setupStaff        = "staff"
	setupAPIKeys      = "api-keys"
	// setupDataProtection: the retention settings (privacy.go).
	setupDataProtection = "data-protection"
)

// setupSection is one section of the setup: a short page of its own.
type setupSection struct {
	Slug string
	// Title and Intro are the section's name and one sentence about it,
	// in the page's language.
	Title, Intro func(t *views.StaffSetupSectionTexts) string
	// load fills the section's part of the model.
	load func(s *Server, c echo.Context, m *views.StaffSetupModel) error
	// view shows it.
	view func(m views.StaffSetupModel) templ.Component
}

// setupSections are the sections in the order of the section navigation.
func setupSections() []setupSection {
	return []setupSection{
		{Slug: SetupOrganisation, Title: func(t *views.StaffSetupSectionTexts) string { return t.Organisation },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.OrganisationIntro },
			load:  (*Server).loadSetupOrganisation, view: views.SetupOrganisationSection},
		{Slug: setupLanguages, Title: func(t *views.StaffSetupSectionTexts) string { return t.Languages },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.LanguagesIntro },
			load:  (*Server).loadSetupLanguages, view: views.SetupLanguagesSection},
		{Slug: SetupPayments, Title: func(t *views.StaffSetupSectionTexts) string { return t.Payments },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.PaymentsIntro },
			load:  (*Server).loadSetupPayments, view: views.SetupPaymentsSection},
		{Slug: setupMessages, Title: func(t *views.StaffSetupSectionTexts) string { return t.Messages },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.MessagesIntro },
			load:  (*Server).loadSetupMessages, view: views.SetupMessagesSection},
		{Slug: SetupMemberships, Title: func(t *views.StaffSetupSectionTexts) string { return t.Memberships },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.MembershipsIntro },
			load:  (*Server).loadSetupMemberships, view: views.SetupMembershipsSection},
		{Slug: setupStaff, Title: func(t *views.StaffSetupSectionTexts) string { return t.Staff },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.StaffIntro },
			load:  (*Server).loadSetupStaff, view: views.SetupStaffSection},
		{Slug: setupAPIKeys, Title: func(t *views.StaffSetupSectionTexts) string { return t.APIKeys },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.APIKeysIntro },
			load:  (*Server).loadSetupAPIKeys, view: views.SetupAPIKeysSection},
		{Slug: setupDataProtection, Title: func(t *views.StaffSetupSectionTexts) string { return t.DataProtection },
			Intro: func(t *views.StaffSetupSectionTexts) string { return t.DataProtectionIntro },
			load:  (*Server).loadSetupDataProtection, view: views.SetupDataProtectionSection},
	}
}

// setupSectionRoutes are the GET routes of the sections, for StaffRoutes.
func setupSectionRoutes() []StaffRoute {
	var out []StaffRoute
	for _, sec := range setupSections() {
		slug := sec.Slug
		out = append(out, StaffRoute{Method: http.MethodGet, Path: server.StaffSetupPath + "/" + slug, Min: staff.RoleAdmin,
			handler: func(s *Server, c echo.Context) error { return s.renderSetup(c, slug, http.StatusOK, nil) }})
	}
	return out
}

// staffSetupSectionTextIn is the sections' texts in the request's language.
func staffSetupSectionTextIn(c echo.Context) *views.StaffSetupSectionTexts {
	return views.StaffSetupSectionTextIn(c.Request().Context())
}

// setupURL is a section's page.
func setupURL(c echo.Context, slug string) string {
	return server.OrganisationPath(c, server.StaffPrefix+server.StaffSetupPath+"/"+slug)
}

// setupNav is the section navigation, current marking slug's section.
func setupNav(c echo.Context, current string) []views.StaffSetupSectionLink {
	t := staffSetupSectionTextIn(c)
	var out []views.StaffSetupSectionLink
	for _, sec := range setupSections() {
		out = append(out, views.StaffSetupSectionLink{Slug: sec.Slug, Title: sec.Title(t), Intro: sec.Intro(t), Href: setupURL(c, sec.Slug),
			Current: sec.Slug == current})
	}
	return out
}

// staffSetupPage answers GET /staff/setup: the list of sections.
func (s *Server) staffSetupPage(c echo.Context) error {
	m := views.StaffSetupIndexModel{StaffChrome: s.StaffChrome(c, staffpage.StaffOpsTextIn(c).SetupTitle), Sections: setupNav(c, "")}
	return staffpage.StaffRender(c, http.StatusOK, views.StaffSetupIndexPage(m))
}

// renderSetup renders the section slug; adjust, when set, puts a failed
// change's values and errors on the model.
func (s *Server) renderSetup(c echo.Context, slug string, status int, adjust func(*views.StaffSetupModel)) error {
	var sec *setupSection
	for _, x := range setupSections() {
		if x.Slug == slug {
			sec = &x
		}
	}
	if sec == nil {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	t := staffSetupSectionTextIn(c)
	m := views.StaffSetupModel{StaffChrome: s.StaffChrome(c, sec.Title(t)), Section: slug, Sections: setupNav(c, slug), Intro: sec.Intro(t)}
	if err := sec.load(s, c, &m); err != nil {
		return s.StaffEngineError(c, err)
	}
	if adjust != nil {
		adjust(&m)
	}
	return staffpage.StaffRender(c, status, views.StaffSetupPage(m, sec.view(m)))
}

// staffSetupDone goes back to a section with a result message.
func staffSetupDone(c echo.Context, slug, flash string) error {
	return c.Redirect(http.StatusSeeOther, setupURL(c, slug)+"?done="+flash)
}
