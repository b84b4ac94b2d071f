// Package payments is the staff pages of money: payments and bank
// statements, direct-debit runs and mandates, open payments, the year-end
// report.
package payments

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

// Of returns the handlers of package payments over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: staffpage.Of(c), engine: c.Engine()} }
