// Package webhook is an organisation's outbound webhook endpoints: their addresses, events and signing secrets, the record and replay of each delivery, and the pruning of delivered events. Events are written by the centre (engine.EmitEvent) in the change's transaction; sending is outbound/webhooks'.
package webhook

import "portal/engine"

// Service is the webhook subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the webhook service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
