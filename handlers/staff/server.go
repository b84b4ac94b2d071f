// Package staff is the staff pages under /staff: their route table with each page's least role, the overview, the jobs, the setup sections, definitions and webhooks; the registrations' and the payments' pages are in its subpackages.
package staff

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

// Of returns the handlers of package staff over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
