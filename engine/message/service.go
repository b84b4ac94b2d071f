// Package message is what the portal tells members over time and what each message says: the paid order's confirmation with its membership cards, unpaid reminders, welcomes, expiry reminders, renewal prompts, opt-outs and the language a message goes out in. outbound/messages renders and sends them.
package message

import "portal/engine"

// Service is the message subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the message service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
