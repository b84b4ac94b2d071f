// Package payments is the staff pages of money: payments and bank statements, direct-debit runs and mandates, open payments, the year-end report.
package payments

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

// Of returns the handlers of package payments over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
