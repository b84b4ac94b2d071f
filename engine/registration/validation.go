package registration

import (
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
// It returns the answer to store per person (hidden persons get none) and
// the failures per person. An answer is stored exactly as sent (the GET and
// resume return "the saved answers"), so it is checked as sent: nothing is
// trimmed or rewritten. No answer (null, absent or "") is "0" for the 0/1
// types and stored as "" otherwise (the form shows it as null). The rules,
// in the spec's order:
//  1. not required: valid, but a given answer must still fit the step's format;
//  2. ITC: every (shown) person must answer 1;
//  3. otherwise each shown person is checked;
//  4. BCB is always valid (0 or 1);
//  5. ONE needs some person with 1 (and at most one);
//  6. any other type needs an answer that is not null and not empty (a
//     TXT of spaces is not empty: the spec fixes no format for TXT).
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
			value = *p.Answer
		}
		if value == "" && definition.IsCheckboxType(step.QuestionType) {
			value = "0"
		}
		if msg := checkValue(step, pattern, value); msg.Text != "" {
			fail(p.PersonID, msg)
			continue
		}
		out[p.PersonID] = value
		if step.QuestionType == engine.TypeOne && value == "1" {
			ones++
		}
		if step.QuestionType == engine.TypeAccept && step.Required && value != "1" {
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

// checkValue checks one non-hidden person's answer, as sent, and returns
// the problem with it (none when valid). An answer that passes is stored
// as it is: what the portal accepts is exactly what it returns.
func checkValue(step *engine.ProcessStep, pattern *regexp.Regexp, value string) engine.Problem {
	if value == "" {
		if step.Required {
			return engine.Problem{Key: "required", Text: "An answer is required."}
		}
		return engine.Problem{}
	}
	if utf8.RuneCountInString(value) > 1000 {
		return engine.Problem{Key: "too_long", Text: "The answer is too long (at most 1000 characters)."}
	}
	switch step.QuestionType {
	case engine.TypeCheckbox, engine.TypeAccept, engine.TypeOne:
		if value != "0" && value != "1" {
			return engine.Problem{Key: "zero_or_one", Text: "The answer must be 0 or 1."}
		}
	case engine.TypeNumber:
		n, p := parseNumber(value)
		if p.Text != "" {
			return p
		}
		if step.MinValue != nil && n < *step.MinValue {
			return engine.Problem{Key: "min", Text: "Enter a number of at least " + formatNumber(*step.MinValue) + ".", Param: formatNumber(*step.MinValue)}
		}
		if step.MaxValue != nil && n > *step.MaxValue {
			return engine.Problem{Key: "max", Text: "Enter a number of at most " + formatNumber(*step.MaxValue) + ".", Param: formatNumber(*step.MaxValue)}
		}
	case engine.TypeDropdown, engine.TypeRadio:
		if !hasOption(step, value) {
			return engine.Problem{Key: "option", Text: "Choose one of the listed options."}
		}
	case engine.TypeMulti:
		if p := checkMulti(step, value); p.Text != "" {
			return p
		}
	}
	if pattern != nil && !pattern.MatchString(value) {
		if step.FormatMessage != nil && *step.FormatMessage != "" {
			return engine.Problem{Text: *step.FormatMessage}
		}
		return engine.Problem{Key: "format", Text: "The answer does not have the expected format."}
	}
	return engine.Problem{}
}

// jsonNumber is the number grammar of JSON (RFC 8259, section 6): an
// optional minus, an integer part without leading zeros, an optional
// fraction and an optional exponent. No plus sign, no bare "." at either
// end, no digit separators, no hexadecimal, no NaN or Infinity, no spaces.
var jsonNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)

// parseNumber reads a NUM answer: a JSON number (jsonNumber) that fits a
// 64-bit float, in every language. A decimal comma is refused, with its
// own message, for members writing German or French too: "1,500" is one
// and a half in German and fifteen hundred in English, and the stored
// answer must mean the same to every reader (prices, conditions, exports).
func parseNumber(value string) (float64, engine.Problem) {
	if !jsonNumber.MatchString(value) {
		if strings.Count(value, ",") == 1 && jsonNumber.MatchString(strings.Replace(value, ",", ".", 1)) {
			return 0, engine.Problem{Key: "number_comma", Text: "Enter the number with a point for decimals (1.5, not 1,5) and without thousands separators."}
		}
		return 0, engine.Problem{Key: "number", Text: "Enter a number."}
	}
	n, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsInf(n, 0) {
		return 0, engine.Problem{Key: "number", Text: "Enter a number."}
	}
	return n, engine.Problem{}
}

// checkMulti checks a SEL answer in its one form: the chosen option
// values separated by commas, each once, with nothing around them ("a,b",
// in any order). It is the form every reader of a stored answer splits
// (conditions, the member's pages, the review), so an answer is stored
// and returned as sent; option values may not contain commas (the
// definition import sees to it).
func checkMulti(step *engine.ProcessStep, value string) engine.Problem {
	values := strings.Split(value, ",")
	for i, v := range values {
		switch {
		case hasOption(step, v):
			if slices.Contains(values[:i], v) {
				return engine.Problem{Key: "options_twice", Text: "Choose each option only once."}
			}
		case v == "" || strings.HasPrefix(value, "[") || hasOption(step, strings.TrimSpace(v)):
			return engine.Problem{Key: "options_form", Text: "Send the chosen options separated by commas, without spaces (for example a,b)."}
		default:
			return engine.Problem{Key: "options", Text: "Choose from the listed options."}
		}
	}
	return engine.Problem{}
}

func hasOption(step *engine.ProcessStep, value string) bool {
	return slices.ContainsFunc(step.Options, func(o engine.ProcessStepOption) bool { return o.Value == value })
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
