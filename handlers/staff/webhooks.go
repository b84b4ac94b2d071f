package staff

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/webhook"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views"
)

// The staff webhooks page (admins): what the admin API's /webhooks routes
// and `portal webhooks` do, for a club without its own tooling.

// staffDeliveriesListed is how many deliveries an endpoint's page shows.
const staffDeliveriesListed = 50

// staffWebhooksPage answers GET /staff/webhooks.
func (s *Server) staffWebhooksPage(c echo.Context) error {
	return s.renderWebhooks(c, http.StatusOK, views.StaffWebhooksModel{})
}

// renderWebhooks shows the page with m's form, problems or new secret.
func (s *Server) renderWebhooks(c echo.Context, status int, m views.StaffWebhooksModel) error {
	u := staffpage.StaffUserOf(c)
	list, err := webhook.Of(s.engine).Endpoints(c.Request().Context(), u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m.StaffChrome = s.StaffChrome(c, views.StaffWebhookTextIn(c.Request().Context()).Title)
	m.AddURL = server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath)
	if m.Events == nil {
		for _, t := range engine.WebhookEventTypes {
			m.Events = append(m.Events, views.StaffWebhookEventChoice{Value: t, Checked: true})
		}
	}
	for _, ep := range list {
		m.Endpoints = append(m.Endpoints, webhookEndpointRow(c, ep))
	}
	return staffpage.StaffRender(c, status, views.StaffWebhooksPage(m))
}

func webhookEndpointRow(c echo.Context, ep engine.WebhookEndpoint) views.StaffWebhookEndpointRow {
	base := server.StaffPrefix + server.StaffWebhooksPath + "/" + strconv.FormatInt(ep.ID, 10)
	return views.StaffWebhookEndpointRow{ID: strconv.FormatInt(ep.ID, 10), URL: ep.URL, Events: strings.Join(ep.Events(), ", "),
		Active: ep.Active, DisabledReason: ep.DisabledReason, DeliveriesURL: server.OrganisationPath(c, base),
		ToggleURL: server.OrganisationPath(c, base+"/active"), RotateURL: server.OrganisationPath(c, base+"/rotate"), DeleteURL: server.OrganisationPath(c, base+"/delete")}
}

// staffAddWebhook answers POST /staff/webhooks: adds the endpoint and
// shows its signing secret this once, or the form again with what is
// wrong (nothing added).
func (s *Server) staffAddWebhook(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, err := c.FormParams()
	if err != nil {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).Invalid)
	}
	chosen := form["events"]
	m := views.StaffWebhooksModel{URL: strings.TrimSpace(form.Get("url")), Events: []views.StaffWebhookEventChoice{}}
	for _, t := range engine.WebhookEventTypes {
		m.Events = append(m.Events, views.StaffWebhookEventChoice{Value: t, Checked: slices.Contains(chosen, t)})
	}
	ep, secret, err := webhook.Of(s.engine).CreateWebhookEndpoint(c.Request().Context(), u.Actor(), u.OrganisationID, webhook.EndpointInput{URL: m.URL, Events: chosen})
	if err != nil {
		e, ok := engine.AsError(err)
		if !ok || e.Code != engine.CodeValidation {
			return s.StaffEngineError(c, err)
		}
		m.Error = views.StaffWebhookTextIn(c.Request().Context()).Errors
		for _, f := range e.Fields {
			switch f.Field {
			case "url":
				m.URLError = f.Message
			case "events":
				m.EventError = f.Message
			}
		}
		return s.renderWebhooks(c, http.StatusUnprocessableEntity, m)
	}
	return s.renderWebhooks(c, http.StatusOK, views.StaffWebhooksModel{NewSecret: secret, SecretFor: strconv.FormatInt(ep.ID, 10)})
}

// staffSetWebhookActive answers POST /staff/webhooks/{id}/active with
// active=1 or 0: switches the endpoint on (clearing why the portal
// switched it off) or off.
func (s *Server) staffSetWebhookActive(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	var on bool
	switch c.FormValue("active") {
	case "1":
		on = true
	case "0":
	default:
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).Invalid)
	}
	if _, err := webhook.Of(s.engine).UpdateWebhookEndpoint(c.Request().Context(), u.Actor(), u.OrganisationID, id, webhook.EndpointChange{Active: &on}); err != nil {
		return s.StaffEngineError(c, err)
	}
	done := flashWebhookDisabled
	if on {
		done = flashWebhookEnabled
	}
	return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath)+"?done="+done)
}

// staffRotateWebhook answers POST /staff/webhooks/{id}/rotate, after
// asking: the page with the new secret, shown this once.
func (s *Server) staffRotateWebhook(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	t := views.StaffWebhookTextIn(c.Request().Context())
	if ok, err := s.StaffConfirmed(c, t.RotateQuestion, t.RotateDetail, server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath)); !ok {
		return err
	}
	secret, err := webhook.Of(s.engine).RotateWebhookSecret(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	return s.renderWebhooks(c, http.StatusOK, views.StaffWebhooksModel{NewSecret: secret, SecretFor: strconv.FormatInt(id, 10)})
}

// staffDeleteWebhook answers POST /staff/webhooks/{id}/delete, after asking.
func (s *Server) staffDeleteWebhook(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	t := views.StaffWebhookTextIn(c.Request().Context())
	back := server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath)
	if ok, err := s.StaffConfirmed(c, t.DeleteQuestion, t.DeleteDetail, back); !ok {
		return err
	}
	if err := webhook.Of(s.engine).DeleteWebhookEndpoint(c.Request().Context(), u.Actor(), u.OrganisationID, id); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+flashWebhookDeleted)
}

// staffWebhookDeliveries answers GET /staff/webhooks/{id}: the endpoint's
// newest deliveries, with a replay for each that has ended.
func (s *Server) staffWebhookDeliveries(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	ctx := c.Request().Context()
	list, err := webhook.Of(s.engine).Deliveries(ctx, u.OrganisationID, id, staffDeliveriesListed)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	endpoints, err := webhook.Of(s.engine).Endpoints(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	i := slices.IndexFunc(endpoints, func(e engine.WebhookEndpoint) bool { return e.ID == id })
	if i < 0 {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	t := views.StaffWebhookTextIn(ctx)
	ep := endpoints[i]
	m := views.StaffWebhookDeliveriesModel{StaffChrome: s.StaffChrome(c, views.StaffWebhookDeliveriesTitle(t, ep.URL)),
		Endpoint: webhookEndpointRow(c, ep), BackURL: server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath)}
	for _, d := range list {
		row := views.StaffWebhookDeliveryRow{ID: strconv.FormatInt(d.ID, 10), EventID: d.EventID, Type: d.EventType, StatusKey: d.Status,
			Status: deliveryStatusLabel(t, d.Status), Attempts: strconv.Itoa(d.Attempts), Created: staffpage.StaffDateTime(c, d.CreatedAt)}
		if d.ResponseCode != nil {
			row.Code = strconv.Itoa(*d.ResponseCode)
		}
		row.Problem = d.LastError
		if d.LastAttemptAt != nil {
			row.LastAttempt = staffpage.StaffDateTime(c, *d.LastAttemptAt)
		}
		if d.NextRetryAt != nil {
			row.NextRetry = staffpage.StaffDateTime(c, *d.NextRetryAt)
		}
		if ep.Active && d.Status != engine.DeliveryPending && d.Status != engine.DeliveryFailed {
			row.ReplayURL = server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath+"/"+strconv.FormatInt(id, 10)+"/deliveries/"+row.ID+"/replay")
		}
		m.Deliveries = append(m.Deliveries, row)
	}
	return staffpage.StaffRender(c, http.StatusOK, views.StaffWebhookDeliveriesPage(m))
}

// deliveryStatusLabel is how the page names a delivery's status.
func deliveryStatusLabel(t *views.StaffWebhookTexts, status string) string {
	switch status {
	case engine.DeliveryDelivered:
		return t.StatusDelivered
	case engine.DeliveryFailed:
		return t.StatusFailed
	case engine.DeliveryGone:
		return t.StatusGone
	case engine.DeliverySkipped:
		return t.StatusSkipped
	case engine.DeliveryDead:
		return t.StatusDead
	}
	return t.StatusPending
}

// staffReplayWebhook answers POST
// /staff/webhooks/{id}/deliveries/{delivery}/replay: the event is sent
// again as a new delivery (audited with the staff member).
func (s *Server) staffReplayWebhook(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	delivery, deliveryOK := server.PathID(c, "delivery")
	if !ok || !deliveryOK {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if _, err := webhook.Of(s.engine).ReplayWebhookDelivery(c.Request().Context(), u.Actor(), u.OrganisationID, id, delivery); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, server.StaffPrefix+server.StaffWebhooksPath+"/"+strconv.FormatInt(id, 10))+"?done="+flashWebhookReplayed)
}

// The webhooks pages' flashes after an action.
const (
	flashWebhookEnabled  = "webhook-enabled"
	flashWebhookDisabled = "webhook-disabled"
	flashWebhookDeleted  = "webhook-deleted"
	flashWebhookReplayed = "webhook-replayed"
)

func init() {
	text := func(c echo.Context) *views.StaffWebhookTexts { return views.StaffWebhookTextIn(c.Request().Context()) }
	staffpage.StaffFlashes[flashWebhookEnabled] = func(c echo.Context) string { return text(c).Enabled }
	staffpage.StaffFlashes[flashWebhookDisabled] = func(c echo.Context) string { return text(c).Disabled }
	staffpage.StaffFlashes[flashWebhookDeleted] = func(c echo.Context) string { return text(c).Deleted }
	staffpage.StaffFlashes[flashWebhookReplayed] = func(c echo.Context) string { return text(c).Replayed }
}
