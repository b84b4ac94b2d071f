// Package handlers assembles the HTTP layer: New builds the echo instance
// with the middleware of package server and the routes of every audience.
package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"portal/handlers/adminapi"
	"portal/handlers/server"
	"portal/handlers/staff"
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
	e.Use(s.RequireOrganisation) // resolveOrganisation (pre-routing, below) found the organisation, or none
	e.Use(s.ChooseLanguage)
	e.Use(server.CompressAnswers(func(c echo.Context) bool {
		// Static files are compressed once at start; relayed responses stream as
		// they come; API answers are small JSON, not worth the CPU.
		p := c.Request().URL.Path
		return strings.HasPrefix(p, "/static/") || server.IsAPI(c.Request()) || s.RelayOwnsBodyLimit(c)
	}))
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "64K", Skipper: func(c echo.Context) bool {
		return s.RelayOwnsBodyLimit(c) || adminapi.IsBulk(c.Request()) || server.IsStaffUpload(c.Request()) // all set limits of their own
	}}))
	e.Use(s.RejectCrossOrigin)
	e.Use(s.RejectControlCharacters)

	e.GET("/brand.css", s.BrandStylesheet)
	e.GET("/healthz", s.Healthz)
	e.GET("/readyz", s.Readyz)
	e.Match([]string{http.MethodGet, http.MethodHead}, "/static/*", echo.WrapHandler(static.Handler())) // echo's GET does not answer HEAD

	api := e.Group("/api")
	api.GET("/openapi.json", s.OpenAPI)
	api.POST("/auth/external-login", s.ExternalLogin, server.RequireJSON)
	forms := api.Group("/forms", s.RequireSession)
	forms.GET("/membership/:periodid", s.GetMembershipForm)
	forms.POST("/next", s.PostNext, server.RequireJSON)
	forms.POST("/processes/:processid/reset", s.PostReset, server.RequireJSON)
	forms.POST("/processes/:processid/resume", s.PostResume, server.RequireJSON)
	forms.POST("/processes/:processid/back", s.PostBack, server.RequireJSON)
	adminapi.Of(s).MountAdmin(api) // api_admin.go: API keys instead of sessions
	api.Any("/*", func(c echo.Context) error { return echo.ErrNotFound }, s.RequireSession)

	reg := e.Group("/membership/register/:periodId")
	reg.GET("", s.RegisterEntry)
	reg.GET("/:u", s.RegisterEntry)
	reg.GET("/persons", s.PersonsPage)
	reg.POST("/persons", s.SubmitPersons)
	reg.GET("/step/:n", s.StepPage)
	reg.POST("/step/:n", s.SubmitAnswers)
	reg.POST("/back", s.BackStep)
	reg.POST("/change", s.ChangeStep)
	reg.GET("/review", s.ReviewPage)
	reg.POST("/confirm", s.Confirm)
	reg.GET("/done", s.DonePage)
	reg.GET("/reset", s.ResetPage)
	reg.POST("/reset", s.ResetRegistration)
	reg.POST("/resume", s.ResumeRegistration)

	e.GET(server.PaymentReturnPath, s.PaymentReturn)
	e.GET(server.PayLinkPrefix+":reference", s.PayLink)
	e.POST(server.PayLinkPrefix+":reference", s.ChoosePayMethod)
	e.POST(server.PayLinkPrefix+":reference/mandate", s.GiveMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/keep", s.KeepMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/change", s.ChangeMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/revoke", s.RevokeMandate)
	if d.StripeWebhook {
		e.POST(server.StripeWebhookPath, s.StripeWebhook)
	}
	e.POST(server.StripeWebhookPath+"/:org", s.OrganisationStripeWebhook)
	e.GET(server.VerifyPrefix+":token", s.VerifyCard)
	e.GET(server.UnsubscribePath, s.UnsubscribePage)
	e.POST(server.UnsubscribePath, s.UnsubscribeNow)
	e.POST("/membership/payment-retry", s.PaymentRetry)
	e.POST(server.PaymentRetryPath, s.PaymentRetry)
	e.GET(server.InvitationPath, s.OpenInvitation)
	s.MountPersonalData(e) // personal_data.go
	if s.Gateway != nil {
		e.GET(server.TestGatewayPayPrefix+":reference", s.TestGatewayPage)
		e.POST(server.TestGatewayPayPrefix+":reference", s.TestGatewayDecide)
	}
	staff.Of(s).MountStaff(e) // staff_routes.go
	s.MountGateway(e, d.Relay)
	e.Pre(server.RemoveUploadedFiles) // around all but the request count: it sees the request as the handler left it
	e.Pre(s.ResolveOrganisation)      // after mountGateway's countRequests, which must wrap everything
	return e
}
