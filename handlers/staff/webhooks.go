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
	"portal/views/staffview"
)

// The staff webhooks page (admins): what the admin API's /webhooks routes
// and `portal webhooks` do, for a club without its own tooling.

// staffDeliveriesListed is how many deliveries an endpoint's page shows.
const staffDeliveriesListed = 50

// staffWebhooksPage answers GET /staff/webhooks.
func (s *Server) staffWebhooksPage(c echo.Context) error {
	return s.renderWebhooks(c, http.StatusOK, staffview.WebhooksModel{})
}

// renderWebhooks shows the page with m's form, problems or new secret.
func (s *Server) renderWebhooks(c echo.Context, status int, m staffview.WebhooksModel) error {
	u := staffpage.StaffUserOf(c)
	list, err := webhook.Of(s.engine).Endpoints(c.Request().Context(), u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m.Chrome = s.StaffChrome(c, staffview.WebhookTextIn(c.Request().Context()).Title)
	m.AddURL = staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath)
	if m.Events == nil {
		for _, t := range engine.WebhookEventTypes {
			m.Events = append(m.Events, staffview.WebhookEventChoice{Value: t, Checked: true})
		}
	}
	for _, ep := range list {
		m.Endpoints = append(m.Endpoints, webhookEndpointRow(c, ep))
	}
	return staffpage.StaffRender(c, status, staffview.Webhooks(m))
}

func webhookEndpointRow(c echo.Context, ep engine.WebhookEndpoint) staffview.WebhookEndpointRow {
	base := server.StaffPrefix + server.StaffWebhooksPath + "/" + strconv.FormatInt(ep.ID, 10)
	return staffview.WebhookEndpointRow{ID: strconv.FormatInt(ep.ID, 10), URL: ep.URL, Events: strings.Join(ep.Events(), ", "),
		Active: ep.Active, DisabledReason: ep.DisabledReason, DeliveriesURL: staffpage.RequestOf(c).Path(base),
		ToggleURL: staffpage.RequestOf(c).Path(base + "/active"), RotateURL: staffpage.RequestOf(c).Path(base + "/rotate"), DeleteURL: staffpage.RequestOf(c).Path(base + "/delete")}
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
	m := staffview.WebhooksModel{URL: strings.TrimSpace(form.Get("url")), Events: []staffview.WebhookEventChoice{}}
	for _, t := range engine.WebhookEventTypes {
		m.Events = append(m.Events, staffview.WebhookEventChoice{Value: t, Checked: slices.Contains(chosen, t)})
	}
	ep, secret, err := webhook.Of(s.engine).CreateWebhookEndpoint(c.Request().Context(), u.Actor(), u.OrganisationID, webhook.EndpointInput{URL: m.URL, Events: chosen})
	if err != nil {
		e, ok := engine.AsError(err)
		if !ok || e.Code != engine.CodeValidation {
			return s.StaffEngineError(c, err)
		}
		m.Error = staffview.WebhookTextIn(c.Request().Context()).Errors
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
	return s.renderWebhooks(c, http.StatusOK, staffview.WebhooksModel{NewSecret: secret, SecretFor: strconv.FormatInt(ep.ID, 10)})
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
	return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath)+"?done="+done)
}

// staffRotateWebhook answers POST /staff/webhooks/{id}/rotate, after
// asking: the page with the new secret, shown this once.
func (s *Server) staffRotateWebhook(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	t := staffview.WebhookTextIn(c.Request().Context())
	if ok, err := s.StaffConfirmed(c, t.RotateQuestion, t.RotateDetail, staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath)); !ok {
		return err
	}
	secret, err := webhook.Of(s.engine).RotateWebhookSecret(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	return s.renderWebhooks(c, http.StatusOK, staffview.WebhooksModel{NewSecret: secret, SecretFor: strconv.FormatInt(id, 10)})
}

// staffDeleteWebhook answers POST /staff/webhooks/{id}/delete, after asking.
func (s *Server) staffDeleteWebhook(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	t := staffview.WebhookTextIn(c.Request().Context())
	back := staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath)
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
	t := staffview.WebhookTextIn(ctx)
	ep := endpoints[i]
	m := staffview.WebhookDeliveriesModel{Chrome: s.StaffChrome(c, staffview.WebhookDeliveriesTitle(t, ep.URL)),
		Endpoint: webhookEndpointRow(c, ep), BackURL: staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath)}
	for _, d := range list {
		row := staffview.WebhookDeliveryRow{ID: strconv.FormatInt(d.ID, 10), EventID: d.EventID, Type: d.EventType, StatusKey: d.Status,
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
			row.ReplayURL = staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath + "/" + strconv.FormatInt(id, 10) + "/deliveries/" + row.ID + "/replay")
		}
		m.Deliveries = append(m.Deliveries, row)
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.WebhookDeliveries(m))
}

// deliveryStatusLabel is how the page names a delivery's status.
func deliveryStatusLabel(t *staffview.WebhookTexts, status string) string {
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
	return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffWebhooksPath+"/"+strconv.FormatInt(id, 10))+"?done="+flashWebhookReplayed)
}

// The webhooks pages' flashes after an action.
const (
	flashWebhookEnabled  = "webhook-enabled"
	flashWebhookDisabled = "webhook-disabled"
	flashWebhookDeleted  = "webhook-deleted"
	flashWebhookReplayed = "webhook-replayed"
)

func init() {
	text := func(c echo.Context) *staffview.WebhookTexts { return staffview.WebhookTextIn(c.Request().Context()) }
	staffpage.StaffFlashes[flashWebhookEnabled] = func(c echo.Context) string { return text(c).Enabled }
	staffpage.StaffFlashes[flashWebhookDisabled] = func(c echo.Context) string { return text(c).Disabled }
	staffpage.StaffFlashes[flashWebhookDeleted] = func(c echo.Context) string { return text(c).Deleted }
	staffpage.StaffFlashes[flashWebhookReplayed] = func(c echo.Context) string { return text(c).Replayed }
}
