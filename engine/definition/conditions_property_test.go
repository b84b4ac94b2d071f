package definition_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestConditionalPathsProperty generates random valid definitions with
// conditions and walks each with random answers and Backs through the
// service. Whatever the definition and answers: the walk ends; forwards it
// only ever moves to a later step (no step twice on a path); Back returns
// to the step the walk came from, Change to the step chosen; the review lists exactly the answers of
// the steps walked; and after the commit the stored answers are exactly
// the ones given on the final path. The walk's own record is the oracle:
// the steps the service led through, minus those undone by Back.
func TestConditionalPathsProperty(t *testing.T) {
	t.Parallel()
	trials := 60
	if testing.Short() {
		trials = 10
	}
	for trial := range trials {
		seed := uint64(trial + 1)
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			spec := randomDefinition(t, rng)
			f := enginetest.NewFixture(t, dbtest.SQLite(t))
			if _, err := definition.ImportDefinition(f.Ctx, f.DB, spec); err != nil {
				t.Fatalf("import: %v", err)
			}
			walkRandomly(t, f, rng, spec)
		})
	}
}

// randomDefinition makes a definition that passes import validation.
func randomDefinition(t *testing.T, rng *rand.Rand) *definition.Spec {
	t.Helper()
	for attempt := 0; attempt < 1000; attempt++ {
		spec := &definition.Spec{Key: "membership", Name: "Random", Category: "MEMBERSHIP", OrganisationID: 1}
		n := 3 + rng.IntN(6)
		for i := range n - 1 {
			s := definition.StepSpec{Name: fmt.Sprintf("s%d", i+1), Question: definition.Plain(fmt.Sprintf("Question %d", i+1))}
			switch rng.IntN(4) {
			case 0:
				s.Type = engine.TypeCheckbox
			case 1:
				s.Type, s.Required = engine.TypeDropdown, rng.IntN(2) == 0
				s.Options = []definition.OptionSpec{{Value: "a"}, {Value: "b"}, {Value: "c"}}
			case 2:
				s.Type, s.Required = engine.TypeText, rng.IntN(2) == 0
			default:
				s.Type, s.Required = engine.TypeNumber, rng.IntN(2) == 0
			}
			switch rng.IntN(8) {
			case 0:
				s.Persons = &definition.AgeSpec{MaxAge: enginetest.PtrTo(17)}
			case 1:
				s.Persons = &definition.AgeSpec{MinAge: enginetest.PtrTo(18)}
			}
			spec.Steps = append(spec.Steps, s)
		}
		spec.Steps = append(spec.Steps, definition.StepSpec{Name: "terms", Question: definition.Plain("Terms"), Type: engine.TypeAccept, Required: true})
		for i := 1; i < n-1; i++ {
			for range rng.IntN(3) {
				spec.Steps[i].Conditions = append(spec.Steps[i].Conditions, randomCondition(rng, spec.Steps, i))
			}
		}
		if err := spec.Validate(); err == nil {
			return spec
		}
	}
	t.Fatalf("no valid definition in 1000 attempts")
	return nil
}

func randomCondition(rng *rand.Rand, steps []definition.StepSpec, i int) definition.ConditionSpec {
	c := definition.ConditionSpec{Action: "skip", Scope: []string{"person", "registration"}[rng.IntN(2)]}
	source := rng.IntN(i)
	if i+2 <= len(steps)-1 && rng.IntN(3) == 0 {
		c.Action, source = "jump", rng.IntN(i+1)
		c.To = steps[i+2+rng.IntN(len(steps)-1-(i+2)+1)].Name
	}
	c.Step = steps[source].Name
	values := answerValues(steps[source].Type)
	switch rng.IntN(5) {
	case 0:
		c.NotGiven = true
	case 1, 2:
		v := values[rng.IntN(len(values))]
		c.Equals = &v
	default:
		c.OneOf = []string{values[rng.IntN(len(values))]}
		if w := values[rng.IntN(len(values))]; w != c.OneOf[0] {
			c.OneOf = append(c.OneOf, w)
		}
	}
	return c
}

// answerValues are the non-empty answers the walk gives to a type.
func answerValues(t engine.QuestionType) []string {
	switch t {
	case engine.TypeCheckbox, engine.TypeAccept:
		return []string{"0", "1"}
	case engine.TypeDropdown:
		return []string{"a", "b", "c"}
	case engine.TypeNumber:
		return []string{"1", "2"}
	}
	return []string{"x", "y"}
}

// walkRandomly registers a random selection of persons through the
// definition and checks the properties (see TestConditionalPathsProperty).
func walkRandomly(t *testing.T, f *enginetest.Fixture, rng *rand.Rand, spec *definition.Spec) {
	t.Helper()
	var persons []int64
	for _, p := range []int64{enginetest.Alex, enginetest.Sam, enginetest.Robin} {
		if rng.IntN(2) == 0 {
			persons = append(persons, p)
		}
	}
	if len(persons) == 0 {
		persons = []int64{enginetest.Robin}
	}
	r := f.Start(engine.DemoUserKey, persons...)
	last := len(spec.Steps)
	walk := []int{r.Form.Step}          // the steps of the path so far, in order
	given := map[int]map[int64]string{} // by step: the answers last given, by shown person
	backs := 0
	for ops := 0; r.Form.State != engine.StateDone; ops++ {
		if ops > 10*last+20 {
			t.Fatalf("the walk did not end after %d operations: %v", ops, walk)
		}
		step := r.Form.Step
		if step == last {
			checkReview(t, f, r, walk, given)
		}
		if len(walk) > 1 && backs < 10 && rng.IntN(4) == 0 {
			// Change: back to any step of the path so far.
			k := rng.IntN(len(walk) - 1)
			form, err := registration.Of(f.Svc).ReturnTo(f.Ctx, r.UserKey, r.PID, walk[k])
			if err != nil {
				t.Fatalf("change from %d to %d: %v", step, walk[k], err)
			}
			if form.Step != walk[k] {
				t.Fatalf("change to %d went to %d", walk[k], form.Step)
			}
			walk, r.Form = walk[:k+1], form
			backs++
			continue
		}
		if len(walk) > 1 && backs < 10 && rng.IntN(4) == 0 {
			form, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, &step)
			if err != nil {
				t.Fatalf("back from %d: %v", step, err)
			}
			if want := walk[len(walk)-2]; form.Step != want {
				t.Fatalf("back from %d went to %d, want %d (walk %v)", step, form.Step, want, walk)
			}
			walk, r.Form = walk[:len(walk)-1], form
			backs++
			continue
		}
		in := make([]registration.PersonInput, 0, len(r.Form.People))
		answers := map[int64]string{}
		for _, p := range r.Form.People {
			if p.Hide {
				continue
			}
			v := randomAnswer(rng, spec.Steps[step-1])
			in = append(in, registration.PersonInput{ID: p.ID, Answer: &v})
			answers[p.ID] = v
		}
		given[step] = answers
		form := r.Next(in)
		if form.State == engine.StateDone {
			if step != last {
				t.Fatalf("committed after step %d, want after the last step %d", step, last)
			}
			break
		}
		if form.Step <= step {
			t.Fatalf("from step %d the walk went to step %d: not forwards (walk %v)", step, form.Step, walk)
		}
		walk = append(walk, form.Step)
	}
	// After the commit the stored answers are exactly those of the path.
	want := map[string]string{}
	for _, s := range walk {
		for p, v := range given[s] {
			want[fmt.Sprintf("step %d person %d", s, p)] = v
		}
	}
	if got := storedAnswers(t, f, r.ID); !maps.Equal(got, want) {
		t.Fatalf("after the commit the stored answers are\n%v\nwant those of the path %v:\n%v", got, walk, want)
	}
}

// randomAnswer is a valid answer to s: required steps get a non-empty one.
func randomAnswer(rng *rand.Rand, s definition.StepSpec) string {
	if s.Type == engine.TypeAccept {
		return "1"
	}
	values := answerValues(s.Type)
	if !s.Required && s.Type != engine.TypeCheckbox && rng.IntN(3) == 0 {
		return ""
	}
	return values[rng.IntN(len(values))]
}

// checkReview: at the last step the review lists exactly the steps walked,
// each for the persons it was shown to.
func checkReview(t *testing.T, f *enginetest.Fixture, r *enginetest.Run, walk []int, given map[int]map[int64]string) {
	t.Helper()
	review, err := registration.Of(f.Svc).Review(f.Ctx, r.UserKey, r.PID)
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	var got, want []string
	for _, p := range review.Persons {
		for _, a := range p.Answers {
			got = append(got, fmt.Sprintf("step %d person %d", a.Step, p.ID))
		}
	}
	for _, s := range walk {
		shown := slices.Collect(maps.Keys(given[s]))
		if s == r.Form.Step {
			shown = nil
			for _, p := range r.Form.People {
				if !p.Hide {
					shown = append(shown, p.ID)
				}
			}
		}
		for _, p := range shown {
			want = append(want, fmt.Sprintf("step %d person %d", s, p))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("review lists %v, want %v (walk %v)", got, want, walk)
	}
}

// storedAnswers reads an instance's stored answers, keyed like the walk's.
func storedAnswers(t *testing.T, f *enginetest.Fixture, instanceID int64) map[string]string {
	t.Helper()
	var rows []struct {
		OrderIndex int    `bun:"order_index"`
		PersonID   int64  `bun:"person_id"`
		DataValue  string `bun:"data_value"`
	}
	err := f.DB.NewRaw(`SELECT s.order_index, d.person_id, d.data_value FROM process_data AS d
		JOIN process_steps AS s ON s.id = d.step_id WHERE d.instance_id = ? AND d.data_key = ?`, instanceID, engine.DataAnswer).Scan(f.Ctx, &rows)
	if err != nil {
		t.Fatalf("stored answers: %v", err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[fmt.Sprintf("step %d person %d", r.OrderIndex, r.PersonID)] = r.DataValue
	}
	return out
}
