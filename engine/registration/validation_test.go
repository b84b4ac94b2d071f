package registration

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/demodata"
)

// shown and hidden build one person's raw answer; a nil answer is "sent none".
func shown(id int64, answer *string) answerFor { return answerFor{PersonID: id, Answer: answer} }
func hidden(id int64, answer *string) answerFor {
	return answerFor{PersonID: id, Hide: true, Answer: answer}
}

func patternOf(step *engine.ProcessStep) *regexp.Regexp {
	if step.FormatPattern == nil {
		return nil
	}
	return regexp.MustCompile(*step.FormatPattern)
}

// TestValidateStep covers the spec's six answer rules, in its order, and the
// rule that a missing checkbox-like answer counts as "0".
func TestValidateStep(t *testing.T) {
	step := func(typ engine.QuestionType, required bool) engine.ProcessStep {
		return engine.ProcessStep{ID: 7, Name: "q", QuestionType: typ, Required: required}
	}
	tests := []struct {
		name     string
		step     engine.ProcessStep
		people   []answerFor
		want     map[int64]string // stored answers, checked only when wantErrs is empty
		wantErrs []engine.PersonError
	}{
		// Rule 1: not required is valid.
		{
			name:   "not required TXT without answers is valid",
			step:   step(engine.TypeText, false),
			people: []answerFor{shown(1, nil), shown(2, new("  "))},
			want:   map[int64]string{1: "", 2: ""},
		},
		{
			name:   "not required DRP without answer is valid",
			step:   engine.ProcessStep{QuestionType: engine.TypeDropdown, Options: []engine.ProcessStepOption{{Value: "S"}}},
			people: []answerFor{shown(1, nil)},
			want:   map[int64]string{1: ""},
		},
		{
			name:   "not required ITC with 0 is valid",
			step:   step(engine.TypeAccept, false),
			people: []answerFor{shown(1, new("0")), shown(2, nil)},
			want:   map[int64]string{1: "0", 2: "0"},
		},
		{
			name:   "not required ONE with nobody chosen is valid",
			step:   step(engine.TypeOne, false),
			people: []answerFor{shown(1, new("0")), shown(2, nil)},
			want:   map[int64]string{1: "0", 2: "0"},
		},
		{
			name: "not required answer that is given must still fit the format",
			step: engine.ProcessStep{QuestionType: engine.TypeText, FormatPattern: new(`^[0-9]{10}$`),
				FormatMessage: new("Phone number must be 10 digits")},
			people:   []answerFor{shown(1, nil), shown(2, new("123"))},
			wantErrs: []engine.PersonError{{PersonID: 2, Message: "Phone number must be 10 digits"}},
		},

		// Rule 2: ITC, every shown person must answer 1.
		{
			name:   "ITC required every person accepts",
			step:   step(engine.TypeAccept, true),
			people: []answerFor{shown(1, new("1")), shown(2, new(" 1 "))},
			want:   map[int64]string{1: "1", 2: "1"},
		},
		{
			name:     "ITC required one person answers 0",
			step:     step(engine.TypeAccept, true),
			people:   []answerFor{shown(1, new("1")), shown(2, new("0"))},
			wantErrs: []engine.PersonError{{PersonID: 2, Message: "Please accept the terms for this person."}},
		},
		{
			name:     "ITC required missing answer counts as 0",
			step:     step(engine.TypeAccept, true),
			people:   []answerFor{shown(1, nil), shown(2, new("1"))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "Please accept the terms for this person."}},
		},
		{
			name:     "ITC answer other than 0 or 1",
			step:     step(engine.TypeAccept, true),
			people:   []answerFor{shown(1, new("yes"))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "The answer must be 0 or 1."}},
		},
		{
			name:   "ITC required hidden person is skipped",
			step:   step(engine.TypeAccept, true),
			people: []answerFor{hidden(1, new("0")), shown(2, new("1"))},
			want:   map[int64]string{2: "1"},
		},

		// Rule 3: each shown person is checked, hidden persons are skipped.
		{
			name:   "hidden person without answer is not required to answer",
			step:   step(engine.TypeText, true),
			people: []answerFor{hidden(1, nil), shown(2, new("hello"))},
			want:   map[int64]string{2: "hello"},
		},
		{
			name:   "hidden person's answer is neither checked nor stored",
			step:   step(engine.TypeCheckbox, true),
			people: []answerFor{hidden(1, new("garbage")), shown(2, new("1"))},
			want:   map[int64]string{2: "1"},
		},
		{
			name:   "every person hidden is valid and stores nothing",
			step:   step(engine.TypeText, true),
			people: []answerFor{hidden(1, nil), hidden(2, nil)},
			want:   map[int64]string{},
		},
		{
			name:     "every shown person is checked and errors are sorted by person",
			step:     step(engine.TypeText, true),
			people:   []answerFor{shown(3, nil), shown(2, new("ok")), shown(1, new(""))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}, {PersonID: 3, Message: "An answer is required."}},
		},

		// Rule 4: BCB is always valid, but only 0 or 1.
		{
			name:   "BCB required missing answers count as 0",
			step:   step(engine.TypeCheckbox, true),
			people: []answerFor{shown(1, nil), shown(2, new(""))},
			want:   map[int64]string{1: "0", 2: "0"},
		},
		{
			name:   "BCB accepts 0 and 1",
			step:   step(engine.TypeCheckbox, true),
			people: []answerFor{shown(1, new("0")), shown(2, new("1"))},
			want:   map[int64]string{1: "0", 2: "1"},
		},
		{
			name:     "BCB rejects anything but 0 and 1",
			step:     step(engine.TypeCheckbox, false),
			people:   []answerFor{shown(1, new("true")), shown(2, new("2"))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "The answer must be 0 or 1."}, {PersonID: 2, Message: "The answer must be 0 or 1."}},
		},

		// Rule 5: ONE needs some 1 when required, and at most one.
		{
			name:   "ONE required exactly one person chosen",
			step:   step(engine.TypeOne, true),
			people: []answerFor{shown(1, new("0")), shown(2, new("1"))},
			want:   map[int64]string{1: "0", 2: "1"},
		},
		{
			name:   "ONE missing answers count as 0",
			step:   step(engine.TypeOne, true),
			people: []answerFor{shown(1, nil), shown(2, new("1")), shown(3, nil)},
			want:   map[int64]string{1: "0", 2: "1", 3: "0"},
		},
		{
			name:     "ONE required nobody chosen fails on the first shown person",
			step:     step(engine.TypeOne, true),
			people:   []answerFor{hidden(1, nil), shown(2, nil), shown(3, new("0"))},
			wantErrs: []engine.PersonError{{PersonID: 2, Message: "Choose one person."}},
		},
		{
			name:     "ONE hidden person's 1 does not count",
			step:     step(engine.TypeOne, true),
			people:   []answerFor{hidden(1, new("1")), shown(2, new("0"))},
			wantErrs: []engine.PersonError{{PersonID: 2, Message: "Choose one person."}},
		},
		{
			name:     "ONE two persons chosen fails both",
			step:     step(engine.TypeOne, true),
			people:   []answerFor{shown(1, new("1")), shown(2, new("1")), shown(3, new("0"))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "Choose only one person."}, {PersonID: 2, Message: "Choose only one person."}},
		},
		{
			name:     "ONE not required still allows at most one",
			step:     step(engine.TypeOne, false),
			people:   []answerFor{shown(1, new("1")), shown(2, new("1"))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "Choose only one person."}, {PersonID: 2, Message: "Choose only one person."}},
		},
		{
			name:   "ONE required with every person hidden is valid",
			step:   step(engine.TypeOne, true),
			people: []answerFor{hidden(1, nil), hidden(2, nil)},
			want:   map[int64]string{},
		},

		// Rule 6: any other required type needs a non-empty answer.
		{
			name:     "TXT required missing answer",
			step:     step(engine.TypeText, true),
			people:   []answerFor{shown(1, nil)},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			name:     "TXT required blank answer",
			step:     step(engine.TypeText, true),
			people:   []answerFor{shown(1, new(" \t "))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			name:     "NUM required missing answer",
			step:     step(engine.TypeNumber, true),
			people:   []answerFor{shown(1, new(""))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			name:     "DRP required missing answer",
			step:     engine.ProcessStep{QuestionType: engine.TypeDropdown, Required: true, Options: []engine.ProcessStepOption{{Value: "S"}}},
			people:   []answerFor{shown(1, nil)},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			name:     "RDO required missing answer",
			step:     engine.ProcessStep{QuestionType: engine.TypeRadio, Required: true, Options: []engine.ProcessStepOption{{Value: "a"}}},
			people:   []answerFor{shown(1, nil)},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			name:     "SEL required missing answer",
			step:     engine.ProcessStep{QuestionType: engine.TypeMulti, Required: true, Options: []engine.ProcessStepOption{{Value: "a"}}},
			people:   []answerFor{shown(1, nil)},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			name:   "TXT required answer is trimmed before it is stored",
			step:   step(engine.TypeText, true),
			people: []answerFor{shown(1, new("  Jo Smith \n"))},
			want:   map[int64]string{1: "Jo Smith"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := validateStep(&tc.step, patternOf(&tc.step), tc.people)
			if !slices.EqualFunc(errs, tc.wantErrs, samePersonError) {
				t.Fatalf("errors = %v, want %v", errs, tc.wantErrs)
			}
			if len(tc.wantErrs) > 0 {
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("answers = %v, want %v", got, tc.want)
			}
			for id, v := range tc.want {
				if g, ok := got[id]; !ok || g != v {
					t.Errorf("answer of person %d = %q (stored %v), want %q", id, g, ok, v)
				}
			}
		})
	}
}

// TestCheckValue covers one shown person's answer against the step's own rules:
// format, numbers and range, options, multi-select lists and the length limit.
func TestCheckValue(t *testing.T) {
	phone := engine.ProcessStep{QuestionType: engine.TypeText, Required: true,
		FormatPattern: new(`^[0-9]{10}$`), FormatMessage: new("Phone number must be 10 digits")}
	code := engine.ProcessStep{QuestionType: engine.TypeText, FormatPattern: new(`^[A-Z]{3}$`)}
	number := engine.ProcessStep{QuestionType: engine.TypeNumber, Required: true}
	ranged := engine.ProcessStep{QuestionType: engine.TypeNumber, Required: true, MinValue: new(1.0), MaxValue: new(10.5)}
	sizes := []engine.ProcessStepOption{{Value: "S", Label: "Small"}, {Value: "M", Label: "Medium"}, {Value: "L", Label: "Large"}}
	drp := engine.ProcessStep{QuestionType: engine.TypeDropdown, Required: true, Options: sizes}
	rdo := engine.ProcessStep{QuestionType: engine.TypeRadio, Required: true, Options: sizes}
	sel := engine.ProcessStep{QuestionType: engine.TypeMulti, Required: true, Options: sizes}
	optionalSel := engine.ProcessStep{QuestionType: engine.TypeMulti, Options: sizes}
	text := engine.ProcessStep{QuestionType: engine.TypeText, Required: true}

	tests := []struct {
		name    string
		step    engine.ProcessStep
		value   string
		wantMsg string
		want    string // the stored value when valid
	}{
		{name: "phone of 10 digits", step: phone, value: "0612345678", want: "0612345678"},
		{name: "phone of 9 digits", step: phone, value: "061234567", wantMsg: "Phone number must be 10 digits"},
		{name: "phone of 11 digits", step: phone, value: "06123456789", wantMsg: "Phone number must be 10 digits"},
		{name: "phone with a letter", step: phone, value: "06123456a8", wantMsg: "Phone number must be 10 digits"},
		{name: "phone with spaces inside", step: phone, value: "06 1234 5678", wantMsg: "Phone number must be 10 digits"},
		{name: "format without message uses the default message", step: code, value: "ab", wantMsg: "The answer does not have the expected format."},
		{name: "format without message accepts a match", step: code, value: "ABC", want: "ABC"},

		{name: "NUM integer", step: number, value: "42", want: "42"},
		{name: "NUM negative decimal", step: number, value: "-3.25", want: "-3.25"},
		{name: "NUM exponent", step: number, value: "1e2", want: "1e2"},
		{name: "NUM word", step: number, value: "forty", wantMsg: "Enter a number."},
		{name: "NUM comma decimal", step: number, value: "3,5", wantMsg: "Enter a number."},
		{name: "NUM NaN", step: number, value: "NaN", wantMsg: "Enter a number."},
		{name: "NUM infinity", step: number, value: "Inf", wantMsg: "Enter a number."},
		{name: "NUM overflow", step: number, value: "1e400", wantMsg: "Enter a number."},
		{name: "NUM at the minimum", step: ranged, value: "1", want: "1"},
		{name: "NUM at the maximum", step: ranged, value: "10.5", want: "10.5"},
		{name: "NUM below the minimum", step: ranged, value: "0.99", wantMsg: "Enter a number of at least 1."},
		{name: "NUM above the maximum", step: ranged, value: "10.51", wantMsg: "Enter a number of at most 10.5."},

		{name: "DRP listed option", step: drp, value: "M", want: "M"},
		{name: "DRP unlisted option", step: drp, value: "XXL", wantMsg: "Choose one of the listed options."},
		{name: "DRP option values are case sensitive", step: drp, value: "m", wantMsg: "Choose one of the listed options."},
		{name: "DRP label is not a value", step: drp, value: "Medium", wantMsg: "Choose one of the listed options."},
		{name: "DRP two options", step: drp, value: "S,M", wantMsg: "Choose one of the listed options."},
		{name: "RDO listed option", step: rdo, value: "L", want: "L"},
		{name: "RDO unlisted option", step: rdo, value: "XL", wantMsg: "Choose one of the listed options."},

		{name: "SEL one option", step: sel, value: "S", want: "S"},
		{name: "SEL comma separated", step: sel, value: "S,L", want: "S,L"},
		{name: "SEL comma separated with spaces and a duplicate", step: sel, value: "S , L,S,", want: "S,L"},
		{name: "SEL JSON array", step: sel, value: `["M","L"]`, want: "M,L"},
		{name: "SEL JSON array with a duplicate", step: sel, value: `["M","M"]`, want: "M"},
		{name: "SEL unknown option in a list", step: sel, value: "S,XXL", wantMsg: "Choose from the listed options."},
		{name: "SEL unknown option in a JSON array", step: sel, value: `["S","XXL"]`, wantMsg: "Choose from the listed options."},
		{name: "SEL malformed JSON array", step: sel, value: `["S",`, wantMsg: "Choose from the listed options."},
		{name: "SEL JSON array of numbers", step: sel, value: `[1,2]`, wantMsg: "Choose from the listed options."},
		{name: "SEL required empty JSON array", step: sel, value: `[]`, wantMsg: "Choose at least one option."},
		{name: "SEL required only commas", step: sel, value: ",,", wantMsg: "Choose at least one option."},
		{name: "SEL not required empty JSON array", step: optionalSel, value: `[]`, want: ""},

		{name: "answer of 1000 characters", step: text, value: strings.Repeat("a", 1000), want: strings.Repeat("a", 1000)},
		{name: "answer of 1001 characters", step: text, value: strings.Repeat("a", 1001), wantMsg: "The answer is too long (at most 1000 characters)."},
		{name: "too long answer is rejected before its format", step: phone, value: strings.Repeat("1", 1001), wantMsg: "The answer is too long (at most 1000 characters)."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, got := checkValue(&tc.step, patternOf(&tc.step), tc.value)
			msg := p.Text
			if msg != tc.wantMsg {
				t.Fatalf("message = %q, want %q", msg, tc.wantMsg)
			}
			if got != tc.want {
				t.Fatalf("stored value = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCheckValueLimitCountsCharacters: the limit's message promises 1000
// characters, so text in a non-Latin script must get as many as ASCII text.
func TestCheckValueLimitCountsCharacters(t *testing.T) {
	step := engine.ProcessStep{QuestionType: engine.TypeText, Required: true}
	tests := []struct {
		name  string
		value string
		ok    bool
	}{
		{name: "1000 two-byte characters", value: strings.Repeat("é", 1000), ok: true},
		{name: "1000 three-byte characters", value: strings.Repeat("水", 1000), ok: true},
		{name: "1001 two-byte characters", value: strings.Repeat("é", 1001), ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := checkValue(&step, nil, tc.value)
			msg := p.Text
			if ok := msg == ""; ok != tc.ok {
				t.Fatalf("%d characters (%d bytes): message %q, want valid=%v", len([]rune(tc.value)), len(tc.value), msg, tc.ok)
			}
		})
	}
}

func TestAgeAt(t *testing.T) {
	tests := []struct {
		name string
		dob  string
		on   string
		want int
	}{
		{name: "birthday on the day", dob: "2008-09-01", on: "2026-09-01", want: 18},
		{name: "day before the birthday", dob: "2008-09-02", on: "2026-09-01", want: 17},
		{name: "day after the birthday", dob: "2008-08-31", on: "2026-09-01", want: 18},
		{name: "birthday later in the year", dob: "2008-12-31", on: "2026-01-01", want: 17},
		{name: "born on the day", dob: "2026-09-01", on: "2026-09-01", want: 0},
		{name: "born 29 February, on 28 February of a common year", dob: "2008-02-29", on: "2026-02-28", want: 17},
		{name: "born 29 February, on 1 March of a common year", dob: "2008-02-29", on: "2026-03-01", want: 18},
		{name: "born 29 February, on 29 February", dob: "2008-02-29", on: "2028-02-29", want: 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := definition.AgeAt(demodata.DemoDate(tc.dob), demodata.DemoDate(tc.on)); got != tc.want {
				t.Fatalf("ageAt(%s, %s) = %d, want %d", tc.dob, tc.on, got, tc.want)
			}
		})
	}
}

func TestHiddenFor(t *testing.T) {
	start := demodata.DemoDate("2026-09-01")
	junior := &engine.ProcessStep{PersonMaxAge: new(17)}
	adult := &engine.ProcessStep{PersonMinAge: new(18)}
	student := &engine.ProcessStep{PersonMinAge: new(18), PersonMaxAge: new(25)}
	tests := []struct {
		name string
		step *engine.ProcessStep
		dob  string
		want bool
	}{
		{name: "no age rule shows everyone", step: &engine.ProcessStep{}, dob: "1950-01-01", want: false},
		{name: "junior step, 18th birthday on the period start", step: junior, dob: "2008-09-01", want: true},
		{name: "junior step, 18th birthday the day after the start", step: junior, dob: "2008-09-02", want: false},
		{name: "adult step, 18th birthday on the period start", step: adult, dob: "2008-09-01", want: false},
		{name: "adult step, 18th birthday the day after the start", step: adult, dob: "2008-09-02", want: true},
		{name: "range step, at its lower bound", step: student, dob: "2008-09-01", want: false},
		{name: "range step, at its upper bound", step: student, dob: "2000-09-02", want: false},
		{name: "range step, 26 on the period start", step: student, dob: "2000-09-01", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := definition.HiddenFor(tc.step, demodata.DemoDate(tc.dob), start); got != tc.want {
				t.Fatalf("hiddenFor(dob %s, start %s) = %v, want %v", tc.dob, start.Format(time.DateOnly), got, tc.want)
			}
		})
	}
}

// samePersonError compares the person and the English text of two person
// errors (their translation keys are checked by the handlers' tests).
func samePersonError(a, b engine.PersonError) bool {
	return a.PersonID == b.PersonID && a.Message == b.Message
}
