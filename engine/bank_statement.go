package engine

import "portal/engine/banking"

// StatementOptions steer a statement import.
type StatementOptions struct {
	// Account is the IBAN of the bank-transfer account: credits to other
	// accounts in the file are left alone.
	Account banking.IBAN
	// Organisation is the organisation whose own account Account is; 0
	// for the environment's account (PORTAL_BANK_IBAN), which takes the
	// transfers of the organisations without a bank account of their own.
	// Only that account's open payments are matched: a credit without a
	// reference never pays another club's order of the same amount.
	Organisation int64
	// DryRun reports what would be captured without capturing.
	DryRun bool
	// Actor is who imports (audited per capture): a staff member, an API
	// key or the command line (engine.CommandLine).
	Actor *Actor
}
