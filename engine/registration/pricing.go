package registration

import (
	"fmt"
	"slices"
	"time"

	"portal/engine"
	"portal/engine/definition"
)

// LineOption is the line kind of a chosen option, beside the price rule kinds.
const LineOption = "OPTION"

// QuoteLine is one priced component, before or after it is frozen onto an order.
type QuoteLine struct {
	PersonID    *int64
	Kind        engine.LineKind
	Code        string
	Description string
	AmountMinor int64
}

// Quote is the price of a registration: its lines and their total.
type Quote struct {
	Lines      []QuoteLine
	TotalMinor int64
	Currency   string
}

// PricedPerson is what pricing needs to know about one selected person.
type PricedPerson struct {
	Person     engine.Person
	Type       *engine.MembershipType
	MemberType string
	Answers    map[int64]string // by step id; hidden persons have none
}

// chooseMembershipType picks the type whose age range holds the person's age at
// the period's start; when several do, the narrowest range wins (a junior
// type beats an open-ended one).
func chooseMembershipType(types []engine.MembershipType, dob, periodStart time.Time) *engine.MembershipType {
	age := definition.AgeAt(dob, periodStart)
	var best *engine.MembershipType
	width := func(t *engine.MembershipType) int {
		lo, hi := 0, 200
		if t.MinAge != nil {
			lo = *t.MinAge
		}
		if t.MaxAge != nil {
			hi = *t.MaxAge
		}
		return hi - lo
	}
	for i := range types {
		t := &types[i]
		if !definition.InAgeRange(age, t.MinAge, t.MaxAge) {
			continue
		}
		if best == nil || width(t) < width(best) {
			best = t
		}
	}
	return best
}

// ruleApplies reports whether r is in force at now.
func ruleApplies(r *engine.PriceRule, now time.Time) bool {
	return (r.ValidFrom == nil || !now.Before(*r.ValidFrom)) && (r.ValidUntil == nil || now.Before(*r.ValidUntil))
}

// RuleAmount is the rule's fixed amount, or its percentage of base, rounded half away from zero.
func RuleAmount(r *engine.PriceRule, base int64) int64 {
	if r.AmountMinor != nil {
		return *r.AmountMinor
	}
	if r.PercentBP == nil {
		return 0
	}
	p := base * int64(*r.PercentBP)
	if p >= 0 {
		return (p + 5000) / 10000
	}
	return -((-p + 5000) / 10000)
}

// PriceRegistration prices a registration from the period's rules and the
// steps' price options. It is a pure function: the commit freezes its result.
func PriceRegistration(period *engine.MembershipPeriod, steps []engine.ProcessStep, people []PricedPerson, rules []engine.PriceRule, now time.Time) (Quote, error) {
	q := Quote{Currency: period.Currency}
	live := make([]*engine.PriceRule, 0, len(rules))
	for i := range rules {
		if ruleApplies(&rules[i], now) {
			live = append(live, &rules[i])
		}
	}
	add := func(personID *int64, kind engine.LineKind, code, desc string, amount int64) {
		if amount == 0 && kind != engine.LineKind(engine.RuleMembershipFee) {
			return
		}
		q.Lines = append(q.Lines, QuoteLine{PersonID: personID, Kind: kind, Code: code, Description: desc, AmountMinor: amount})
		q.TotalMinor += amount
	}
	for _, pp := range people {
		id := pp.Person.ID
		pid := &id
		name := pp.Person.FirstName + " " + pp.Person.LastName
		if pp.Type == nil {
			return Quote{}, engine.Errorf(engine.CodeValidation, "%s is not eligible for any membership type", name)
		}
		fee := membershipFeeRule(live, pp.Type.ID, pp.MemberType)
		if fee == nil {
			return Quote{}, engine.Errorf(engine.CodeConflict, "no membership fee is configured for %s in this period", pp.Type.Name)
		}
		base := RuleAmount(fee, 0)
		add(pid, engine.LineKind(engine.RuleMembershipFee), fee.Code, fmt.Sprintf("%s – %s", fee.Label, name), base)
		for _, r := range live {
			if r.MembershipTypeID != nil && *r.MembershipTypeID != pp.Type.ID {
				continue
			}
			switch r.Kind {
			case engine.RuleMemberType:
				if r.MemberType != nil && *r.MemberType == pp.MemberType {
					add(pid, engine.LineKind(r.Kind), r.Code, fmt.Sprintf("%s – %s", r.Label, name), RuleAmount(r, base))
				}
			case engine.RuleEarlyBird, engine.RuleLateFee:
				add(pid, engine.LineKind(r.Kind), r.Code, fmt.Sprintf("%s – %s", r.Label, name), RuleAmount(r, base))
			case engine.RuleFamily:
				if r.MinPersons != nil && len(people) >= *r.MinPersons {
					add(pid, engine.LineKind(r.Kind), r.Code, fmt.Sprintf("%s – %s", r.Label, name), RuleAmount(r, base))
				}
			}
		}
		for i := range steps {
			s := &steps[i]
			if s.PriceAnswer == nil || s.PriceAmountMinor == nil {
				continue
			}
			if answer, ok := pp.Answers[s.ID]; ok && answer == *s.PriceAnswer {
				add(pid, LineOption, *s.PriceCode, fmt.Sprintf("%s – %s", *s.PriceLabel, name), *s.PriceAmountMinor)
			}
		}
	}
	for _, r := range live {
		if r.Kind == engine.RuleAdminFee {
			add(nil, engine.LineKind(r.Kind), r.Code, r.Label, RuleAmount(r, 0))
		}
	}
	if q.TotalMinor < 0 {
		return Quote{}, engine.Errorf(engine.CodeConflict, "the period's price rules give a negative total; ask the organisation to check them")
	}
	return q, nil
}

// membershipFeeRule finds the fee for a type, preferring a rule for the person's member type.
func membershipFeeRule(rules []*engine.PriceRule, typeID int64, memberType string) *engine.PriceRule {
	var general *engine.PriceRule
	for _, r := range rules {
		if r.Kind != engine.RuleMembershipFee || r.MembershipTypeID == nil || *r.MembershipTypeID != typeID || r.AmountMinor == nil {
			continue
		}
		if r.MemberType != nil {
			if *r.MemberType == memberType {
				return r
			}
			continue
		}
		if general == nil {
			general = r
		}
	}
	return general
}

// memberTypeFor decides new, renewal or transfer for one person.
func memberTypeFor(steps []engine.ProcessStep, answers map[int64]string, heldPreviousTypes []int64, typeID int64) string {
	for _, s := range steps {
		if s.MarksTransfer && answers[s.ID] == "1" {
			return engine.MemberTransfer
		}
	}
	if slices.Contains(heldPreviousTypes, typeID) {
		return engine.MemberRenewal
	}
	return engine.MemberNew
}
