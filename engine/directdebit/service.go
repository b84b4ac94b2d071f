package directdebit

import "portal/engine"

// Service is the direct-debit subject (mandates, collection runs, returns) over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the directdebit service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
