// Package registrations is the staff pages of registrations and persons: the list and a registration's page with its actions, a person's data and erasure, the members' data requests, invitations and person imports, the audit log.
package registrations

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

// Of returns the handlers of package registrations over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
