package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// The question step on PostgreSQL, the registration's most frequent
// request, in two prepared statements (prepared.go) and no transaction: one
// read of everything the step needs (questionStateQuery) and one write
// (advanceQuery). docs/BENCHMARKS.md has the figures behind it.

// questionStateQuery reads a registration with what a question step needs
// in one statement: the instance, its period, whether its definition is
// still active, the selected persons and the saved answers (as JSON, one
// row). $1 is the instance id, $2 the user key.
const questionStateQuery = `SELECT i.id, i.definition_id, i.definition_key, i.current_step_id, i.status,
	i.start_time, i.end_time, i.related_entity_type, i.related_entity_id, i.organisation_id, i.user_key,
	i.selected_persons, i.version, i.updated_at, i.language,
	p.id, p.organisation_id, p.name, p.start_date, p.end_date, p.status, p.currency, p.definition_key,
	d.active,
	(SELECT coalesce(json_agg(json_build_object('id', x.id, 'organisationId', x.organisation_id,
		'firstName', x.first_name, 'lastName', x.last_name, 'dateOfBirth', x.date_of_birth, 'email', x.email,
		'externalId', x.external_id, 'createdAt', x.created_at)), '[]')
		FROM persons AS x WHERE x.id IN (SELECT value::bigint FROM json_array_elements_text(i.selected_persons::json))),
	(SELECT coalesce(json_agg(json_build_array(a.step_id, a.person_id, a.data_value) ORDER BY a.id), '[]')
		FROM process_data AS a WHERE a.instance_id = i.id AND a.data_key = 'answer')
FROM process_instances AS i
JOIN membership_periods AS p ON p.id = i.related_entity_id
JOIN process_definitions AS d ON d.id = i.definition_id
WHERE i.id = $1 AND i.user_key = $2`

// questionState is what questionStateQuery read.
type questionState struct {
	inst     *ProcessInstance
	selected []Person      // in the order of inst.SelectedPersons
	answers  []ProcessData // the saved answers, in the order they were written
}

// loadQuestionState reads the registration processID of userKey for a
// question step; not found as loadInstance has it.
func (s *Service) loadQuestionState(ctx context.Context, userKey, processID string) (*questionState, error) {
	id, err := parseProcessID(processID)
	if err != nil {
		return nil, err
	}
	rows, err := s.prepared.query(ctx, s.db, questionStateQuery, id, userKey)
	if err != nil {
		return nil, fmt.Errorf("load question state: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("load question state: %w", err)
		}
		return nil, Errorf(CodeNotFound, "process instance not found")
	}
	inst := &ProcessInstance{Period: &MembershipPeriod{}, Definition: &ProcessDefinition{}}
	p := inst.Period
	var selectedJSON, personsJSON, answersJSON []byte
	var startDate, endDate string // dates come as text: YYYY-MM-DD
	if err := rows.Scan(&inst.ID, &inst.DefinitionID, &inst.DefinitionKey, &inst.CurrentStepID, &inst.Status,
		&inst.StartTime, &inst.EndTime, &inst.RelatedEntityType, &inst.RelatedEntityID, &inst.OrganisationID, &inst.UserKey,
		&selectedJSON, &inst.Version, &inst.UpdatedAt, &inst.Language,
		&p.ID, &p.OrganisationID, &p.Name, &startDate, &endDate, &p.Status, &p.Currency, &p.DefinitionKey,
		&inst.Definition.Active, &personsJSON, &answersJSON); err != nil {
		return nil, fmt.Errorf("load question state: %w", err)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("load question state: %w", err)
	}
	if !inScope(ctx, inst.OrganisationID) { // another tenant's instance reads as none (tenants.go)
		return nil, Errorf(CodeNotFound, "process instance not found")
	}
	inst.Definition.ID = inst.DefinitionID
	if p.StartDate, err = time.Parse(time.DateOnly, startDate); err != nil {
		return nil, fmt.Errorf("load question state: period start: %w", err)
	}
	if p.EndDate, err = time.Parse(time.DateOnly, endDate); err != nil {
		return nil, fmt.Errorf("load question state: period end: %w", err)
	}
	if err := json.Unmarshal(selectedJSON, &inst.SelectedPersons); err != nil {
		return nil, fmt.Errorf("load question state: selected persons: %w", err)
	}
	state := &questionState{inst: inst}
	if state.selected, err = decodePersons(personsJSON, inst.SelectedPersons); err != nil {
		return nil, err
	}
	if state.answers, err = decodeAnswers(answersJSON, inst.ID); err != nil {
		return nil, err
	}
	return state, nil
}

// statePerson is a person as questionStateQuery writes it in JSON.
type statePerson struct {
	ID             int64     `json:"id"`
	OrganisationID int64     `json:"organisationId"`
	FirstName      string    `json:"firstName"`
	LastName       string    `json:"lastName"`
	DateOfBirth    string    `json:"dateOfBirth"` // a date: YYYY-MM-DD
	Email          string    `json:"email"`
	ExternalID     *string   `json:"externalId"`
	CreatedAt      time.Time `json:"createdAt"`
}

// decodePersons reads the persons of questionStateQuery in the order of
// ids, as personsByID returns them.
func decodePersons(raw []byte, ids []int64) ([]Person, error) {
	var rows []statePerson
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("load question state: persons: %w", err)
	}
	out := make([]Person, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(rows, func(r statePerson) bool { return r.ID == id })
		if i < 0 {
			continue
		}
		r := rows[i]
		born, err := time.Parse(time.DateOnly, r.DateOfBirth)
		if err != nil {
			return nil, fmt.Errorf("load question state: date of birth of person %d: %w", r.ID, err)
		}
		out = append(out, Person{ID: r.ID, OrganisationID: r.OrganisationID, FirstName: r.FirstName, LastName: r.LastName,
			DateOfBirth: born, Email: r.Email, ExternalID: r.ExternalID, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// decodeAnswers reads the answers of questionStateQuery: [step, person, value] triples.
func decodeAnswers(raw []byte, instanceID int64) ([]ProcessData, error) {
	var triples [][3]json.RawMessage
	if err := json.Unmarshal(raw, &triples); err != nil {
		return nil, fmt.Errorf("load question state: answers: %w", err)
	}
	out := make([]ProcessData, len(triples))
	for i, t := range triples {
		d := ProcessData{InstanceID: instanceID, DataKey: DataAnswer}
		if err := errors.Join(json.Unmarshal(t[0], &d.StepID), json.Unmarshal(t[1], &d.PersonID), json.Unmarshal(t[2], &d.DataValue)); err != nil {
			return nil, fmt.Errorf("load question state: answers: %w", err)
		}
		out[i] = d
	}
	return out, nil
}

// nextQuestion answers a question step that is not the last on
// PostgreSQL without a transaction, which saves its BEGIN and COMMIT: the
// read needs none (the instance's version is read with it, and every write
// to a registration's answers moves that version), and the one write is a
// single statement that checks the version (advanceWithAnswers), so a
// registration changed in between gets the same conflict as in a
// transaction. done is false for a step that needs one, the selection and
// the last question (the commit): the caller runs it in a transaction,
// reading again.
func (s *Service) nextQuestion(ctx context.Context, userKey string, in NextInput) (form *Form, done bool, err error) {
	state, err := s.loadQuestionState(ctx, userKey, in.ProcessID)
	if err != nil {
		return nil, true, err
	}
	inst := state.inst
	if err := checkOpen(inst); err != nil {
		return nil, true, err
	}
	def, err := s.defs.get(ctx, s.db, inst.DefinitionID)
	if err != nil {
		return nil, true, err
	}
	now := s.clock()
	current, err := checkNext(inst, def, in, now)
	if err != nil {
		return nil, true, err
	}
	if current == 0 {
		return nil, false, nil
	}
	plan, err := planAnswers(inst, def, current, in, state.selected, state.answers)
	if err != nil {
		return nil, true, err
	}
	if plan.last() {
		return nil, false, nil
	}
	form, err = s.advance(ctx, s.db, inst, def, plan, now)
	return form, true, err
}

// advanceQuery is a question step's whole write on PostgreSQL in one
// statement: the version-checked move of the instance (as bumpVersion),
// the step's answers replaced (as storeAnswers: answers of persons no
// longer answered deleted, the others upserted on the unique answer key),
// and the answers already stored for the next step read back to pre-fill
// it (after Back). Every part depends on the move, so a version conflict
// writes nothing and returns no row. The answers go in as one JSON object
// of person id to answer, so the statement is prepared once for every step.
//
// $1 next step, $2 status, $3 new version, $4 now, $5 instance, $6 version
// read, $7 step answered, $8 answers, $9 next step (to pre-fill).
const advanceQuery = `WITH moved AS (
	UPDATE process_instances SET current_step_id = $1, status = $2, version = $3, updated_at = $4
	WHERE id = $5 AND version = $6 RETURNING id
), given AS (
	SELECT key::bigint AS person_id, value AS data_value FROM json_each_text($8::json)
), cleared AS (
	DELETE FROM process_data WHERE instance_id IN (SELECT id FROM moved) AND step_id = $7 AND data_key = 'answer'
	AND person_id NOT IN (SELECT person_id FROM given)
), stored AS (
	INSERT INTO process_data (instance_id, step_id, person_id, data_key, data_value, created_at)
	SELECT moved.id, $7, g.person_id, 'answer', g.data_value, $4 FROM moved, given AS g
	ON CONFLICT (instance_id, (COALESCE(step_id, 0)), person_id, data_key) DO UPDATE SET data_value = EXCLUDED.data_value, created_at = EXCLUDED.created_at
)
SELECT moved.id, d.person_id, d.data_value FROM moved
LEFT JOIN process_data AS d ON d.instance_id = moved.id AND d.step_id = $9 AND d.data_key = 'answer'`

// advanceWithAnswers moves inst to its next question on PostgreSQL (its
// CurrentStepID and Status already set by the caller), replaces the answers
// of stepID and returns the answers stored for nextStepID by person, in one
// statement (advanceQuery), on db: the pool or a transaction. A version
// conflict is the same conflict as bumpVersion's.
func (s *Service) advanceWithAnswers(ctx context.Context, db bun.IDB, inst *ProcessInstance, now time.Time, stepID int64, answers map[int64]string, nextStepID int64) (map[int64]string, error) {
	given := make(map[string]string, len(answers))
	for id, value := range answers {
		given[fmt.Sprint(id)] = value
	}
	answersJSON, err := json.Marshal(given)
	if err != nil {
		return nil, err
	}
	rows, err := s.prepared.query(ctx, db, advanceQuery, *inst.CurrentStepID, string(inst.Status), inst.Version+1, now,
		inst.ID, inst.Version, stepID, string(answersJSON), nextStepID)
	if err != nil {
		return nil, fmt.Errorf("store answers and move process instance: %w", err)
	}
	defer rows.Close()
	moved := false
	prefill := map[int64]string{}
	for rows.Next() {
		var id int64
		var person sql.NullInt64
		var value sql.NullString
		if err := rows.Scan(&id, &person, &value); err != nil {
			return nil, fmt.Errorf("store answers and move process instance: %w", err)
		}
		moved = true
		if person.Valid && value.Valid {
			prefill[person.Int64] = value.String
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store answers and move process instance: %w", err)
	}
	if !moved {
		return nil, Errorf(CodeConflict, "this registration changed in another window; reload it to continue")
	}
	inst.Version++
	inst.UpdatedAt = now
	return prefill, nil
}
