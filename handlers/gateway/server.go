// Package gateway is the portal's doors to other systems: the relay to the
// admin backend under its prefix, the members' OIDC login and logout,
// /metrics, and the webhooks Stripe sends.
package gateway

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

// Of returns the handlers of package gateway over the centre c.
func Of(c *server.Server) *Server { return &Server{Server: c, engine: c.Engine()} }
