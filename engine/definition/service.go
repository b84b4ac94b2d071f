// Package definition is the process definitions: their import format (YAML or JSON) with validation and conditions, versions and activation, texts per language, the cache of parsed versions, and the path through a definition recomputed from the saved answers.
package definition

import "portal/engine"

// Service is the definition subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the definition service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
