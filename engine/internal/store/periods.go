package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Store functions for membership periods (membership_periods) and what they
// offer: the organisation's membership types (membership_types) and the
// period's price rules (price_rules).

// LoadPeriod loads a membership period by id.
func LoadPeriod(ctx context.Context, db bun.IDB, periodID int64) (*engine.MembershipPeriod, error) {
	period := new(engine.MembershipPeriod)
	if err := db.NewSelect().Model(period).Where("id = ?", periodID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "membership period")
	}
	return period, nil
}

// MembershipTypes lists the membership types of an organisation.
func MembershipTypes(ctx context.Context, db bun.IDB, orgID int64) ([]engine.MembershipType, error) {
	var types []engine.MembershipType
	if err := db.NewSelect().Model(&types).Where("organisation_id = ?", orgID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load membership types: %w", err)
	}
	return types, nil
}

// PriceRules lists the price rules of a period in the order they were made.
func PriceRules(ctx context.Context, db bun.IDB, periodID int64) ([]engine.PriceRule, error) {
	var rules []engine.PriceRule
	if err := db.NewSelect().Model(&rules).Where("period_id = ?", periodID).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load price rules: %w", err)
	}
	return rules, nil
}
