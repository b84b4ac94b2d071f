// Package adminapi is the admin API under /api/admin: an organisation's API
// keys (or a staff session) manage its settings, persons, definitions,
// payments, debits, messages and webhooks.
package adminapi

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

// Of returns the handlers of package adminapi over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
