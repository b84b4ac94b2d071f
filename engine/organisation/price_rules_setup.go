package organisation

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/registration"
)

// Setting a period's price rules through the admin API: the whole set at
// once, checked as a set (codes unique, early-bird windows that do not
// overlap, no combination that could make a person's total negative) and
// replaced in one transaction.

var ruleCodePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

var ruleKinds = []engine.PriceRuleKind{engine.RuleMembershipFee, engine.RuleMemberType, engine.RuleEarlyBird, engine.RuleLateFee, engine.RuleFamily, engine.RuleAdminFee}

// ruleKindList is ruleKinds as the validation message lists them.
var ruleKindList = func() string {
	names := make([]string, len(ruleKinds))
	for i, k := range ruleKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}()

// PriceRules lists a period's price rules; the period must be the organisation's.
func (s *Service) PriceRules(ctx context.Context, orgID, periodID int64) (rules []engine.PriceRule, err error) {
	if _, err := OrgPeriod(ctx, s.DB(), orgID, periodID); err != nil {
		return nil, err
	}
	return store.PriceRules(ctx, s.DB(), periodID)
}

func OrgPeriod(ctx context.Context, db bun.IDB, orgID, periodID int64) (*engine.MembershipPeriod, error) {
	p := new(engine.MembershipPeriod)
	if err := db.NewSelect().Model(p).Where("id = ? AND organisation_id = ?", periodID, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "membership period")
	}
	return p, nil
}

// ReplacePriceRules makes rules the period's price rules, in one
// transaction. Orders already committed keep their frozen prices.
func (s *Service) ReplacePriceRules(ctx context.Context, orgID, periodID int64, rules []engine.PriceRule) ([]engine.PriceRule, error) {
	return s.replacePriceRules(ctx, nil, orgID, periodID, rules)
}

// StaffReplacePriceRules is ReplacePriceRules by a staff member or an API
// key, audited in its transaction with the rules before and after.
func (s *Service) StaffReplacePriceRules(ctx context.Context, actor engine.Actor, orgID, periodID int64, rules []engine.PriceRule) ([]engine.PriceRule, error) {
	return s.replacePriceRules(ctx, &actor, orgID, periodID, rules)
}

// priceRulesAuditView is what the audit log keeps of a period's rules.
func priceRulesAuditView(rules []engine.PriceRule) []map[string]any {
	out := make([]map[string]any, 0, len(rules))
	for _, r := range rules {
		v := map[string]any{"code": r.Code, "kind": r.Kind, "label": r.Label}
		if r.AmountMinor != nil {
			v["amountMinor"] = *r.AmountMinor
		}
		if r.PercentBP != nil {
			v["percentBp"] = *r.PercentBP
		}
		if r.MembershipTypeID != nil {
			v["membershipTypeId"] = *r.MembershipTypeID
		}
		if r.MemberType != nil {
			v["memberType"] = *r.MemberType
		}
		if r.MinPersons != nil {
			v["minPersons"] = *r.MinPersons
		}
		if r.ValidFrom != nil {
			v["validFrom"] = r.ValidFrom.Format(time.DateOnly)
		}
		if r.ValidUntil != nil {
			v["validUntil"] = r.ValidUntil.Format(time.DateOnly)
		}
		out = append(out, v)
	}
	return out
}

func (s *Service) replacePriceRules(ctx context.Context, actor *engine.Actor, orgID, periodID int64, rules []engine.PriceRule) (out []engine.PriceRule, err error) {
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := OrgPeriod(ctx, tx, orgID, periodID); err != nil {
			return err
		}
		var before []engine.PriceRule
		if actor != nil {
			if err := tx.NewSelect().Model(&before).Where("period_id = ?", periodID).Order("id ASC").Scan(ctx); err != nil {
				return fmt.Errorf("load price rules: %w", err)
			}
		}
		types, err := store.MembershipTypes(ctx, tx, orgID)
		if err != nil {
			return err
		}
		langs, err := engine.OrgTextLanguages(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := checkPriceRules(rules, types, langs); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*engine.PriceRule)(nil)).Where("period_id = ?", periodID).Exec(ctx); err != nil {
			return fmt.Errorf("clear price rules: %w", err)
		}
		for i := range rules {
			rules[i].ID, rules[i].PeriodID = 0, periodID
		}
		if len(rules) > 0 {
			if _, err := tx.NewInsert().Model(&rules).Exec(ctx); err != nil {
				return fmt.Errorf("store price rules: %w", err)
			}
		}
		out = rules
		if actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "price_rules.replace", TargetType: "period",
			TargetID: fmt.Sprint(periodID), Before: priceRulesAuditView(before), After: priceRulesAuditView(rules)})
	})
	return out, err
}

func checkPriceRules(rules []engine.PriceRule, types []engine.MembershipType, langs engine.TextLanguages) error {
	var fields []engine.FieldError
	bad := func(i int, f, m string) {
		fields = append(fields, engine.FieldError{Field: fmt.Sprintf("[%d].%s", i, f), Message: m})
	}
	typeIDs := map[int64]bool{}
	for _, t := range types {
		typeIDs[t.ID] = true
	}
	codes := map[string]int{}
	for i := range rules {
		r := &rules[i]
		for _, f := range engine.CheckClubText(langs, "label", "labelTexts", &r.Label, r.LabelTexts, 200) {
			bad(i, f.Field, f.Message)
		}
		if !ruleCodePattern.MatchString(r.Code) {
			bad(i, "code", "must be 1 to 40 lower-case letters, digits and hyphens")
		} else if first, dup := codes[r.Code]; dup {
			bad(i, "code", fmt.Sprintf("is also the code of rule %d", first))
		} else {
			codes[r.Code] = i
		}
		if !slices.Contains(ruleKinds, r.Kind) {
			bad(i, "kind", "must be one of "+ruleKindList)
		}
		if (r.AmountMinor == nil) == (r.PercentBP == nil) {
			bad(i, "amountMinor", "give exactly one of amountMinor and percentBp")
		}
		if r.PercentBP != nil && (*r.PercentBP < -10000 || *r.PercentBP > 10000) {
			bad(i, "percentBp", "must be -10000 to 10000 (basis points: -100% to 100%)")
		}
		if r.MembershipTypeID != nil && !typeIDs[*r.MembershipTypeID] {
			bad(i, "membershipTypeId", "names no membership type of the organisation")
		}
		if r.MemberType != nil && !slices.Contains([]string{engine.MemberNew, engine.MemberRenewal, engine.MemberTransfer}, *r.MemberType) {
			bad(i, "memberType", "must be NEW, RENEWAL or TRANSFER")
		}
		if r.ValidFrom != nil && r.ValidUntil != nil && !r.ValidFrom.Before(*r.ValidUntil) {
			bad(i, "validUntil", "must be after validFrom")
		}
		switch r.Kind {
		case engine.RuleMembershipFee:
			if r.MembershipTypeID == nil || r.AmountMinor == nil || *r.AmountMinor < 0 {
				bad(i, "amountMinor", "a membership fee is an amount of 0 or more for one membershipTypeId")
			}
		case engine.RuleAdminFee:
			if r.AmountMinor == nil || *r.AmountMinor < 0 {
				bad(i, "amountMinor", "an administration fee is an amount of 0 or more")
			}
		case engine.RuleFamily:
			if r.MinPersons == nil || *r.MinPersons < 2 {
				bad(i, "minPersons", "a family rule needs minPersons of 2 or more")
			}
		case engine.RuleMemberType:
			if r.MemberType == nil {
				bad(i, "memberType", "a member-type rule needs memberType")
			}
		case engine.RuleEarlyBird:
			if r.ValidUntil == nil {
				bad(i, "validUntil", "an early-bird window needs its end")
			}
		}
	}
	if len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "Some price rules are not valid.", Fields: fields}
	}
	fields = append(fields, overlappingEarlyBirds(rules)...)
	fields = append(fields, negativeTotals(rules, types)...)
	if len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "The price rules do not fit together.", Fields: fields}
	}
	return nil
}

// overlappingEarlyBirds names early-bird rules whose windows overlap for a
// membership type both apply to: a member would get both discounts.
func overlappingEarlyBirds(rules []engine.PriceRule) []engine.FieldError {
	var out []engine.FieldError
	var earliest = time.Time{}
	for i := range rules {
		for j := i + 1; j < len(rules); j++ {
			a, b := &rules[i], &rules[j]
			if a.Kind != engine.RuleEarlyBird || b.Kind != engine.RuleEarlyBird {
				continue
			}
			if a.MembershipTypeID != nil && b.MembershipTypeID != nil && *a.MembershipTypeID != *b.MembershipTypeID {
				continue
			}
			aFrom, bFrom := earliest, earliest
			if a.ValidFrom != nil {
				aFrom = *a.ValidFrom
			}
			if b.ValidFrom != nil {
				bFrom = *b.ValidFrom
			}
			if aFrom.Before(*b.ValidUntil) && bFrom.Before(*a.ValidUntil) {
				out = append(out, engine.FieldError{Field: fmt.Sprintf("[%d].validFrom", j), Message: fmt.Sprintf("the early-bird window overlaps rule %d's", i)})
			}
		}
	}
	return out
}

// negativeTotals names membership types whose cheapest fee, with every
// discount that can apply at once, would fall below zero: the most
// negative member-type rule (one applies per person), the most negative
// early-bird and late rules (their windows do not overlap) and every
// family rule.
func negativeTotals(rules []engine.PriceRule, types []engine.MembershipType) []engine.FieldError {
	var out []engine.FieldError
	for _, t := range types {
		cheapest := int64(-1)
		for i := range rules {
			r := &rules[i]
			if r.Kind == engine.RuleMembershipFee && *r.MembershipTypeID == t.ID && (cheapest < 0 || *r.AmountMinor < cheapest) {
				cheapest = *r.AmountMinor
			}
		}
		if cheapest < 0 {
			continue // no fee: registrations of this type are refused anyway
		}
		worst := map[engine.PriceRuleKind]int64{}
		family := int64(0)
		for i := range rules {
			r := &rules[i]
			if r.Kind == engine.RuleMembershipFee || r.Kind == engine.RuleAdminFee || (r.MembershipTypeID != nil && *r.MembershipTypeID != t.ID) {
				continue
			}
			amount := registration.RuleAmount(r, cheapest)
			if r.Kind == engine.RuleFamily {
				family += min(amount, 0)
				continue
			}
			worst[r.Kind] = min(worst[r.Kind], amount)
		}
		total := cheapest + family
		for _, v := range worst {
			total += v
		}
		if total < 0 {
			out = append(out, engine.FieldError{Field: "membershipTypeId", Message: fmt.Sprintf("%s: the discounts can bring a person's price below zero (%d)", t.Code, total)})
		}
	}
	return out
}
