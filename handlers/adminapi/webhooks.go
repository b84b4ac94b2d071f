package adminapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/webhook"
	"portal/handlers/server"
)

// The admin API's webhook endpoints: where an organisation's events are
// POSTed (docs/ADMIN-API.md, "Webhooks"), their signing secrets (shown once, at
// creation and rotation) and the recent deliveries of each.

// maxDeliveriesListed bounds GET .../deliveries.
const maxDeliveriesListed = 100

// WebhookEndpointDTO is an endpoint in the admin API; Secret is present
// only in the answers to creation and rotation.
type WebhookEndpointDTO struct {
	ID             int64     `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Active         bool      `json:"active"`
	DisabledReason string    `json:"disabledReason"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
	Secret         string    `json:"secret,omitempty"`
}

// WebhookEndpointRequest is the body of POST /api/admin/webhooks and of
// PATCH /api/admin/webhooks/{id} (absent fields stay as they are).
type WebhookEndpointRequest struct {
	URL    *string   `json:"url"`
	Events *[]string `json:"events"`
	Active *bool     `json:"active"`
}

func webhookEndpointDTO(ep engine.WebhookEndpoint, secret string) WebhookEndpointDTO {
	return WebhookEndpointDTO{ID: ep.ID, URL: ep.URL, Events: ep.Events(), Active: ep.Active, DisabledReason: ep.DisabledReason,
		CreatedAt: ep.CreatedAt, UpdatedAt: ep.UpdatedAt, Secret: secret}
}

// mountAdminWebhooks adds the webhook endpoints' routes to the admin API.
func (s *Server) mountAdminWebhooks(admin *echo.Group) {
	admin.GET("/webhooks", s.listWebhookEndpoints)
	admin.POST("/webhooks", s.createWebhookEndpoint, server.RequireJSON)
	admin.PATCH("/webhooks/:id", s.patchWebhookEndpoint, server.RequireJSON)
	admin.DELETE("/webhooks/:id", s.deleteWebhookEndpoint)
	admin.POST("/webhooks/:id/rotate-secret", s.rotateWebhookSecret)
	admin.GET("/webhooks/:id/deliveries", s.listWebhookDeliveries)
	admin.POST("/webhooks/:id/deliveries/:delivery/replay", s.replayWebhookDelivery)
}

// createWebhookEndpoint answers POST /api/admin/webhooks: 201 with the
// endpoint and its signing secret, which is not shown again.
func (s *Server) createWebhookEndpoint(c echo.Context) error {
	var body WebhookEndpointRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	in := webhook.EndpointInput{Active: body.Active}
	if body.URL != nil {
		in.URL = *body.URL
	}
	if body.Events != nil {
		in.Events = *body.Events
	}
	ep, secret, err := webhook.Of(s.engine).CreateWebhookEndpoint(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, in)
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusCreated, webhookEndpointDTO(*ep, secret))
}

// listWebhookEndpoints answers GET /api/admin/webhooks.
func (s *Server) listWebhookEndpoints(c echo.Context) error {
	list, err := webhook.Of(s.engine).Endpoints(c.Request().Context(), keyOf(c).OrganisationID)
	if err != nil {
		return err
	}
	out := make([]WebhookEndpointDTO, 0, len(list))
	for _, ep := range list {
		out = append(out, webhookEndpointDTO(ep, ""))
	}
	return c.JSON(http.StatusOK, out)
}

// patchWebhookEndpoint answers PATCH /api/admin/webhooks/:id.
func (s *Server) patchWebhookEndpoint(c echo.Context) error {
	id, err := idParam(c, "id", "webhook endpoint")
	if err != nil {
		return err
	}
	var body WebhookEndpointRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	ep, err := webhook.Of(s.engine).UpdateWebhookEndpoint(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id,
		webhook.EndpointChange{URL: body.URL, Events: body.Events, Active: body.Active})
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, webhookEndpointDTO(*ep, ""))
}

// deleteWebhookEndpoint answers DELETE /api/admin/webhooks/:id: 204.
func (s *Server) deleteWebhookEndpoint(c echo.Context) error {
	id, err := idParam(c, "id", "webhook endpoint")
	if err != nil {
		return err
	}
	if err := webhook.Of(s.engine).DeleteWebhookEndpoint(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// WebhookSecretDTO answers a rotation.
type WebhookSecretDTO struct {
	Secret string `json:"secret"`
}

// rotateWebhookSecret answers POST /api/admin/webhooks/:id/rotate-secret:
// the new secret, shown this once; every attempt from now on is signed
// with it.
func (s *Server) rotateWebhookSecret(c echo.Context) error {
	id, err := idParam(c, "id", "webhook endpoint")
	if err != nil {
		return err
	}
	secret, err := webhook.Of(s.engine).RotateWebhookSecret(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, WebhookSecretDTO{Secret: secret})
}

// listWebhookDeliveries answers GET /api/admin/webhooks/:id/deliveries:
// the newest deliveries first.
func (s *Server) listWebhookDeliveries(c echo.Context) error {
	id, err := idParam(c, "id", "webhook endpoint")
	if err != nil {
		return err
	}
	list, err := webhook.Of(s.engine).Deliveries(c.Request().Context(), keyOf(c).OrganisationID, id, maxDeliveriesListed)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

// replayWebhookDelivery answers POST
// /api/admin/webhooks/:id/deliveries/:delivery/replay: 202 with the new
// delivery, which sends the same event (same id) again; 409 while the
// delivery is still being tried or the endpoint is inactive.
func (s *Server) replayWebhookDelivery(c echo.Context) error {
	id, err := idParam(c, "id", "webhook endpoint")
	if err != nil {
		return err
	}
	delivery, err := idParam(c, "delivery", "webhook delivery")
	if err != nil {
		return err
	}
	d, err := webhook.Of(s.engine).ReplayWebhookDelivery(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, delivery)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, d)
}
