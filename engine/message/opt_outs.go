package message

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Opt-outs (message_opt_outs): addresses that asked an organisation for
// no more messages of a category, through the one-click unsubscribe of a
// reminder. Transactional messages (confirmations, payment links) have no
// category and always go.

// Categories of messages a recipient can unsubscribe from.
const (
	// OptOutReminders: unpaid reminders, resume links, expiry reminders.
	OptOutReminders = "reminders"
	// OptOutRenewals: renewal prompts.
	OptOutRenewals = "renewals"
)

// OptOutCategory reports whether c is a category one can unsubscribe from.
func OptOutCategory(c string) bool { return c == OptOutReminders || c == OptOutRenewals }

// StoredOptOut is an opt-out as stored: an address of an organisation that wants no more messages of a category.
type StoredOptOut struct {
	bun.BaseModel  `bun:"table:message_opt_outs"`
	OrganisationID int64     `bun:"organisation_id,pk"`
	Address        string    `bun:"address,pk"`
	Category       string    `bun:"category,pk"`
	CreatedAt      time.Time `bun:"created_at,notnull"`
}

// OptOut records that addresses want no more messages of category from
// an organisation; already opted out is no error (a second click).
func OptOut(ctx context.Context, db *bun.DB, orgID int64, category string, addresses []string, now time.Time) error {
	if !OptOutCategory(category) {
		return engine.Errorf(engine.CodeInvalid, "unknown message category %q", category)
	}
	rows := make([]StoredOptOut, 0, len(addresses))
	for _, a := range addresses {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" {
			rows = append(rows, StoredOptOut{OrganisationID: orgID, Address: a, Category: category, CreatedAt: now.UTC()})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if _, err := db.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("store opt-out: %w", err)
	}
	return nil
}

// WithoutOptOuts are the addresses of to that did not opt out of category
// with the organisation, in order.
func WithoutOptOuts(ctx context.Context, db bun.IDB, orgID int64, category string, to []string) ([]string, error) {
	if len(to) == 0 {
		return nil, nil
	}
	lower := make([]string, len(to))
	for i, a := range to {
		lower[i] = strings.ToLower(strings.TrimSpace(a))
	}
	var out []string
	if err := db.NewSelect().Model((*StoredOptOut)(nil)).Column("address").
		Where("organisation_id = ? AND category = ? AND address IN (?)", orgID, category, bun.List(lower)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("load opt-outs: %w", err)
	}
	var keep []string
	for i, a := range to {
		if !slices.Contains(out, lower[i]) {
			keep = append(keep, a)
		}
	}
	return keep, nil
}

// Unsubscribe records an opt-out of the one-click unsubscribe link, in
// the request's organisation scope.
func (s *Service) Unsubscribe(ctx context.Context, orgID int64, category string, addresses []string) (err error) {
	if !engine.InScope(ctx, orgID) {
		return engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	return OptOut(ctx, s.DB(), orgID, category, addresses, s.Clock())
}
