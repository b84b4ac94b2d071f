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
			people: []answerFor{shown(1, nil), shown(2, new(""))},
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
			people: []answerFor{shown(1, new("1")), shown(2, new("1"))},
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
			name:     "TXT required empty answer",
			step:     step(engine.TypeText, true),
			people:   []answerFor{shown(1, new(""))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "An answer is required."}},
		},
		{
			// Rule 6 asks for "not null and not empty", TXT for a
			// "non-empty" answer: spaces are an answer, stored as sent.
			name:   "TXT required answer of spaces only is an answer",
			step:   step(engine.TypeText, true),
			people: []answerFor{shown(1, new(" \t "))},
			want:   map[int64]string{1: " \t "},
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
			name:   "TXT answer is stored as sent, spaces and all",
			step:   step(engine.TypeText, true),
			people: []answerFor{shown(1, new("  Jo Smith \n")), shown(2, new("  padded  "))},
			want:   map[int64]string{1: "  Jo Smith \n", 2: "  padded  "},
		},
		{
			name:     "0/1 answers are exact: no spaces around them",
			step:     step(engine.TypeAccept, true),
			people:   []answerFor{shown(1, new(" 1 ")), shown(2, new("1"))},
			wantErrs: []engine.PersonError{{PersonID: 1, Message: "The answer must be 0 or 1."}},
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
// A valid answer is stored exactly as sent, so only the message is checked.
func TestCheckValue(t *testing.T) {
	phone := engine.ProcessStep{QuestionType: engine.TypeText, Required: true,
		FormatPattern: new(`^[0-9]{10}$`), FormatMessage: new("Phone number must be 10 digits")}
	code := engine.ProcessStep{QuestionType: engine.TypeText, FormatPattern: new(`^[A-Z]{3}$`)}
	ranged := engine.ProcessStep{QuestionType: engine.TypeNumber, Required: true, MinValue: new(1.0), MaxValue: new(10.5)}
	sizes := []engine.ProcessStepOption{{Value: "S", Label: "Small"}, {Value: "M", Label: "Medium"}, {Value: "L", Label: "Large"}}
	drp := engine.ProcessStep{QuestionType: engine.TypeDropdown, Required: true, Options: sizes}
	rdo := engine.ProcessStep{QuestionType: engine.TypeRadio, Required: true, Options: sizes}
	text := engine.ProcessStep{QuestionType: engine.TypeText, Required: true}

	tests := []struct {
		name    string
		step    engine.ProcessStep
		value   string
		wantMsg string // "" when valid
	}{
		{name: "phone of 10 digits", step: phone, value: "0612345678"},
		{name: "phone of 9 digits", step: phone, value: "061234567", wantMsg: "Phone number must be 10 digits"},
		{name: "phone of 11 digits", step: phone, value: "06123456789", wantMsg: "Phone number must be 10 digits"},
		{name: "phone with a letter", step: phone, value: "06123456a8", wantMsg: "Phone number must be 10 digits"},
		{name: "phone with spaces inside", step: phone, value: "06 1234 5678", wantMsg: "Phone number must be 10 digits"},
		{name: "phone with spaces around: the format holds for the answer as sent", step: phone, value: " 0612345678 ", wantMsg: "Phone number must be 10 digits"},
		{name: "format without message uses the default message", step: code, value: "ab", wantMsg: "The answer does not have the expected format."},
		{name: "format without message accepts a match", step: code, value: "ABC"},

		{name: "NUM at the minimum", step: ranged, value: "1"},
		{name: "NUM at the maximum", step: ranged, value: "10.5"},
		{name: "NUM at the maximum with an exponent", step: ranged, value: "1.05e1"},
		{name: "NUM below the minimum", step: ranged, value: "0.99", wantMsg: "Enter a number of at least 1."},
		{name: "NUM above the maximum", step: ranged, value: "10.51", wantMsg: "Enter a number of at most 10.5."},

		{name: "DRP listed option", step: drp, value: "M"},
		{name: "DRP unlisted option", step: drp, value: "XXL", wantMsg: "Choose one of the listed options."},
		{name: "DRP option values are case sensitive", step: drp, value: "m", wantMsg: "Choose one of the listed options."},
		{name: "DRP option values are exact: no spaces around them", step: drp, value: " M", wantMsg: "Choose one of the listed options."},
		{name: "DRP label is not a value", step: drp, value: "Medium", wantMsg: "Choose one of the listed options."},
		{name: "DRP two options", step: drp, value: "S,M", wantMsg: "Choose one of the listed options."},
		{name: "RDO listed option", step: rdo, value: "L"},
		{name: "RDO unlisted option", step: rdo, value: "XL", wantMsg: "Choose one of the listed options."},

		{name: "answer of 1000 characters", step: text, value: strings.Repeat("a", 1000)},
		{name: "answer of 1001 characters", step: text, value: strings.Repeat("a", 1001), wantMsg: "The answer is too long (at most 1000 characters)."},
		{name: "too long answer is rejected before its format", step: phone, value: strings.Repeat("1", 1001), wantMsg: "The answer is too long (at most 1000 characters)."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if msg := checkValue(&tc.step, patternOf(&tc.step), tc.value).Text; msg != tc.wantMsg {
				t.Fatalf("message = %q, want %q", msg, tc.wantMsg)
			}
		})
	}
}

// TestNumberAnswers is the list docs/FORM-API.md gives for NUM: a JSON
// number (RFC 8259's grammar, nothing around it) that fits a 64-bit float,
// in every language; a decimal comma is refused with its own message. A
// number that passes is stored as sent ("1e3" stays "1e3").
func TestNumberAnswers(t *testing.T) {
	const notANumber, comma = "Enter a number.", "Enter the number with a point for decimals (1.5, not 1,5) and without thousands separators."
	tests := []struct {
		value   string
		wantMsg string // "" when accepted
	}{
		{"0", ""}, {"42", ""}, {"-3.25", ""}, {"-0", ""}, {"0.5", ""}, {"1e3", ""}, {"1E3", ""}, {"1e+3", ""}, {"2.5E-3", ""},
		{"1e-400", ""}, // underflows to 0: still a number
		{"1_000", notANumber}, {"+5", notANumber}, {".5", notANumber}, {"5.", notANumber}, {"007", notANumber}, {"-", notANumber},
		{" 5", notANumber}, {"5 ", notANumber}, {"\t5", notANumber}, {"NaN", notANumber}, {"Infinity", notANumber}, {"-Infinity", notANumber},
		{"Inf", notANumber}, {"0x10", notANumber}, {"0b1", notANumber}, {"1e", notANumber}, {"e3", notANumber}, {"forty", notANumber},
		{"1e400", notANumber}, // beyond a 64-bit float
		{"1,5", comma}, {"-0,25", comma}, {"1,500", comma}, {"1,5,0", notANumber}, {"1.500,25", notANumber},
	}
	step := engine.ProcessStep{QuestionType: engine.TypeNumber, Required: true}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, errs := validateStep(&step, nil, []answerFor{shown(1, &tc.value)})
			msg := ""
			if len(errs) > 0 {
				msg = errs[0].Message
			}
			if msg != tc.wantMsg {
				t.Fatalf("message %q, want %q", msg, tc.wantMsg)
			}
			if tc.wantMsg == "" && got[1] != tc.value {
				t.Fatalf("stored %q, want it as sent, %q", got[1], tc.value)
			}
		})
	}
}

// TestMultiSelectAnswers: a SEL answer has one form, the chosen option
// values separated by commas ("S,L", in any order, each once, nothing
// around them), the form every reader of a stored answer splits; it is
// stored and returned as sent. Every other form is refused, not rewritten.
func TestMultiSelectAnswers(t *testing.T) {
	const form, unknown, twice = "Send the chosen options separated by commas, without spaces (for example a,b).", "Choose from the listed options.", "Choose each option only once."
	sizes := []engine.ProcessStepOption{{Value: "S"}, {Value: "M"}, {Value: "L"}, {Value: "2x"}, {Value: "4+"}}
	required := engine.ProcessStep{QuestionType: engine.TypeMulti, Required: true, Options: sizes}
	optional := engine.ProcessStep{QuestionType: engine.TypeMulti, Options: sizes}
	tests := []struct {
		name    string
		step    engine.ProcessStep
		value   *string // nil: no answer
		wantMsg string
	}{
		{"one option", required, new("S"), ""},
		{"two options", required, new("2x,4+"), ""},
		{"two options in another order", required, new("L,S"), ""},
		{"every option", required, new("S,M,L,2x,4+"), ""},
		{"optional without answer", optional, nil, ""},
		{"optional empty", optional, new(""), ""},
		{"required without answer", required, nil, "An answer is required."},
		{"required empty", required, new(""), "An answer is required."},
		{"a JSON array", required, new(`["2x","4+"]`), form},
		{"an empty JSON array", optional, new(`[]`), form},
		{"a space after the comma", required, new("S, L"), form},
		{"a space before an option", required, new(" S"), form},
		{"a trailing comma", required, new("S,"), form},
		{"only commas", required, new(",,"), form},
		{"a duplicate", required, new("S,S"), twice},
		{"a duplicate among others", required, new("S,L,S"), twice},
		{"an unknown option", required, new("S,XXL"), unknown},
		{"option values are case sensitive", required, new("s"), unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := validateStep(&tc.step, nil, []answerFor{shown(1, tc.value)})
			msg := ""
			if len(errs) > 0 {
				msg = errs[0].Message
			}
			if msg != tc.wantMsg {
				t.Fatalf("message %q, want %q", msg, tc.wantMsg)
			}
			want := ""
			if tc.value != nil {
				want = *tc.value
			}
			if tc.wantMsg == "" && got[1] != want {
				t.Fatalf("stored %q, want it as sent, %q", got[1], want)
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
			msg := checkValue(&step, nil, tc.value).Text
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
