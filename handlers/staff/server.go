// Package staff is the staff pages under /staff: their route table with
// each page's least role, the overview, the jobs, the setup sections,
// definitions and webhooks; the registrations' and the payments' pages are
// in its subpackages, whose handlers the table reaches through Server.
package staff

import (
	"portal/engine"
	"portal/handlers/server"
	"portal/handlers/staff/payments"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
)

// paymentPages and registrationPages name the embedded subpackages' pages
// apart from the centre's Server (an embedded field is named after its type).
type (
	paymentPages      = payments.Server
	registrationPages = registrations.Server
)

// Server is the centre's Server as the staff pages see it, with what every
// staff page shares (staffpage) and the handlers of the subpackages' pages
// promoted for the route table; its handlers keep calling the engine
// s.engine.
type Server struct {
	*staffpage.Server
	*paymentPages
	*registrationPages
	engine *engine.Service
}

// Of returns the staff pages over the centre c.
func Of(c *server.Server) *Server {
	return &Server{Server: staffpage.Of(c), paymentPages: payments.Of(c), registrationPages: registrations.Of(c), engine: c.Engine()}
}
