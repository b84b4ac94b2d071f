// Package members is what members see: the registration pages under
// /membership/register, the form JSON API under /api/forms, the pay link and
// payment pages, invitations, card verification, unsubscribing, and the
// "Your data" page.
package members

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

// Of returns the handlers of package members over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
