package registration

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"portal/engine"
	"portal/engine/definition"
)

// answerFor is what validation works on: one person's raw answer and whether the step hides them.
type answerFor struct {
	PersonID int64
	Hide     bool
	Answer   *string // nil when the client sent none
}

// validateStep applies the spec's answer rules and the step's own rules.
// It returns the normalised answer per person (hidden persons get none) and
// the failures per person. The rules, in the spec's order:
//  1. not required: valid, but a given answer must still fit the step's format;
//  2. ITC: every (shown) person must answer 1;
//  3. otherwise each shown person is checked;
//  4. BCB is always valid (0 or 1);
//  5. ONE needs some person with 1 (and at most one);
//  6. any other type needs a non-empty answer.
func validateStep(step *engine.ProcessStep, pattern *regexp.Regexp, people []answerFor) (map[int64]string, []engine.PersonError) {
	out := make(map[int64]string, len(people))
	var errs []engine.PersonError
	fail := func(id int64, p engine.Problem) { errs = append(errs, p.ForPerson(id)) }
	ones := 0
	shown := 0
	for _, p := range people {
		if p.Hide {
			continue
		}
		shown++
		value := ""
		if p.Answer != nil {
			if !PlainText(*p.Answer) {
				fail(p.PersonID, engine.Problem{Key: "invalid_text", Text: "The answer contains characters that are not allowed (control characters or invalid text)."})
				continue
			}
			value = strings.TrimSpace(*p.Answer)
		}
		if value == "" && definition.IsCheckboxType(step.QuestionType) {
			value = "0"
		}
		msg, normalised := checkValue(step, pattern, value)
		if msg.Text != "" {
			fail(p.PersonID, msg)
			continue
		}
		out[p.PersonID] = normalised
		if step.QuestionType == engine.TypeOne && normalised == "1" {
			ones++
		}
		if step.QuestionType == engine.TypeAccept && step.Required && normalised != "1" {
			fail(p.PersonID, engine.Problem{Key: "accept", Text: "Please accept the terms for this person."})
		}
	}
	if step.QuestionType == engine.TypeOne {
		switch {
		case ones > 1:
			for _, p := range people {
				if !p.Hide && out[p.PersonID] == "1" {
					fail(p.PersonID, engine.Problem{Key: "only_one", Text: "Choose only one person."})
				}
			}
		case ones == 0 && step.Required && shown > 0:
			for _, p := range people {
				if !p.Hide {
					fail(p.PersonID, engine.Problem{Key: "one_person", Text: "Choose one person."})
					break
				}
			}
		}
	}
	slices.SortStableFunc(errs, func(a, b engine.PersonError) int { return int(a.PersonID - b.PersonID) })
	return out, errs
}

// PlainText reports whether s is valid UTF-8 without control characters
// other than tab, CR and LF. Everything the portal stores or looks up must
// be: PostgreSQL refuses NUL and invalid UTF-8 in text (a 500 rather than
// an answer), SQLite stores them and breaks whatever reads them later, and no
// member means to send the other control characters. The HTTP layer uses
// the same rule for paths, queries and form fields.
func PlainText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\r' && r != '\n' {
			return false
		}
	}
	return true
}

// checkValue checks one non-hidden person's answer and returns an error
// message (none when valid) and the value to store.
func checkValue(step *engine.ProcessStep, pattern *regexp.Regexp, value string) (engine.Problem, string) {
	if value == "" {
		if step.Required {
			return engine.Problem{Key: "required", Text: "An answer is required."}, ""
		}
		return engine.Problem{}, ""
	}
	if utf8.RuneCountInString(value) > 1000 {
		return engine.Problem{Key: "too_long", Text: "The answer is too long (at most 1000 characters)."}, ""
	}
	switch step.QuestionType {
	case engine.TypeCheckbox, engine.TypeAccept, engine.TypeOne:
		if value != "0" && value != "1" {
			return engine.Problem{Key: "zero_or_one", Text: "The answer must be 0 or 1."}, ""
		}
	case engine.TypeNumber:
		n, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return engine.Problem{Key: "number", Text: "Enter a number."}, ""
		}
		if step.MinValue != nil && n < *step.MinValue {
			return engine.Problem{Key: "min", Text: "Enter a number of at least " + formatNumber(*step.MinValue) + ".", Param: formatNumber(*step.MinValue)}, ""
		}
		if step.MaxValue != nil && n > *step.MaxValue {
			return engine.Problem{Key: "max", Text: "Enter a number of at most " + formatNumber(*step.MaxValue) + ".", Param: formatNumber(*step.MaxValue)}, ""
		}
	case engine.TypeDropdown, engine.TypeRadio:
		if !hasOption(step, value) {
			return engine.Problem{Key: "option", Text: "Choose one of the listed options."}, ""
		}
	case engine.TypeMulti:
		values, ok := splitMulti(value)
		if !ok {
			return engine.Problem{Key: "options", Text: "Choose from the listed options."}, ""
		}
		for _, v := range values {
			if !hasOption(step, v) {
				return engine.Problem{Key: "options", Text: "Choose from the listed options."}, ""
			}
		}
		if len(values) == 0 && step.Required {
			return engine.Problem{Key: "at_least_one", Text: "Choose at least one option."}, ""
		}
		value = strings.Join(values, ",")
	}
	if pattern != nil && !pattern.MatchString(value) {
		msg := engine.Problem{Key: "format", Text: "The answer does not have the expected format."}
		if step.FormatMessage != nil && *step.FormatMessage != "" {
			msg = engine.Problem{Text: *step.FormatMessage}
		}
		return msg, ""
	}
	return engine.Problem{}, value
}

// splitMulti reads a SEL answer: a JSON array of option values, or the values
// separated by commas (option values may not contain commas). Duplicates are dropped.
func splitMulti(value string) ([]string, bool) {
	var raw []string
	if strings.HasPrefix(value, "[") {
		if err := json.Unmarshal([]byte(value), &raw); err != nil {
			return nil, false
		}
	} else {
		raw = strings.Split(value, ",")
	}
	var out []string
	for _, v := range raw {
		v = strings.TrimSpace(v)
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, true
}

func hasOption(step *engine.ProcessStep, value string) bool {
	return slices.ContainsFunc(step.Options, func(o engine.ProcessStepOption) bool { return o.Value == value })
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
