// Package report holds what a club reads about a period as a whole: the year-end report for its general meeting and the export of its registrations and payments.
package report

import "portal/engine"

// Service is the report subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the report service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
