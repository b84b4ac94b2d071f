// Package staff is what the staff pages read and change: staff records and roles, the registrations of a club and one registration with what staff may do to it, the season overview, persons, the payments needing attention and who still owes money, the jobs page and the setup page's audited changes.
package staff

import "portal/engine"

// Service is the staff subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the staff service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
