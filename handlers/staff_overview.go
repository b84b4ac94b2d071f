package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/views"
)

// staffOverview answers GET /staff: the season overview.
func (s *Server) staffOverview(c echo.Context) error {
	m := views.StaffMessageModel{StaffChrome: s.staffChrome(c, staffText.NavOverview), Message: staffText.SignInIntro, Kind: "info"}
	return staffRender(c, http.StatusOK, views.StaffMessagePage(m))
}
