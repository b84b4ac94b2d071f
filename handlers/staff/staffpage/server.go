// Package staffpage is what every staff page shares: the staff sign-in
// (OIDC) with the signed-in member of staff and the role check, the chrome
// and navigation, error and confirmation pages, formats, and uploads.
package staffpage

import (
	"portal/engine"
	"portal/handlers/server"
)

// Server is the centre's Server as these handlers see it: they keep
// calling the engine s.engine.
type Server struct {
	*server.Server
	engine *engine.Service
}

// Of returns the handlers of package staffpage over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
