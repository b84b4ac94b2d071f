// Package registrations is the staff pages of registrations and persons: the
// list and a registration's page with its actions, a person's data and
// erasure, the members' data requests, invitations and person imports, the
// audit log.
package registrations

import (
	"portal/engine"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
)

// Server is the centre's Server as these staff pages see it, with what
// every staff page shares (staffpage); they keep calling the engine s.engine.
type Server struct {
	*staffpage.Server
	engine *engine.Service
}

// Of returns the handlers of package registrations over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: staffpage.Of(c), engine: c.Engine()} }
