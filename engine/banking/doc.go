// Package banking owns payment by bank transfer: IBAN and ISO 11649
// creditor references, the QR payloads a banking app scans (EPC069-12 SEPA
// credit transfer, Swiss QR-bill), their rendering as SVG or PNG, and the
// reading of ISO 20022 bank statements (camt.053, camt.054) with a matcher
// that pairs incoming credits with the payments the portal expects. It
// also owns the bank side of SEPA direct debits: creditor identifiers and
// mandate references, the SEPA character set, the pain.008 collection
// file (WriteDirectDebits) and the returned debits a statement reports
// (Statement.Returns) with their reasons in words.
//
// It knows nothing of the database or of HTTP: the engine's bank_transfer
// provider derives a Reference per payment (CreditorReference), builds a
// Transfer and asks for its QR code; the payments import command hands
// ParseStatement's credits and the open payments to Match and captures the
// proposals it accepts.
package banking
