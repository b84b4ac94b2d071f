package definition

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"portal/engine"
)

// The definition format's spelling of condition actions and scopes.
const (
	specSkip         = "skip"
	specJump         = "jump"
	specPerson       = "person"
	specRegistration = "registration"
)

// validateConditions checks the steps' conditions once the steps themselves
// are valid: conditions only look backwards (so a path can never loop),
// name existing steps and, for equals and oneOf, answers the named step can
// have; jumps go forwards; the last step is never left out; and no
// condition always holds, which would leave a step unreachable. Every
// message names the step and the condition.
func (d *Spec) validateConditions() []string {
	order := make([]*StepSpec, len(d.Steps))
	for i := range d.Steps {
		order[i] = &d.Steps[i]
	}
	slices.SortFunc(order, func(a, b *StepSpec) int { return a.OrderIndex - b.OrderIndex })
	pos := make(map[string]int, len(order))
	for i, s := range order {
		pos[s.Name] = i
	}
	// mayBeLeftOut[i]: some registration can have no answer at step i
	// even when it is required, because a rule can leave it out.
	mayBeLeftOut := make([]bool, len(order))
	for i, s := range order {
		if s.Persons != nil {
			mayBeLeftOut[i] = true
		}
		for _, c := range s.Conditions {
			switch c.Action {
			case specSkip:
				mayBeLeftOut[i] = true
			case specJump:
				if t, ok := pos[c.To]; ok {
					for k := i + 1; k < t && k < len(order); k++ {
						mayBeLeftOut[k] = true
					}
				}
			}
		}
	}
	var problems []string
	for i, s := range order {
		for j, c := range s.Conditions {
			where := fmt.Sprintf("step %q condition %d (%s)", s.Name, j+1, describeConditionSpec(c))
			add := func(format string, args ...any) {
				problems = append(problems, where+": "+fmt.Sprintf(format, args...))
			}
			if c.Action != specSkip && c.Action != specJump {
				add("action must be %q or %q", specSkip, specJump)
				continue
			}
			if c.Scope == "" {
				s.Conditions[j].Scope = specPerson // spelled out, so that an export imports unchanged
			}
			if c.Scope != "" && c.Scope != specPerson && c.Scope != specRegistration {
				add("scope must be %q or %q", specPerson, specRegistration)
			}
			src, ok := pos[c.Step]
			switch {
			case !ok:
				add("step %q does not exist", c.Step)
				continue
			case c.Action == specSkip && src >= i:
				add("a skip may only look at earlier steps, and %q does not come before %q", c.Step, s.Name)
				continue
			case c.Action == specJump && src > i:
				add("a jump may only look at this step or earlier ones, and %q comes after %q", c.Step, s.Name)
				continue
			}
			source := order[src]
			tests := 0
			if c.Equals != nil {
				tests++
			}
			if len(c.OneOf) > 0 {
				tests++
			}
			if c.NotGiven {
				tests++
			}
			if tests != 1 {
				add("give exactly one of equals, oneOf and notGiven")
				continue
			}
			values := c.OneOf
			if c.Equals != nil {
				values = []string{*c.Equals}
			}
			bad := false
			for _, v := range values {
				if msg := conditionValueProblem(source, v); msg != "" {
					add("%s", msg)
					bad = true
				}
			}
			if bad {
				continue
			}
			last := i == len(order)-1
			switch c.Action {
			case specSkip:
				if c.To != "" {
					add("a skip takes no \"to\"; a jump does")
					continue
				}
				if last {
					add("the last step is always asked (it is where a registration is confirmed), so it cannot be skipped")
					continue
				}
			case specJump:
				t, ok := pos[c.To]
				switch {
				case c.To == "":
					add("a jump needs \"to\": the later step to continue at")
					continue
				case !ok:
					add("the jump's target %q does not exist", c.To)
					continue
				case t <= i:
					add("a jump may only go forwards, and %q does not come after %q", c.To, s.Name)
					continue
				case t == i+1:
					add("the jump to %q leaves out no step: it is the next step anyway", c.To)
					continue
				}
			}
			switch conditionAlways(source, mayBeLeftOut[src], values, c.NotGiven) {
			case alwaysHolds:
				if c.Action == specSkip {
					add("it holds for every possible answer of %q, so step %q could never be reached", c.Step, s.Name)
				} else {
					add("it holds for every possible answer of %q, so step %q could never be reached after %q", c.Step, order[i+1].Name, s.Name)
				}
			case neverHolds:
				add("it can never hold: %q is always answered", c.Step)
			}
		}
	}
	return problems
}

// conditionValueProblem says why value can never be an answer of source
// (empty when it can be).
func conditionValueProblem(source *StepSpec, value string) string {
	switch source.Type {
	case engine.TypeDropdown, engine.TypeRadio, engine.TypeMulti:
		if !slices.ContainsFunc(source.Options, func(o OptionSpec) bool { return o.Value == value }) {
			return fmt.Sprintf("%q is not an option of %q", value, source.Name)
		}
	case engine.TypeCheckbox, engine.TypeAccept, engine.TypeOne:
		if value != "0" && value != "1" {
			return fmt.Sprintf("%q is a %s step: compare with \"1\" (yes) or \"0\" (no), not %q", source.Name, source.Type, value)
		}
	case engine.TypeNumber:
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return fmt.Sprintf("%q is a NUM step and %q is not a number", source.Name, value)
		}
	default:
		if strings.TrimSpace(value) == "" {
			return "compare with a non-empty value (use notGiven for an empty answer)"
		}
	}
	return ""
}

type always int

const (
	sometimes always = iota
	alwaysHolds
	neverHolds
)

// conditionAlways decides, where the source step's answers are a known
// finite set, whether a condition holds for all of them or for none.
// mayBeLeftOut says whether the source step can go unanswered although it
// is required (a rule can leave it out).
func conditionAlways(source *StepSpec, mayBeLeftOut bool, values []string, notGiven bool) always {
	checkbox := IsCheckboxType(source.Type)
	// A shown checkbox is always answered (a blank box is "0"); another
	// type only when it is required.
	canBeBlank := mayBeLeftOut || (!checkbox && !source.Required)
	if notGiven {
		if canBeBlank {
			return sometimes
		}
		return neverHolds
	}
	if canBeBlank {
		return sometimes
	}
	var domain []string
	switch {
	case source.Type == engine.TypeAccept:
		domain = []string{"1"} // required and shown: must be accepted
	case checkbox:
		domain = []string{"0", "1"}
	case source.Type == engine.TypeDropdown || source.Type == engine.TypeRadio || source.Type == engine.TypeMulti:
		// For SEL: every non-empty choice contains one of values exactly
		// when values name every option.
		for _, o := range source.Options {
			domain = append(domain, o.Value)
		}
	default:
		return sometimes
	}
	for _, v := range domain {
		if !slices.Contains(values, v) {
			return sometimes
		}
	}
	return alwaysHolds
}

// describeConditionSpec is a condition in words, for messages and for the
// label stored with it (what staff pages show).
func describeConditionSpec(c ConditionSpec) string {
	var b strings.Builder
	switch c.Action {
	case specJump:
		fmt.Fprintf(&b, "after this step, continue at %s", c.To)
	default:
		b.WriteString("skip this step")
	}
	if c.Scope == specRegistration {
		b.WriteString(" for everyone when any person's answer to ")
	} else {
		b.WriteString(" for a person when their answer to ")
	}
	b.WriteString(c.Step)
	switch {
	case c.NotGiven:
		b.WriteString(" is not given")
	case c.Equals != nil:
		fmt.Fprintf(&b, " equals %q", *c.Equals)
	default:
		quoted := make([]string, len(c.OneOf))
		for i, v := range c.OneOf {
			quoted[i] = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " is one of %s", strings.Join(quoted, ", "))
	}
	return b.String()
}

// conditionRow turns a validated ConditionSpec into its stored row; ids
// are the definition's step ids by name.
func conditionRow(stepID int64, orderIndex, n int, c ConditionSpec, ids map[string]int64) engine.ProcessStepOption {
	action, scope, op := engine.ActionSkip, engine.ScopePerson, engine.OpOneOf
	if c.Action == specJump {
		action = engine.ActionJump
	}
	if c.Scope == specRegistration {
		scope = engine.ScopeRegistration
	}
	values := c.OneOf
	switch {
	case c.NotGiven:
		op, values = engine.OpNotGiven, nil
	case c.Equals != nil:
		op, values = engine.OpEquals, []string{*c.Equals}
	}
	row := engine.ProcessStepOption{StepID: stepID, OrderIndex: orderIndex, Kind: engine.OptionCondition,
		Value: "if" + strconv.Itoa(n), Label: describeConditionSpec(c),
		Action: &action, Scope: &scope, Operator: &op}
	source := ids[c.Step]
	row.SourceStepID = &source
	if values != nil {
		b, _ := json.Marshal(values) // strings always marshal
		s := string(b)
		row.MatchValues = &s
	}
	if action == engine.ActionJump {
		target := ids[c.To]
		row.TargetStepID = &target
	}
	return row
}

// insertConditions stores a step's conditions after its choices (which
// take order indexes 1..choices).
func insertConditions(ctx context.Context, db bun.IDB, stepID int64, choices int, conds []ConditionSpec, ids map[string]int64) error {
	if len(conds) == 0 {
		return nil
	}
	rows := make([]engine.ProcessStepOption, len(conds))
	for i, c := range conds {
		rows[i] = conditionRow(stepID, choices+i+1, i+1, c, ids)
	}
	if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return fmt.Errorf("insert conditions of step %d: %w", stepID, err)
	}
	return nil
}

// ExportDefinition returns a stored definition version in the import format,
// conditions included; version 0 means the newest. Importing the result
// again changes nothing.
func ExportDefinition(ctx context.Context, db bun.IDB, orgID int64, key string, version int) (*Spec, error) {
	var head *engine.ProcessDefinition
	var err error
	if version == 0 {
		head, err = LatestDefinition(ctx, db, orgID, key)
	} else {
		head = new(engine.ProcessDefinition)
		if err = db.NewSelect().Model(head).Where("organisation_id = ? AND key = ? AND version = ?", orgID, key, version).Scan(ctx); err != nil {
			err = engine.NotFoundOr(err, "definition version")
		}
	}
	if err != nil {
		return nil, err
	}
	def, err := LoadDefinition(ctx, db, head.ID)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(def.Steps))
	for _, s := range def.Steps {
		names[s.ID] = s.Name
	}
	spec := &Spec{Key: def.Key, Name: def.Name, Category: def.Category, OrganisationID: def.OrganisationID}
	for _, s := range def.Steps {
		texts, err := ParseTexts(s.Texts)
		if err != nil {
			return nil, fmt.Errorf("export step %s: stored texts do not parse: %w", s.Name, err)
		}
		ss := StepSpec{OrderIndex: s.OrderIndex, Name: s.Name, Question: textOr(texts.Question, s.QuestionText), Type: s.QuestionType,
			Required: s.Required, MarksTransfer: s.MarksTransfer}
		if s.ConsentKind != nil {
			ss.Consent = engine.ConsentKind(*s.ConsentKind)
		}
		if s.FormatPattern != nil && s.FormatMessage != nil {
			ss.Format = &FormatSpec{Pattern: *s.FormatPattern, Message: textOr(texts.Format, *s.FormatMessage)}
		}
		if s.MinValue != nil || s.MaxValue != nil {
			ss.Range = &RangeSpec{Min: s.MinValue, Max: s.MaxValue}
		}
		if s.PersonMinAge != nil || s.PersonMaxAge != nil {
			ss.Persons = &AgeSpec{MinAge: s.PersonMinAge, MaxAge: s.PersonMaxAge}
		}
		if s.PriceCode != nil && s.PriceLabel != nil && s.PriceAnswer != nil && s.PriceAmountMinor != nil {
			ss.Price = &PriceSpec{Code: *s.PriceCode, Label: textOr(texts.Price, *s.PriceLabel), Answer: *s.PriceAnswer, AmountMinor: *s.PriceAmountMinor}
		}
		for _, o := range s.Options {
			if o.Kind != engine.OptionCondition {
				ss.Options = append(ss.Options, OptionSpec{Value: o.Value, Label: textOr(texts.Options[o.Value], o.Label)})
				continue
			}
			c, err := conditionSpecOf(o, names)
			if err != nil {
				return nil, fmt.Errorf("export step %s condition %s: %w", s.Name, o.Value, err)
			}
			ss.Conditions = append(ss.Conditions, c)
		}
		spec.Steps = append(spec.Steps, ss)
	}
	return spec, nil
}

// conditionSpecOf is conditionRow backwards.
func conditionSpecOf(o engine.ProcessStepOption, names map[int64]string) (ConditionSpec, error) {
	var c ConditionSpec
	if o.Action == nil || o.Scope == nil || o.Operator == nil || o.SourceStepID == nil {
		return c, fmt.Errorf("stored condition lacks its action, scope, operator or source step")
	}
	c.Action, c.Scope, c.Step = specSkip, specPerson, names[*o.SourceStepID]
	if *o.Action == engine.ActionJump {
		c.Action = specJump
		if o.TargetStepID != nil {
			c.To = names[*o.TargetStepID]
		}
	}
	if *o.Scope == engine.ScopeRegistration {
		c.Scope = specRegistration
	}
	var values []string
	if o.MatchValues != nil {
		if err := json.Unmarshal([]byte(*o.MatchValues), &values); err != nil {
			return c, fmt.Errorf("stored values do not parse: %w", err)
		}
	}
	switch *o.Operator {
	case engine.OpNotGiven:
		c.NotGiven = true
	case engine.OpEquals:
		if len(values) != 1 {
			return c, fmt.Errorf("stored equals has %d values", len(values))
		}
		c.Equals = &values[0]
	default:
		c.OneOf = values
	}
	return c, nil
}

// textOr is a stored text per language, or the plain text of the step's
// column when it has none.
func textOr(t Text, plain string) Text {
	if t.IsPlain() {
		return Plain(plain)
	}
	return t
}
