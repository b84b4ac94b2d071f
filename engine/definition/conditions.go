package definition

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Conditional steps (issue 17). A step may carry conditions on earlier
// answers: skip this step, or (after this step) jump ahead to a later one.
// Each is evaluated per person (the step is hidden for the persons it
// applies to, as the age rule hides it) or per registration (the step is
// left out for everyone). The path through a definition is never stored:
// it is recomputed from the saved answers on every request (route), so
// Back, Change and resume stay right when an earlier answer changes.

// condition is a stored condition compiled against its definition: steps
// are indexes into the definition's ordered steps.
type condition struct {
	name   string // "if1", ...: the row's value, for messages
	step   int    // the step carrying the condition
	action engine.ConditionAction
	scope  engine.ConditionScope
	op     engine.ConditionOperator
	source int // the step whose answer is read
	values []string
	target int // JUMP: the step to continue at
}

// holds evaluates the condition on one person's answer of the source step;
// given is false when the person has no answer on the current path (the
// source step was skipped or hidden for them, or left empty).
func (c *condition) holds(sourceType engine.QuestionType, answer string, given bool) bool {
	if c.op == engine.OpNotGiven {
		return !given
	}
	if !given {
		return false
	}
	return slices.ContainsFunc(c.values, func(v string) bool { return answerMatches(sourceType, answer, v) })
}

// answerMatches compares a stored answer with a condition's value: a SEL
// answer matches each value it contains, a number matches numerically
// ("5" equals "5.0"), anything else exactly.
func answerMatches(t engine.QuestionType, answer, value string) bool {
	switch t {
	case engine.TypeMulti:
		return slices.Contains(strings.Split(answer, ","), value)
	case engine.TypeNumber:
		a, errA := strconv.ParseFloat(answer, 64)
		b, errB := strconv.ParseFloat(value, 64)
		return errA == nil && errB == nil && a == b
	}
	return answer == value
}

// compileConditions splits the stored option rows of def's steps into the
// choices (left on the step) and the conditions (returned by step index).
func compileConditions(def *engine.ProcessDefinition) ([][]condition, error) {
	index := make(map[int64]int, len(def.Steps))
	for i, s := range def.Steps {
		index[s.ID] = i
	}
	out := make([][]condition, len(def.Steps))
	for i := range def.Steps {
		s := &def.Steps[i]
		choices := s.Options[:0:0]
		for _, o := range s.Options {
			if o.Kind != engine.OptionCondition {
				choices = append(choices, o)
				continue
			}
			c, err := compileCondition(o, i, index)
			if err != nil {
				return nil, fmt.Errorf("definition %d step %s condition %s: %w", def.ID, s.Name, o.Value, err)
			}
			out[i] = append(out[i], c)
		}
		s.Options = choices
	}
	return out, nil
}

func compileCondition(o engine.ProcessStepOption, step int, index map[int64]int) (condition, error) {
	c := condition{name: o.Value, step: step, target: -1}
	if o.Action == nil || o.Scope == nil || o.Operator == nil || o.SourceStepID == nil {
		return c, fmt.Errorf("stored condition lacks its action, scope, operator or source step")
	}
	c.action, c.scope, c.op = *o.Action, *o.Scope, *o.Operator
	var ok bool
	if c.source, ok = index[*o.SourceStepID]; !ok {
		return c, fmt.Errorf("source step %d is not in the definition", *o.SourceStepID)
	}
	if o.MatchValues != nil {
		if err := json.Unmarshal([]byte(*o.MatchValues), &c.values); err != nil {
			return c, fmt.Errorf("stored values do not parse: %w", err)
		}
	}
	if c.action == engine.ActionJump {
		if o.TargetStepID == nil {
			return c, fmt.Errorf("stored jump lacks its target")
		}
		if c.target, ok = index[*o.TargetStepID]; !ok {
			return c, fmt.Errorf("target step %d is not in the definition", *o.TargetStepID)
		}
	}
	return c, nil
}

// Route is the path of one registration through its definition, computed
// from the selected persons and their saved answers.
type Route struct {
	Steps  []int            // on-path step indexes, in order
	onPath []bool           // by step index
	hidden []map[int64]bool // by step index: persons the step does not apply to
}

// RouteFor computes the path. It walks the steps once, in order: a step's
// conditions only read earlier steps (import validation sees to it), whose
// place on the path is already known, so the walk always ends and never
// visits a step twice. A step is on the path unless a registration-wide
// condition leaves it out or it applies to none of the persons; the last
// step is always on the path (import refuses conditions that would leave it
// out), so every registration ends at the same step and commits from there.
func (d *Definition) RouteFor(persons []engine.Person, periodStart time.Time, answers map[int64]map[int64]string) *Route {
	n := len(d.Steps)
	r := &Route{onPath: make([]bool, n), hidden: make([]map[int64]bool, n)}
	jumpPerson := map[int64]int{} // person -> first step index they take part in again
	jumpAll := -1
	given := func(i int, personID int64) (string, bool) {
		if !r.onPath[i] || r.hidden[i][personID] {
			return "", false
		}
		v, ok := answers[d.Steps[i].ID][personID]
		return v, ok && v != ""
	}
	holdsFor := func(c *condition, personID int64) bool {
		v, ok := given(c.source, personID)
		return c.holds(d.Steps[c.source].QuestionType, v, ok)
	}
	holdsForAny := func(c *condition) bool {
		return slices.ContainsFunc(persons, func(p engine.Person) bool { return holdsFor(c, p.ID) })
	}
	for i := range d.Steps {
		step := &d.Steps[i]
		last := i == n-1
		r.hidden[i] = map[int64]bool{}
		if !last && jumpAll > i {
			continue
		}
		skipAll := false
		for k := range d.conds[i] {
			c := &d.conds[i][k]
			if c.action == engine.ActionSkip && c.scope == engine.ScopeRegistration && holdsForAny(c) {
				skipAll = true
			}
		}
		if skipAll && !last {
			continue
		}
		shown := 0
		for _, p := range persons {
			hide := jumpPerson[p.ID] > i || HiddenFor(step, p.DateOfBirth, periodStart)
			for k := range d.conds[i] {
				c := &d.conds[i][k]
				if !hide && c.action == engine.ActionSkip && c.scope == engine.ScopePerson && holdsFor(c, p.ID) {
					hide = true
				}
			}
			if hide {
				r.hidden[i][p.ID] = true
			} else {
				shown++
			}
		}
		if shown == 0 && !last {
			continue
		}
		r.onPath[i] = true
		r.Steps = append(r.Steps, i)
		for k := range d.conds[i] {
			c := &d.conds[i][k]
			if c.action != engine.ActionJump {
				continue
			}
			if c.scope == engine.ScopeRegistration {
				if holdsForAny(c) && c.target > jumpAll {
					jumpAll = c.target
				}
				continue
			}
			for _, p := range persons {
				if !r.hidden[i][p.ID] && holdsFor(c, p.ID) && c.target > jumpPerson[p.ID] {
					jumpPerson[p.ID] = c.target
				}
			}
		}
	}
	return r
}

// Next returns the number (1-based) of the first on-path step after step
// number, or 0 when there is none.
func (r *Route) Next(number int) int {
	for _, i := range r.Steps {
		if i+1 > number {
			return i + 1
		}
	}
	return 0
}

// Previous returns the number of the last on-path step before step number,
// or 0 (person selection) when there is none.
func (r *Route) Previous(number int) int {
	prev := 0
	for _, i := range r.Steps {
		if i+1 >= number {
			break
		}
		prev = i + 1
	}
	return prev
}

// Includes reports whether step number is on the path.
func (r *Route) Includes(number int) bool {
	return number >= 1 && number <= len(r.onPath) && r.onPath[number-1]
}

// Position is step number's place on the path (1-based): the "3" of
// "Question 3 of 6". A step off the path counts as the place it would take.
func (r *Route) Position(number int) int {
	pos := 0
	for _, i := range r.Steps {
		if i+1 <= number {
			pos++
		}
	}
	if !r.Includes(number) {
		pos++
	}
	return pos
}

// Hides reports whether step number does not apply to a person.
func (r *Route) Hides(number int, personID int64) bool {
	return r.hidden[number-1][personID]
}

// Answered keeps only the answers on the path: of on-path steps, by the
// persons the step applies to. Answers off the path stay stored (the member
// may change an earlier answer back) but are never validated, priced, shown
// for review or committed.
func (r *Route) Answered(d *Definition, answers map[int64]map[int64]string) map[int64]map[int64]string {
	out := make(map[int64]map[int64]string, len(answers))
	for i, s := range d.Steps {
		byPerson, ok := answers[s.ID]
		if !ok || !r.onPath[i] {
			continue
		}
		kept := map[int64]string{}
		for pid, v := range byPerson {
			if !r.hidden[i][pid] {
				kept[pid] = v
			}
		}
		out[s.ID] = kept
	}
	return out
}

// HiddenFor reports whether the step's person rule hides a person born on dob,
// judged by the age at the period's start.
func HiddenFor(step *engine.ProcessStep, dob, periodStart time.Time) bool {
	if step.PersonMinAge == nil && step.PersonMaxAge == nil {
		return false
	}
	return !InAgeRange(AgeAt(dob, periodStart), step.PersonMinAge, step.PersonMaxAge)
}

// IsCheckboxType reports whether the type's answers are 0/1 flags, for which
// a missing answer means "no" (the spec: a missing answer is sent as 0).
func IsCheckboxType(t engine.QuestionType) bool {
	return t == engine.TypeCheckbox || t == engine.TypeAccept || t == engine.TypeOne
}

// AgeAt returns the age in whole years of someone born on dob at date on.
func AgeAt(dob, on time.Time) int {
	years := on.Year() - dob.Year()
	if on.Month() < dob.Month() || (on.Month() == dob.Month() && on.Day() < dob.Day()) {
		years--
	}
	return years
}

func InAgeRange(age int, minAge, maxAge *int) bool {
	return (minAge == nil || age >= *minAge) && (maxAge == nil || age <= *maxAge)
}

// DeleteOffPathAnswers deletes, at commit, the stored answers (of data) that
// are off the registration's final path r: of steps left out, or of persons
// a step does not apply to. current is the step being answered, whose
// answers the caller replaces itself.
func DeleteOffPathAnswers(ctx context.Context, db bun.IDB, instanceID int64, data []engine.ProcessData, def *Definition, r *Route, current int64) error {
	number := make(map[int64]int, len(def.Steps))
	for i, s := range def.Steps {
		number[s.ID] = i + 1
	}
	var ids []int64
	for _, d := range data {
		if d.DataKey != engine.DataAnswer || d.StepID == nil || d.PersonID == nil || *d.StepID == current {
			continue
		}
		n, known := number[*d.StepID]
		if !known || !r.Includes(n) || r.Hides(n, *d.PersonID) {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := db.NewDelete().Model((*engine.ProcessData)(nil)).
		Where("instance_id = ? AND id IN (?)", instanceID, bun.List(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("delete answers off the path: %w", err)
	}
	return nil
}
