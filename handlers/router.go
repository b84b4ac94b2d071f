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
	e.Use(s.RequireOrganisation) // resolveOrganisation (pre-routing, below) found the organisation, or none
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

	api := e.Group("/api")
	api.GET("/openapi.json", s.OpenAPI)
	api.POST("/auth/external-login", s.ExternalLogin, server.RequireJSON)
	forms := api.Group("/forms", s.RequireSession)
	forms.GET("/membership/:periodid", members.Of(s).GetMembershipForm)
	forms.POST("/next", members.Of(s).PostNext, server.RequireJSON)
	forms.POST("/processes/:processid/reset", members.Of(s).PostReset, server.RequireJSON)
	forms.POST("/processes/:processid/resume", members.Of(s).PostResume, server.RequireJSON)
	forms.POST("/processes/:processid/back", members.Of(s).PostBack, server.RequireJSON)
	adminapi.Of(s).MountAdmin(api) // api_admin.go: API keys instead of sessions
	api.Any("/*", func(c echo.Context) error { return echo.ErrNotFound }, s.RequireSession)

	reg := e.Group("/membership/register/:periodId")
	reg.GET("", members.Of(s).RegisterEntry)
	reg.GET("/:u", members.Of(s).RegisterEntry)
	reg.GET("/persons", members.Of(s).PersonsPage)
	reg.POST("/persons", members.Of(s).SubmitPersons)
	reg.GET("/step/:n", members.Of(s).StepPage)
	reg.POST("/step/:n", members.Of(s).SubmitAnswers)
	reg.POST("/back", members.Of(s).BackStep)
	reg.POST("/change", members.Of(s).ChangeStep)
	reg.GET("/review", members.Of(s).ReviewPage)
	reg.POST("/confirm", members.Of(s).Confirm)
	reg.GET("/done", members.Of(s).DonePage)
	reg.GET("/reset", members.Of(s).ResetPage)
	reg.POST("/reset", members.Of(s).ResetRegistration)
	reg.POST("/resume", members.Of(s).ResumeRegistration)

	e.GET(server.PaymentReturnPath, members.Of(s).PaymentReturn)
	e.GET(server.PayLinkPrefix+":reference", members.Of(s).PayLink)
	e.POST(server.PayLinkPrefix+":reference", members.Of(s).ChoosePayMethod)
	e.POST(server.PayLinkPrefix+":reference/mandate", members.Of(s).GiveMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/keep", members.Of(s).KeepMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/change", members.Of(s).ChangeMandate)
	e.POST(server.PayLinkPrefix+":reference/mandate/revoke", members.Of(s).RevokeMandate)
	if d.StripeWebhook {
		e.POST(server.StripeWebhookPath, gateway.Of(s).StripeWebhook)
	}
	e.POST(server.StripeWebhookPath+"/:org", gateway.Of(s).OrganisationStripeWebhook)
	e.GET(server.VerifyPrefix+":token", members.Of(s).VerifyCard)
	e.GET(members.UnsubscribePath, members.Of(s).UnsubscribePage)
	e.POST(members.UnsubscribePath, members.Of(s).UnsubscribeNow)
	e.POST("/membership/payment-retry", members.Of(s).PaymentRetry)
	e.POST(server.PaymentRetryPath, members.Of(s).PaymentRetry)
	e.GET(members.InvitationPath, members.Of(s).OpenInvitation)
	members.Of(s).MountPersonalData(e) // personal_data.go
	if s.Gateway != nil {
		e.GET(server.TestGatewayPayPrefix+":reference", members.Of(s).TestGatewayPage)
		e.POST(server.TestGatewayPayPrefix+":reference", members.Of(s).TestGatewayDecide)
	}
	staff.Of(s).MountStaff(e) // staff_routes.go
	gateway.Of(s).MountGateway(e, d.Relay)
	e.Pre(server.RemoveUploadedFiles) // around all but the request count: it sees the request as the handler left it
	e.Pre(s.ResolveOrganisation)      // after mountGateway's countRequests, which must wrap everything
	return e
}
