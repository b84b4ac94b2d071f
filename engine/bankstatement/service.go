// Package bankstatement is the bank statement import: a camt.053/054/052 statement's credits matched to open bank-transfer payments and captured through the payment settlement, its returned direct debits taken back, and the credits it could not match kept for the treasurer to resolve.
package bankstatement

import "portal/engine"

// Service is the bankstatement subject over the engine's centre: the database,
// clock, organisation scope and writers it shares with the other subjects.
type Service struct{ *engine.Service }

// Of returns the bankstatement service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }
