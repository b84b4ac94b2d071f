package definition

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"portal/engine"
)

// compiled builds a definition from its import text the way ImportDefinition
// stores it and the cache loads it (rows via conditionRow, compiled by
// compileConditions), with step ids 101, 102, ... and no database.
func compiled(t testing.TB, text string) *Definition {
	t.Helper()
	spec, err := ParseDefinition([]byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return compiledSpec(t, spec)
}

func compiledSpec(t testing.TB, spec *Spec) *Definition {
	t.Helper()
	def := &engine.ProcessDefinition{ID: 1, Key: spec.Key}
	ids := map[string]int64{}
	for i, s := range spec.Steps {
		ids[s.Name] = int64(101 + i)
	}
	for _, s := range spec.Steps {
		step := stepFromSpec(def.ID, s, "en")
		step.ID = ids[s.Name]
		for j, o := range s.Options {
			step.Options = append(step.Options, engine.ProcessStepOption{StepID: step.ID, OrderIndex: j + 1, Kind: engine.OptionChoice, Value: o.Value, Label: o.Label.In("en", "")})
		}
		for j, c := range s.Conditions {
			step.Options = append(step.Options, conditionRow(step.ID, len(s.Options)+j+1, j+1, c, ids))
		}
		def.Steps = append(def.Steps, *step)
	}
	conds, err := compileConditions(def)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return &Definition{ProcessDefinition: def, conds: conds}
}

// routeDefinition is the table's definition; %s is the conditions (and
// rules) of step d, indented for its place.
const routeDefinition = `
key: route
name: Route
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: a, questionText: Transferring, questionType: BCB}
  - name: b
    questionText: Kind
    questionType: DRP
    required: true
    options: [{value: x}, {value: y}, {value: z}]
  - {name: c, questionText: Notes, questionType: TXT}
  - name: n
    questionText: Number
    questionType: NUM
  - name: s
    questionText: Several
    questionType: SEL
    options: [{value: p}, {value: q}, {value: r}]
  - name: d
    questionText: The conditional step
    questionType: TXT
%s
  - {name: e, questionText: After, questionType: TXT}
  - {name: f, questionText: Terms, questionType: ITC, required: true}
`

// TestRouteConditionKinds covers each kind of condition (skip / jump, per
// person / per registration, equals / one of / not given, the age rule)
// on the path and on whom each step applies to.
func TestRouteConditionKinds(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	adult1 := engine.Person{ID: 1, FirstName: "Ada", DateOfBirth: time.Date(1990, 5, 1, 0, 0, 0, 0, time.UTC)}
	adult2 := engine.Person{ID: 2, FirstName: "Bo", DateOfBirth: time.Date(1985, 5, 1, 0, 0, 0, 0, time.UTC)}
	junior := engine.Person{ID: 3, FirstName: "Cy", DateOfBirth: time.Date(2015, 5, 1, 0, 0, 0, 0, time.UTC)}
	all := []string{"a", "b", "c", "n", "s", "d", "e", "f"}
	without := func(names ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(names, s) })
	}
	tests := []struct {
		name    string
		rules   string // YAML lines under step d
		persons []engine.Person
		answers map[string]map[int64]string // by step name and person
		path    []string
		hidden  map[string][]int64 // steps on the path that do not apply to some persons
	}{
		{name: "no conditions", persons: []engine.Person{adult1, adult2},
			path: all},
		{name: "skip per person, equals, holds for one",
			rules:   "    conditions: [{action: skip, step: a, equals: \"1\"}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"a": {1: "1", 2: "0"}},
			path: all, hidden: map[string][]int64{"d": {1}}},
		{name: "skip per person, equals, holds for all: the step leaves the path",
			rules:   "    conditions: [{action: skip, step: a, equals: \"1\"}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"a": {1: "1", 2: "1"}},
			path: without("d")},
		{name: "skip per registration, holds for one person",
			rules:   "    conditions: [{action: skip, scope: registration, step: a, equals: \"1\"}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"a": {1: "0", 2: "1"}},
			path: without("d")},
		{name: "skip per registration, holds for nobody",
			rules:   "    conditions: [{action: skip, scope: registration, step: a, equals: \"1\"}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"a": {1: "0", 2: "0"}},
			path: all},
		{name: "one of",
			rules:   "    conditions: [{action: skip, step: b, oneOf: [x, y]}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"b": {1: "z", 2: "x"}},
			path: all, hidden: map[string][]int64{"d": {2}}},
		{name: "not given: no answer and an empty answer",
			rules:   "    conditions: [{action: skip, step: c, notGiven: true}]",
			persons: []engine.Person{adult1, adult2, junior}, answers: map[string]map[int64]string{"c": {2: "hello", 3: ""}},
			path: all, hidden: map[string][]int64{"d": {1, 3}}},
		{name: "number equals compares numerically",
			rules:   "    conditions: [{action: skip, step: n, equals: \"5\"}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"n": {1: "5.0", 2: "50"}},
			path: all, hidden: map[string][]int64{"d": {1}}},
		{name: "several choices: equals means contains",
			rules:   "    conditions: [{action: skip, step: s, equals: q}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"s": {1: "p,q", 2: "p,r"}},
			path: all, hidden: map[string][]int64{"d": {1}}},
		{name: "the age rule is one more condition",
			rules:   "    persons: {maxAge: 17}",
			persons: []engine.Person{adult1, junior},
			path:    all, hidden: map[string][]int64{"d": {1}}},
		{name: "the age rule applying to nobody leaves the step out",
			rules:   "    persons: {maxAge: 17}",
			persons: []engine.Person{adult1, adult2},
			path:    without("d")},
		{name: "age rule and answer condition together",
			rules:   "    persons: {maxAge: 17}\n    conditions: [{action: skip, step: a, equals: \"1\"}]",
			persons: []engine.Person{adult1, junior}, answers: map[string]map[int64]string{"a": {3: "1"}},
			path: without("d")},
		{name: "jump per person passes the steps in between for that person",
			rules:   "    conditions: [{action: jump, step: d, equals: done, to: f}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"d": {1: "done", 2: "more"}},
			path: all, hidden: map[string][]int64{"e": {1}}},
		{name: "jump per person for everyone leaves the steps out",
			rules:   "    conditions: [{action: jump, step: d, equals: done, to: f}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"d": {1: "done", 2: "done"}},
			path: without("e")},
		{name: "jump per registration on an earlier answer",
			rules:   "    conditions: [{action: jump, scope: registration, step: b, oneOf: [z], to: f}]",
			persons: []engine.Person{adult1, adult2}, answers: map[string]map[int64]string{"b": {1: "x", 2: "z"}},
			path: without("e")},
		{name: "a jump from a step that is left out is not taken",
			rules:   "    conditions: [{action: skip, step: a, equals: \"1\"}, {action: jump, step: b, equals: x, to: f}]",
			persons: []engine.Person{adult1}, answers: map[string]map[int64]string{"a": {1: "1"}, "b": {1: "x"}},
			path: without("d")},
		{name: "equals on a text answer",
			rules:   "    conditions: [{action: skip, step: c, equals: secret}]",
			persons: []engine.Person{adult1}, answers: map[string]map[int64]string{"c": {1: "secret"}},
			path: without("d")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := compiled(t, fmt.Sprintf(routeDefinition, tc.rules))
			answers := map[int64]map[int64]string{}
			for name, byPerson := range tc.answers {
				answers[stepIDByName(t, def, name)] = byPerson
			}
			r := def.RouteFor(tc.persons, start, answers)
			var got []string
			for _, i := range r.Steps {
				got = append(got, def.Steps[i].Name)
			}
			if !slices.Equal(got, tc.path) {
				t.Fatalf("path = %v, want %v", got, tc.path)
			}
			for _, i := range r.Steps {
				name := def.Steps[i].Name
				var hid []int64
				for _, p := range tc.persons {
					if r.Hides(i+1, p.ID) {
						hid = append(hid, p.ID)
					}
				}
				if !slices.Equal(hid, tc.hidden[name]) {
					t.Errorf("step %s does not apply to %v, want %v", name, hid, tc.hidden[name])
				}
			}
		})
	}
}

// TestRouteIgnoresAnswersOffThePath: an answer kept from before an earlier
// answer changed must not steer the path.
func TestRouteIgnoresAnswersOffThePath(t *testing.T) {
	def := compiled(t, `
key: off
name: Off
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: moving, questionText: Moving, questionType: BCB}
  - name: club
    questionText: Which club?
    questionType: TXT
    required: true
    conditions: [{action: skip, step: moving, equals: "0"}]
  - name: sure
    questionText: Sure?
    questionType: TXT
    conditions: [{action: skip, step: club, notGiven: true}]
  - {name: terms, questionText: Terms, questionType: ITC, required: true}
`)
	p := []engine.Person{{ID: 1, DateOfBirth: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)}}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	answers := map[int64]map[int64]string{
		stepIDByName(t, def, "moving"): {1: "0"},
		stepIDByName(t, def, "club"):   {1: "Old Club"}, // kept from when moving was 1
	}
	r := def.RouteFor(p, start, answers)
	if got := len(r.Steps); got != 2 {
		t.Fatalf("path has %d steps, want 2 (moving, terms)", got)
	}
	kept := r.Answered(def, answers)
	if _, ok := kept[stepIDByName(t, def, "club")]; ok {
		t.Fatalf("answered() keeps the off-path answer of club: %v", kept)
	}
	if r.Next(1) != 4 || r.Previous(4) != 1 || r.Position(4) != 2 {
		t.Fatalf("next(1)=%d previous(4)=%d position(4)=%d, want 4, 1, 2", r.Next(1), r.Previous(4), r.Position(4))
	}
}

// TestRouteKeepsTheLastStep: the last step is on every path, even when its
// age rule applies to nobody, so that every registration confirms there.
func TestRouteKeepsTheLastStep(t *testing.T) {
	def := compiled(t, `
key: last
name: Last
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: a, questionText: A, questionType: TXT}
  - {name: z, questionText: Z, questionType: ITC, required: true, persons: {maxAge: 10}}
`)
	r := def.RouteFor([]engine.Person{{ID: 1, DateOfBirth: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)}}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	if !r.Includes(2) || !r.Hides(2, 1) {
		t.Fatalf("last step: on path %v, hides the adult %v; want true, true", r.Includes(2), r.Hides(2, 1))
	}
}

func stepIDByName(t testing.TB, def *Definition, name string) int64 {
	t.Helper()
	for _, s := range def.Steps {
		if s.Name == name {
			return s.ID
		}
	}
	t.Fatalf("no step %q", name)
	return 0
}

// TestConditionValidation: every rule of import validation, with the
// message naming the step and the condition.
func TestConditionValidation(t *testing.T) {
	tests := []struct {
		name  string
		rules string // YAML lines under step d
		want  string // part of the message; empty: valid
	}{
		{name: "valid skip", rules: "    conditions: [{action: skip, step: a, equals: \"1\"}]"},
		{name: "valid jump on its own answer", rules: "    conditions: [{action: jump, step: d, notGiven: true, to: f}]"},
		{name: "unknown action", rules: "    conditions: [{action: hide, step: a, equals: \"1\"}]",
			want: `step "d" condition 1 (skip this step for a person when their answer to a equals "1"): action must be "skip" or "jump"`},
		{name: "unknown scope", rules: "    conditions: [{action: skip, scope: family, step: a, equals: \"1\"}]",
			want: `step "d" condition 1`},
		{name: "unknown step", rules: "    conditions: [{action: skip, step: nope, equals: \"1\"}]",
			want: `step "nope" does not exist`},
		{name: "skip looking at itself", rules: "    conditions: [{action: skip, step: d, equals: x}]",
			want: `a skip may only look at earlier steps, and "d" does not come before "d"`},
		{name: "looking forwards", rules: "    conditions: [{action: skip, step: e, equals: x}]",
			want: `does not come before "d"`},
		{name: "jump looking forwards", rules: "    conditions: [{action: jump, step: e, equals: x, to: f}]",
			want: `a jump may only look at this step or earlier ones, and "e" comes after "d"`},
		{name: "no test", rules: "    conditions: [{action: skip, step: a}]",
			want: "give exactly one of equals, oneOf and notGiven"},
		{name: "two tests", rules: "    conditions: [{action: skip, step: a, equals: \"1\", notGiven: true}]",
			want: "give exactly one of equals, oneOf and notGiven"},
		{name: "not an option", rules: "    conditions: [{action: skip, step: b, oneOf: [x, w]}]",
			want: `"w" is not an option of "b"`},
		{name: "checkbox compared with yes", rules: "    conditions: [{action: skip, step: a, equals: \"yes\"}]",
			want: `"a" is a BCB step: compare with "1" (yes) or "0" (no), not "yes"`},
		{name: "number compared with text", rules: "    conditions: [{action: skip, step: n, equals: five}]",
			want: `"n" is a NUM step and "five" is not a number`},
		{name: "jump without target", rules: "    conditions: [{action: jump, step: a, equals: \"1\"}]",
			want: `a jump needs "to"`},
		{name: "jump backwards", rules: "    conditions: [{action: jump, step: a, equals: \"1\", to: b}]",
			want: `a jump may only go forwards, and "b" does not come after "d"`},
		{name: "jump to the next step", rules: "    conditions: [{action: jump, step: a, equals: \"1\", to: e}]",
			want: `leaves out no step`},
		{name: "jump to an unknown step", rules: "    conditions: [{action: jump, step: a, equals: \"1\", to: zz}]",
			want: `the jump's target "zz" does not exist`},
		{name: "skip with a target", rules: "    conditions: [{action: skip, step: a, equals: \"1\", to: f}]",
			want: `a skip takes no "to"`},
		{name: "always true: every option of a required step", rules: "    conditions: [{action: skip, step: b, oneOf: [x, y, z]}]",
			want: `it holds for every possible answer of "b", so step "d" could never be reached`},
		{name: "always true: both checkbox answers", rules: "    conditions: [{action: skip, step: a, oneOf: [\"0\", \"1\"]}]",
			want: `could never be reached`},
		{name: "never holds: not given on an always-answered step", rules: "    conditions: [{action: skip, step: b, notGiven: true}]",
			want: `it can never hold: "b" is always answered`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDefinition([]byte(fmt.Sprintf(routeDefinition, tc.rules)))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid definition refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error with %q", tc.want)
			}
			if engine.ErrorCode(err) != engine.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q (code %s), want one containing %q", err, engine.ErrorCode(err), tc.want)
			}
		})
	}
}

// TestConditionOnLastStepRefused: the last step cannot be skipped.
func TestConditionOnLastStepRefused(t *testing.T) {
	_, err := ParseDefinition([]byte(`
key: last
name: Last
category: MEMBERSHIP
organisationId: 1
steps:
  - {name: a, questionText: A, questionType: BCB}
  - {name: z, questionText: Z, questionType: ITC, required: true, conditions: [{action: skip, step: a, equals: "1"}]}
`))
	if err == nil || !strings.Contains(err.Error(), `step "z" condition 1`) || !strings.Contains(err.Error(), "cannot be skipped") {
		t.Fatalf("err = %v, want the last step's skip refused", err)
	}
}
