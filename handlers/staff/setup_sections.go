package staff

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The setup in sections (administrators): GET /staff/setup lists the
// sections, GET /staff/setup/{slug} is one section's page. The forms post
// to their own routes (staff_setup*.go), which show their section again
// with the errors, or go back to it with a result message.
//
// Adding a section is one row in setupSections (its GET route, its place
// in the section navigation and on the list follow) with a load function
// that fills its part of staffview.SetupModel and a templ component that
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
	Title, Intro func(t *staffview.SetupSectionTexts) string
	// load fills the section's part of the model.
	load func(s *Server, c echo.Context, m *staffview.SetupModel) error
	// view shows it.
	view func(m staffview.SetupModel) templ.Component
}

// setupSections are the sections in the order of the section navigation.
func setupSections() []setupSection {
	return []setupSection{
		{Slug: SetupOrganisation, Title: func(t *staffview.SetupSectionTexts) string { return t.Organisation },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.OrganisationIntro },
			load:  (*Server).loadSetupOrganisation, view: staffview.SetupOrganisationSection},
		{Slug: setupLanguages, Title: func(t *staffview.SetupSectionTexts) string { return t.Languages },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.LanguagesIntro },
			load:  (*Server).loadSetupLanguages, view: staffview.SetupLanguagesSection},
		{Slug: SetupPayments, Title: func(t *staffview.SetupSectionTexts) string { return t.Payments },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.PaymentsIntro },
			load:  (*Server).loadSetupPayments, view: staffview.SetupPaymentsSection},
		{Slug: setupMessages, Title: func(t *staffview.SetupSectionTexts) string { return t.Messages },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.MessagesIntro },
			load:  (*Server).loadSetupMessages, view: staffview.SetupMessagesSection},
		{Slug: SetupMemberships, Title: func(t *staffview.SetupSectionTexts) string { return t.Memberships },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.MembershipsIntro },
			load:  (*Server).loadSetupMemberships, view: staffview.SetupMembershipsSection},
		{Slug: setupStaff, Title: func(t *staffview.SetupSectionTexts) string { return t.Staff },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.StaffIntro },
			load:  (*Server).loadSetupStaff, view: staffview.SetupStaffSection},
		{Slug: setupAPIKeys, Title: func(t *staffview.SetupSectionTexts) string { return t.APIKeys },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.APIKeysIntro },
			load:  (*Server).loadSetupAPIKeys, view: staffview.SetupAPIKeysSection},
		{Slug: setupDataProtection, Title: func(t *staffview.SetupSectionTexts) string { return t.DataProtection },
			Intro: func(t *staffview.SetupSectionTexts) string { return t.DataProtectionIntro },
			load:  (*Server).loadSetupDataProtection, view: staffview.SetupDataProtectionSection},
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
func staffSetupSectionTextIn(c echo.Context) *staffview.SetupSectionTexts {
	return staffview.SetupSectionTextIn(c.Request().Context())
}

// setupURL is a section's page.
func setupURL(c echo.Context, slug string) string {
	return staffpage.RequestOf(c).StaffPath(server.StaffSetupPath + "/" + slug)
}

// setupNav is the section navigation, current marking slug's section.
func setupNav(c echo.Context, current string) []staffview.SetupSectionLink {
	t := staffSetupSectionTextIn(c)
	var out []staffview.SetupSectionLink
	for _, sec := range setupSections() {
		out = append(out, staffview.SetupSectionLink{Slug: sec.Slug, Title: sec.Title(t), Intro: sec.Intro(t), Href: setupURL(c, sec.Slug),
			Current: sec.Slug == current})
	}
	return out
}

// staffSetupPage answers GET /staff/setup: the list of sections.
func (s *Server) staffSetupPage(c echo.Context) error {
	m := staffview.SetupIndexModel{Chrome: s.StaffChrome(c, staffpage.StaffOpsTextIn(c).SetupTitle), Sections: setupNav(c, "")}
	return staffpage.StaffRender(c, http.StatusOK, staffview.SetupIndex(m))
}

// renderSetup renders the section slug; adjust, when set, puts a failed
// change's values and errors on the model.
func (s *Server) renderSetup(c echo.Context, slug string, status int, adjust func(*staffview.SetupModel)) error {
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
	m := staffview.SetupModel{Chrome: s.StaffChrome(c, sec.Title(t)), Section: slug, Sections: setupNav(c, slug), Intro: sec.Intro(t)}
	if err := sec.load(s, c, &m); err != nil {
		return s.StaffEngineError(c, err)
	}
	if adjust != nil {
		adjust(&m)
	}
	return staffpage.StaffRender(c, status, staffview.Setup(m, sec.view(m)))
}

// staffSetupDone goes back to a section with a result message.
func staffSetupDone(c echo.Context, slug, flash string) error {
	return c.Redirect(http.StatusSeeOther, setupURL(c, slug)+"?done="+flash)
}
