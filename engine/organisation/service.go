// Package organisation is an organisation's setup: its membership types, periods and price rules through the admin API, its texts per language, API keys, the person import, and the demo organisations of make run. The organisation itself, its scope and settings are the centre's (engine/organisations.go).
package organisation

import "portal/engine"

// Service is the organisation subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the organisation service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
