// Package demodata seeds the demo of make run and of the tests: the demo organisation, period, pricing, persons and definition, and members demo-1 ... demo-N.
package demodata

import "portal/engine"

// Service is the demodata subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the demodata service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
