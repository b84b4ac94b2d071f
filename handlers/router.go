// Package handlers assembles the HTTP layer: New builds the echo instance
// with the middleware of package server and the routes of every audience.
package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"portal/handlers/adminapi"
	"portal/handlers/gateway"
	"portal/handlers/members"
	"portal/handlers/server"
	"portal/handlers/staff"
	"portal/handlers/staff/staffpage"
	"portal/static"
)

// Deps is what the HTTP layer needs (server.Deps: the centre holds it).
type Deps = server.Deps

// New returns the application's echo instance with every route.
func New(d Deps) *echo.Echo {
	s := server.NewServer(d)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.ErrorHandler
	e.IPExtractor = server.IPExtractor(s.Proxies)
	e.Use(s.AssignRequestID)
	if d.ServerTiming {
		e.Use(server.ServerTiming)
	}
	e.Use(s.LogRequests)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.LogFor(c).Error("panic", "err", err, "stack", string(stack))
			return err
		}}))
	e.Use(s.SecurityHeaders)
	e.Use(s.RequireOrganisation) // ResolveOrganisation (pre-routing, below) found the organisation, or none
	e.Use(s.ChooseLanguage)
	e.Use(server.CompressAnswers(func(c echo.Context) bool {
		// Static files are compressed once at start; relayed responses stream as
		// they come; API answers are small JSON, not worth the CPU.
		p := c.Request().URL.Path
		return strings.HasPrefix(p, "/static/") || server.IsAPI(c.Request()) || s.RelayOwnsBodyLimit(c)
	}))
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "64K", Skipper: func(c echo.Context) bool {
		return s.RelayOwnsBodyLimit(c) || adminapi.IsBulk(c.Request()) || staffpage.IsStaffUpload(c.Request()) // all set limits of their own
	}}))
	e.Use(s.RejectCrossOrigin)
	e.Use(s.RejectControlCharacters)

	e.GET("/brand.css", s.BrandStylesheet)
	e.GET("/healthz", s.Healthz)
	e.GET("/readyz", s.Readyz)
	e.Match([]string{http.MethodGet, http.MethodHead}, "/static/*", echo.WrapHandler(static.Handler())) // echo's GET does not answer HEAD

	m, gw := members.Of(s), gateway.Of(s)
	api := e.Group("/api")
	api.GET("/openapi.json", s.OpenAPI)
	api.POST("/auth/external-login", s.ExternalLogin, server.RequireJSON)
	forms := api.Group("/forms", s.RequireSession)
	forms.GET("/membership/:periodid", m.GetMembershipForm)
	forms.POST("/next", m.PostNext, server.RequireJSON)
	forms.POST("/processes/:processid/reset", m.PostReset, server.RequireJSON)
	forms.POST("/processes/:processid/resume", m.PostResume, server.RequireJSON)
	forms.POST("/processes/:processid/back", m.PostBack, server.RequireJSON)
	adminapi.Of(s).MountAdmin(api) // package adminapi: API keys instead of sessions
	api.Any("/*", func(c echo.Context) error { return echo.ErrNotFound }, s.RequireSession)

	reg := e.Group("/membership/register/:periodId")
	reg.GET("", m.RegisterEntry)
	reg.GET("/:u", m.RegisterEntry)
	reg.GET("/persons", m.PersonsPage)
	reg.POST("/persons", m.SubmitPersons)
	reg.GET("/step/:n", m.StepPage)
	reg.POST("/step/:n", m.SubmitAnswers)
	reg.POST("/back", m.BackStep)
	reg.POST("/change", m.ChangeStep)
	reg.GET("/review", m.ReviewPage)
	reg.POST("/confirm", m.Confirm)
	reg.GET("/done", m.DonePage)
	reg.GET("/reset", m.ResetPage)
	reg.POST("/reset", m.ResetRegistration)
	reg.POST("/resume", m.ResumeRegistration)

	e.GET(server.PaymentReturnPath, m.PaymentReturn)
	e.GET(server.PayLinkPrefix+":reference", m.PayLink)
	e.POST(server.PayLinkPrefix+":reference", m.ChoosePayMethod)
	e.POST(server.PayLinkPrefix+":reference/mandate", m.GiveMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/keep", m.KeepMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/change", m.ChangeMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/revoke", m.RevokeMandate)
	if d.StripeWebhook {
		e.POST(server.StripeWebhookPath, gw.StripeWebhook)
	}
	e.POST(server.StripeWebhookPath+"/:org", gw.OrganisationStripeWebhook)
	e.GET(server.VerifyPrefix+":token", m.VerifyCard)
	e.GET(members.UnsubscribePath, m.UnsubscribePage)
	e.POST(members.UnsubscribePath, m.UnsubscribeNow)
	e.POST("/membership/payment-retry", m.PaymentRetry)
	e.POST(server.PaymentRetryPath, m.PaymentRetry)
	e.GET(members.InvitationPath, m.OpenInvitation)
	m.MountPersonalData(e) // members/personal_data.go
	if s.Gateway != nil {
		e.GET(server.TestGatewayPayPrefix+":reference", m.TestGatewayPage)
		e.POST(server.TestGatewayPayPrefix+":reference", m.TestGatewayDecide)
	}
	staff.Of(s).MountStaff(e) // staff/routes.go
	gw.MountGateway(e, d.Relay)
	e.Pre(server.RemoveUploadedFiles) // around all but the request count: it sees the request as the handler left it
	e.Pre(s.ResolveOrganisation)      // after MountGateway's CountRequests, which must wrap everything
	return e
}
