package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// payLink answers GET /pay/:reference?reference=&amount=: the stable pay
// link of an order, in the done page, the API's paymentUrl and e-mails. It
// creates or reuses the provider's checkout for the order's open attempt
// (a new one when the last expired, failed or was cancelled) and sends the
// browser there. The query only mirrors the spec's paymentUrl: the order
// and its amount come from the database, never from it.
func (s *Server) payLink(c echo.Context) error {
	p, err := s.engine.FollowPayLink(c.Request().Context(), c.Param("reference"))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, p.PaymentURL)
}
