// Package registration is a member's registration: start or load it, the person selection and the question steps with their conditions, back and reset, resume, the review, pricing and the commit.
package registration

import "portal/engine"

// Service is the registration subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the registration service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
