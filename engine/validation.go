package engine

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
func validateStep(step *ProcessStep, pattern *regexp.Regexp, people []answerFor) (map[int64]string, []PersonError) {
	out := make(map[int64]string, len(people))
	var errs []PersonError
	fail := func(id int64, p problem) { errs = append(errs, p.forPerson(id)) }
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
				fail(p.PersonID, problem{key: "invalid_text", text: "The answer contains characters that are not allowed (control characters or invalid text)."})
				continue
			}
			value = strings.TrimSpace(*p.Answer)
		}
		if value == "" && isCheckboxType(step.QuestionType) {
			value = "0"
		}
		msg, normalised := checkValue(step, pattern, value)
		if msg.text != "" {
			fail(p.PersonID, msg)
			continue
		}
		out[p.PersonID] = normalised
		if step.QuestionType == TypeOne && normalised == "1" {
			ones++
		}
		if step.QuestionType == TypeAccept && step.Required && normalised != "1" {
			fail(p.PersonID, problem{key: "accept", text: "Please accept the terms for this person."})
		}
	}
	if step.QuestionType == TypeOne {
		switch {
		case ones > 1:
			for _, p := range people {
				if !p.Hide && out[p.PersonID] == "1" {
					fail(p.PersonID, problem{key: "only_one", text: "Choose only one person."})
				}
			}
		case ones == 0 && step.Required && shown > 0:
			for _, p := range people {
				if !p.Hide {
					fail(p.PersonID, problem{key: "one_person", text: "Choose one person."})
					break
				}
			}
		}
	}
	slices.SortStableFunc(errs, func(a, b PersonError) int { return int(a.PersonID - b.PersonID) })
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
func checkValue(step *ProcessStep, pattern *regexp.Regexp, value string) (problem, string) {
	if value == "" {
		if step.Required {
			return problem{key: "required", text: "An answer is required."}, ""
		}
		return problem{}, ""
	}
	if utf8.RuneCountInString(value) > 1000 {
		return problem{key: "too_long", text: "The answer is too long (at most 1000 characters)."}, ""
	}
	switch step.QuestionType {
	case TypeCheckbox, TypeAccept, TypeOne:
		if value != "0" && value != "1" {
			return problem{key: "zero_or_one", text: "The answer must be 0 or 1."}, ""
		}
	case TypeNumber:
		n, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return problem{key: "number", text: "Enter a number."}, ""
		}
		if step.MinValue != nil && n < *step.MinValue {
			return problem{key: "min", text: "Enter a number of at least " + formatNumber(*step.MinValue) + ".", param: formatNumber(*step.MinValue)}, ""
		}
		if step.MaxValue != nil && n > *step.MaxValue {
			return problem{key: "max", text: "Enter a number of at most " + formatNumber(*step.MaxValue) + ".", param: formatNumber(*step.MaxValue)}, ""
		}
	case TypeDropdown, TypeRadio:
		if !hasOption(step, value) {
			return problem{key: "option", text: "Choose one of the listed options."}, ""
		}
	case TypeMulti:
		values, ok := splitMulti(value)
		if !ok {
			return problem{key: "options", text: "Choose from the listed options."}, ""
		}
		for _, v := range values {
			if !hasOption(step, v) {
				return problem{key: "options", text: "Choose from the listed options."}, ""
			}
		}
		if len(values) == 0 && step.Required {
			return problem{key: "at_least_one", text: "Choose at least one option."}, ""
		}
		value = strings.Join(values, ",")
	}
	if pattern != nil && !pattern.MatchString(value) {
		msg := problem{key: "format", text: "The answer does not have the expected format."}
		if step.FormatMessage != nil && *step.FormatMessage != "" {
			msg = problem{text: *step.FormatMessage}
		}
		return msg, ""
	}
	return problem{}, value
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

func hasOption(step *ProcessStep, value string) bool {
	return slices.ContainsFunc(step.Options, func(o ProcessStepOption) bool { return o.Value == value })
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
