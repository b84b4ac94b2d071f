package registration

import (
	"slices"
	"testing"
	"time"

	"portal/engine"
	"portal/engine/demodata"
)

// Membership types of the pricing tests: the demo's adult and junior, and a
// student type whose range lies inside the adult one.
const (
	adultType   = int64(1)
	juniorType  = int64(2)
	studentType = int64(3)
)

var pricingTypes = []engine.MembershipType{
	{ID: adultType, Code: "ADULT", Name: "Adult", MinAge: new(18)},
	{ID: juniorType, Code: "JUNIOR", Name: "Junior", MaxAge: new(17)},
	{ID: studentType, Code: "STUDENT", Name: "Student", MinAge: new(18), MaxAge: new(25)},
}

func TestChooseMembershipType(t *testing.T) {
	start := demodata.DemoDate("2026-09-01")
	adultJunior := pricingTypes[:2]
	tests := []struct {
		name  string
		types []engine.MembershipType
		dob   string
		want  int64 // 0: no type fits
	}{
		{name: "adult", types: adultJunior, dob: "1985-04-12", want: adultType},
		{name: "junior", types: adultJunior, dob: "2014-06-02", want: juniorType},
		{name: "18 on the period start is adult", types: adultJunior, dob: "2008-09-01", want: adultType},
		{name: "18 the day after the period start is junior", types: adultJunior, dob: "2008-09-02", want: juniorType},
		{name: "narrowest range wins", types: pricingTypes, dob: "2005-01-01", want: studentType},
		{name: "narrowest range wins whatever the order", types: []engine.MembershipType{pricingTypes[2], pricingTypes[0]}, dob: "2005-01-01", want: studentType},
		{name: "open range when the narrow one does not fit", types: pricingTypes, dob: "1990-01-01", want: adultType},
		{name: "no type fits", types: pricingTypes[:1], dob: "2014-06-02", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chooseMembershipType(tc.types, demodata.DemoDate(tc.dob), start)
			var id int64
			if got != nil {
				id = got.ID
			}
			if id != tc.want {
				t.Fatalf("type = %d, want %d", id, tc.want)
			}
		})
	}
}

func TestMemberTypeFor(t *testing.T) {
	steps := []engine.ProcessStep{{ID: 10, QuestionType: engine.TypeText}, {ID: 11, QuestionType: engine.TypeCheckbox, MarksTransfer: true}}
	tests := []struct {
		name    string
		answers map[int64]string
		held    []int64
		want    string
	}{
		{name: "no previous membership is new", answers: map[int64]string{11: "0"}, want: engine.MemberNew},
		{name: "same type last period is renewal", answers: map[int64]string{11: "0"}, held: []int64{adultType}, want: engine.MemberRenewal},
		{name: "transfer answer wins over renewal", answers: map[int64]string{11: "1"}, held: []int64{adultType}, want: engine.MemberTransfer},
		{name: "transfer answer without previous membership", answers: map[int64]string{11: "1"}, want: engine.MemberTransfer},
		{name: "1 on a step that does not mark transfer", answers: map[int64]string{10: "1"}, want: engine.MemberNew},
		// The engine's rule: renewal means the same type as last period, so a
		// junior who has become an adult joins as new.
		{name: "another type last period is new", answers: map[int64]string{}, held: []int64{juniorType}, want: engine.MemberNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := memberTypeFor(steps, tc.answers, tc.held, adultType); got != tc.want {
				t.Fatalf("member type = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRuleAmount(t *testing.T) {
	tests := []struct {
		name string
		rule engine.PriceRule
		base int64
		want int64
	}{
		{name: "fixed amount ignores the base", rule: engine.PriceRule{AmountMinor: new(int64(250))}, base: 12000, want: 250},
		{name: "fixed negative amount", rule: engine.PriceRule{AmountMinor: new(int64(-1000))}, base: 12000, want: -1000},
		{name: "percentage of the base", rule: engine.PriceRule{PercentBP: new(-1000)}, base: 12000, want: -1200},
		{name: "positive half rounds up", rule: engine.PriceRule{PercentBP: new(1000)}, base: 12345, want: 1235},
		{name: "negative half rounds away from zero", rule: engine.PriceRule{PercentBP: new(-1000)}, base: 12345, want: -1235},
		{name: "positive below half rounds down", rule: engine.PriceRule{PercentBP: new(1000)}, base: 12344, want: 1234},
		{name: "negative below half rounds toward zero", rule: engine.PriceRule{PercentBP: new(-1000)}, base: 12344, want: -1234},
		{name: "basis points", rule: engine.PriceRule{PercentBP: new(-1550)}, base: 10001, want: -1550},
		{name: "neither amount nor percentage", rule: engine.PriceRule{}, base: 12000, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAmount(&tc.rule, tc.base); got != tc.want {
				t.Fatalf("ruleAmount = %d, want %d", got, tc.want)
			}
		})
	}
}

// line is the part of a quote line the pricing tests compare; person 0 is an order-wide line.
type line struct {
	person int64
	code   string
	amount int64
}

func TestPriceRegistration(t *testing.T) {
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	period := &engine.MembershipPeriod{ID: 1, StartDate: start, EndDate: start.AddDate(1, 0, -1), Currency: "EUR"}
	during := start.AddDate(0, 3, 0) // outside every window of the cases
	earlyUntil := start.AddDate(0, 2, 0)
	lateFrom := start.AddDate(0, 6, 0)

	insurance := engine.ProcessStep{ID: 30, Name: "insurance", QuestionType: engine.TypeCheckbox,
		PriceCode: new("insurance"), PriceLabel: new("Accident insurance"), PriceAnswer: new("1"), PriceAmountMinor: new(int64(1500))}
	steps := []engine.ProcessStep{{ID: 10, QuestionType: engine.TypeText}, insurance}

	fee := func(code string, typeID, amount int64) engine.PriceRule {
		return engine.PriceRule{Code: code, Kind: engine.RuleMembershipFee, Label: code, MembershipTypeID: &typeID, AmountMinor: &amount}
	}
	fees := []engine.PriceRule{fee("adult-fee", adultType, 12000), fee("junior-fee", juniorType, 6000), fee("student-fee", studentType, 8000)}
	with := func(extra ...engine.PriceRule) []engine.PriceRule { return append(slices.Clone(fees), extra...) }
	memberType := func(code, mt string, amount int64) engine.PriceRule {
		return engine.PriceRule{Code: code, Kind: engine.RuleMemberType, Label: code, MemberType: &mt, AmountMinor: &amount}
	}
	onlyFor := func(r engine.PriceRule, typeID int64) engine.PriceRule { r.MembershipTypeID = &typeID; return r }
	forMemberType := func(r engine.PriceRule, mt string) engine.PriceRule { r.MemberType = &mt; return r }
	validFrom := func(r engine.PriceRule, from time.Time) engine.PriceRule { r.ValidFrom = &from; return r }

	type person struct {
		id         int64
		dob        string
		memberType string
		answers    map[int64]string
	}
	alex := person{id: 1, dob: "1985-04-12", memberType: engine.MemberNew}
	sam := person{id: 2, dob: "1987-09-30", memberType: engine.MemberNew}
	robin := person{id: 3, dob: "2014-06-02", memberType: engine.MemberNew}
	as := func(p person, mt string) person { p.memberType = mt; return p }
	answering := func(p person, answers map[int64]string) person { p.answers = answers; return p }

	tests := []struct {
		name      string
		people    []person
		types     []engine.MembershipType // default: pricingTypes[:2] (adult and junior)
		rules     []engine.PriceRule
		now       time.Time // default: during
		want      []line
		wantTotal int64
		wantErr   engine.Code
	}{
		{
			name: "adult fee", people: []person{alex}, rules: fees,
			want: []line{{1, "adult-fee", 12000}}, wantTotal: 12000,
		},
		{
			name: "junior fee", people: []person{robin}, rules: fees,
			want: []line{{3, "junior-fee", 6000}}, wantTotal: 6000,
		},
		{
			name: "type by age at the period start, not at registration",
			// 18 on 2 September 2026: still a junior on the period start.
			people: []person{{id: 5, dob: "2008-09-02", memberType: engine.MemberNew}}, rules: fees,
			now:  start.AddDate(0, 1, 0),
			want: []line{{5, "junior-fee", 6000}}, wantTotal: 6000,
		},
		{
			name: "narrowest type range wins", people: []person{{id: 6, dob: "2005-01-01", memberType: engine.MemberNew}},
			types: pricingTypes, rules: fees,
			want: []line{{6, "student-fee", 8000}}, wantTotal: 8000,
		},
		{
			name: "NEW member line", people: []person{alex},
			rules: with(memberType("joining-fee", engine.MemberNew, 1500), memberType("loyalty", engine.MemberRenewal, -1000), memberType("transfer-fee", engine.MemberTransfer, 500)),
			want:  []line{{1, "adult-fee", 12000}, {1, "joining-fee", 1500}}, wantTotal: 13500,
		},
		{
			name: "RENEWAL member line", people: []person{as(alex, engine.MemberRenewal)},
			rules: with(memberType("joining-fee", engine.MemberNew, 1500), memberType("loyalty", engine.MemberRenewal, -1000), memberType("transfer-fee", engine.MemberTransfer, 500)),
			want:  []line{{1, "adult-fee", 12000}, {1, "loyalty", -1000}}, wantTotal: 11000,
		},
		{
			name: "TRANSFER member line", people: []person{as(alex, engine.MemberTransfer)},
			rules: with(memberType("joining-fee", engine.MemberNew, 1500), memberType("loyalty", engine.MemberRenewal, -1000), memberType("transfer-fee", engine.MemberTransfer, 500)),
			want:  []line{{1, "adult-fee", 12000}, {1, "transfer-fee", 500}}, wantTotal: 12500,
		},
		{
			name: "member type rule limited to another membership type", people: []person{alex, robin},
			rules: with(onlyFor(memberType("junior-joining", engine.MemberNew, 700), juniorType)),
			want:  []line{{1, "adult-fee", 12000}, {3, "junior-fee", 6000}, {3, "junior-joining", 700}}, wantTotal: 18700,
		},
		{
			name: "fee for the member type wins over the general fee", people: []person{as(alex, engine.MemberRenewal), as(sam, engine.MemberNew)},
			rules: []engine.PriceRule{fee("adult-fee", adultType, 12000), forMemberType(fee("adult-renewal-fee", adultType, 10000), engine.MemberRenewal)},
			want:  []line{{1, "adult-renewal-fee", 10000}, {2, "adult-fee", 12000}}, wantTotal: 22000,
		},
		{
			name: "early bird inside its window, rounded half away from zero", people: []person{alex},
			rules: []engine.PriceRule{fee("adult-fee", adultType, 12345),
				{Code: "early-bird", Kind: engine.RuleEarlyBird, Label: "Early bird", ValidUntil: &earlyUntil, PercentBP: new(-1000)}},
			now:  earlyUntil.Add(-time.Second),
			want: []line{{1, "adult-fee", 12345}, {1, "early-bird", -1235}}, wantTotal: 11110,
		},
		{
			name: "early bird ends at its valid-until instant", people: []person{alex},
			rules: with(engine.PriceRule{Code: "early-bird", Kind: engine.RuleEarlyBird, Label: "Early bird", ValidUntil: &earlyUntil, PercentBP: new(-1000)}),
			now:   earlyUntil,
			want:  []line{{1, "adult-fee", 12000}}, wantTotal: 12000,
		},
		{
			name: "late fee from its valid-from instant", people: []person{alex, robin},
			rules: with(engine.PriceRule{Code: "late-fee", Kind: engine.RuleLateFee, Label: "Late", ValidFrom: &lateFrom, AmountMinor: new(int64(2000))}),
			now:   lateFrom,
			want:  []line{{1, "adult-fee", 12000}, {1, "late-fee", 2000}, {3, "junior-fee", 6000}, {3, "late-fee", 2000}}, wantTotal: 22000,
		},
		{
			name: "no late fee before its window", people: []person{alex},
			rules: with(engine.PriceRule{Code: "late-fee", Kind: engine.RuleLateFee, Label: "Late", ValidFrom: &lateFrom, AmountMinor: new(int64(2000))}),
			now:   lateFrom.Add(-time.Second),
			want:  []line{{1, "adult-fee", 12000}}, wantTotal: 12000,
		},
		{
			name: "family discount from its number of persons", people: []person{alex, sam, robin},
			rules: with(engine.PriceRule{Code: "family", Kind: engine.RuleFamily, Label: "Family", MinPersons: new(3), PercentBP: new(-1500)}),
			want: []line{
				{1, "adult-fee", 12000}, {1, "family", -1800},
				{2, "adult-fee", 12000}, {2, "family", -1800},
				{3, "junior-fee", 6000}, {3, "family", -900},
			},
			wantTotal: 25500,
		},
		{
			name: "no family discount below its number of persons", people: []person{alex, robin},
			rules: with(engine.PriceRule{Code: "family", Kind: engine.RuleFamily, Label: "Family", MinPersons: new(3), PercentBP: new(-1500)}),
			want:  []line{{1, "adult-fee", 12000}, {3, "junior-fee", 6000}}, wantTotal: 18000,
		},
		{
			name:   "step price option per person answering 1, not for 0 or no answer",
			people: []person{answering(alex, map[int64]string{30: "1"}), answering(sam, map[int64]string{30: "0"}), robin},
			rules:  fees,
			want: []line{
				{1, "adult-fee", 12000}, {1, "insurance", 1500},
				{2, "adult-fee", 12000},
				{3, "junior-fee", 6000},
			},
			wantTotal: 31500,
		},
		{
			name: "admin fee once per order", people: []person{alex, sam, robin},
			rules: with(engine.PriceRule{Code: "admin-fee", Kind: engine.RuleAdminFee, Label: "Administration", AmountMinor: new(int64(250))}),
			want:  []line{{1, "adult-fee", 12000}, {2, "adult-fee", 12000}, {3, "junior-fee", 6000}, {0, "admin-fee", 250}}, wantTotal: 30250,
		},
		{
			name: "zero membership fee still gets its line", people: []person{robin},
			rules: []engine.PriceRule{fee("junior-fee", juniorType, 0),
				{Code: "early-bird", Kind: engine.RuleEarlyBird, Label: "Early bird", PercentBP: new(-1000)}},
			want: []line{{3, "junior-fee", 0}}, wantTotal: 0,
		},
		{
			name: "missing fee rule", people: []person{alex, robin}, rules: []engine.PriceRule{fee("adult-fee", adultType, 12000)},
			wantErr: engine.CodeConflict,
		},
		{
			name: "fee rule outside its window counts as missing", people: []person{alex},
			rules:   []engine.PriceRule{validFrom(fee("adult-fee", adultType, 12000), lateFrom)},
			wantErr: engine.CodeConflict,
		},
		{
			name: "person not eligible for any type", people: []person{robin}, types: pricingTypes[:1], rules: fees,
			wantErr: engine.CodeValidation,
		},
		{
			name: "negative total rejected", people: []person{alex},
			rules:   with(memberType("too-generous", engine.MemberNew, -12001)),
			wantErr: engine.CodeConflict,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			types := tc.types
			if types == nil {
				types = pricingTypes[:2]
			}
			now := tc.now
			if now.IsZero() {
				now = during
			}
			people := make([]PricedPerson, len(tc.people))
			for i, p := range tc.people {
				dob := demodata.DemoDate(p.dob)
				people[i] = PricedPerson{
					Person: engine.Person{ID: p.id, FirstName: "P", LastName: "Person", DateOfBirth: dob},
					Type:   chooseMembershipType(types, dob, period.StartDate), MemberType: p.memberType, Answers: p.answers,
				}
			}
			q, err := PriceRegistration(period, steps, people, tc.rules, now)
			if tc.wantErr != "" {
				if engine.ErrorCode(err) != tc.wantErr {
					t.Fatalf("error = %v (code %s), want code %s; quote %+v", err, engine.ErrorCode(err), tc.wantErr, q)
				}
				return
			}
			if err != nil {
				t.Fatalf("priceRegistration: %v", err)
			}
			var got []line
			var sum int64
			for _, l := range q.Lines {
				var person int64
				if l.PersonID != nil {
					person = *l.PersonID
				}
				got = append(got, line{person, l.Code, l.AmountMinor})
				sum += l.AmountMinor
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines = %v\nwant    %v", got, tc.want)
			}
			if q.TotalMinor != tc.wantTotal || sum != q.TotalMinor {
				t.Errorf("total = %d (lines sum to %d), want %d", q.TotalMinor, sum, tc.wantTotal)
			}
			if q.Currency != "EUR" {
				t.Errorf("currency = %q, want EUR", q.Currency)
			}
		})
	}
}

// TestPriceRegistrationLineDescriptions: a line names its rule and its person,
// since the order shows it to the member as it is.
func TestPriceRegistrationLineDescriptions(t *testing.T) {
	period := &engine.MembershipPeriod{StartDate: demodata.DemoDate("2026-09-01"), Currency: "EUR"}
	typ := pricingTypes[0]
	people := []PricedPerson{{Person: engine.Person{ID: 1, FirstName: "Alex", LastName: "Morgan"}, Type: &typ, MemberType: engine.MemberNew}}
	rules := []engine.PriceRule{
		{Code: "adult-fee", Kind: engine.RuleMembershipFee, Label: "Adult membership", MembershipTypeID: new(adultType), AmountMinor: new(int64(12000))},
		{Code: "admin-fee", Kind: engine.RuleAdminFee, Label: "Administration fee", AmountMinor: new(int64(250))},
	}
	q, err := PriceRegistration(period, nil, people, rules, demodata.DemoDate("2026-10-01"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Adult membership – Alex Morgan", "Administration fee"}
	var got []string
	for _, l := range q.Lines {
		got = append(got, l.Description)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("descriptions = %q, want %q", got, want)
	}
}
