// Package invitation is the portal's own sign-in links for a household: invitations created one by one or in bulk for a period, their e-mails, expiry, revocation and the first open (the signed token itself is relay/invitelink's).
package invitation

import "portal/engine"

// Service is the invitation subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the invitation service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
