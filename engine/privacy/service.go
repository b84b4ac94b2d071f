// Package privacy is data protection (issue 30): the export of everything the club holds about a person or household, the erasure of a person, members' requests about their data, the staff access log, and the daily retention job that applies each organisation's retention settings.
package privacy

import "portal/engine"

// Service is the privacy subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the privacy service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
