// Package payment is how an order gets paid: payment attempts and the stable pay link, one settlement for webhooks, returns and captures, staff capture of a bank transfer, refunds, reconciliation, the organisation's stored payment settings (changed in engine/payment/settings), its methods and provider accounts, and the direct-debit due dates and debits its settlement counts.
package payment

import "portal/engine"

// Service is the payment subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the payment service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
