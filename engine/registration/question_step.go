package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
)

// The question step, the registration's most frequent request, in
// prepared statements (engine/prepared.go): one read of everything the step needs
// (questionState), outside a transaction, and the write, on PostgreSQL one
// statement without a transaction (advanceQuery), on SQLite four in one
// (sqliteAdvance). docs/BENCHMARKS.md has the figures behind it.

// questionColumns are what a question step reads besides the registration:
// its selected persons and its saved answers ([step, person, value]
// triples), decoded by questionStateOf.
var questionColumns = []string{
	`(SELECT coalesce({agg}({obj}(` + personJSON + `)), '[]') FROM {selected} JOIN persons AS x ON x.id = {sid})`,
	`(SELECT coalesce({agg}({arr}(a.step_id, a.person_id, a.data_value)), '[]')
		FROM process_data AS a WHERE a.instance_id = i.id AND a.data_key = 'answer')`,
}

// questionStateSQL is the read of a question step.
var questionStateSQL = newStateStatements(questionColumns...)

// questionState is what questionStateSQL read.
type questionState struct {
	inst     *engine.ProcessInstance
	selected []engine.Person      // in the order of inst.SelectedPersons
	answers  []engine.ProcessData // the saved answers, in the order they were written
}

// loadQuestionState reads the registration processID of userKey for a
// question step; not found as loadInstance has it.
func (s *Service) loadQuestionState(ctx context.Context, userKey, processID string) (*questionState, error) {
	var personsJSON, answersJSON []byte
	inst, err := s.loadState(ctx, questionStateSQL, userKey, processID, &personsJSON, &answersJSON)
	if err != nil {
		return nil, err
	}
	return questionStateOf(inst, personsJSON, answersJSON)
}

// questionStateOf is inst with its questionColumns as read.
func questionStateOf(inst *engine.ProcessInstance, personsJSON, answersJSON []byte) (*questionState, error) {
	state := &questionState{inst: inst}
	var err error
	if state.selected, err = decodePersons(personsJSON, inst.SelectedPersons); err != nil {
		return nil, err
	}
	if state.answers, err = decodeAnswers(answersJSON, inst.ID); err != nil {
		return nil, err
	}
	return state, nil
}

// decodePersons reads the persons of a state statement in the order of
// ids, as personsByID returns them.
func decodePersons(raw []byte, ids []int64) ([]engine.Person, error) {
	var rows []statePerson
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("load question state: persons: %w", err)
	}
	out := make([]engine.Person, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(rows, func(r statePerson) bool { return r.ID == id })
		if i < 0 {
			continue
		}
		p, err := rows[i].person()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// decodeAnswers reads the answers of questionStateQuery: [step, person, value] triples.
func decodeAnswers(raw []byte, instanceID int64) ([]engine.ProcessData, error) {
	var triples [][3]json.RawMessage
	if err := json.Unmarshal(raw, &triples); err != nil {
		return nil, fmt.Errorf("load question state: answers: %w", err)
	}
	out := make([]engine.ProcessData, len(triples))
	for i, t := range triples {
		d := engine.ProcessData{InstanceID: instanceID, DataKey: engine.DataAnswer}
		if err := errors.Join(json.Unmarshal(t[0], &d.StepID), json.Unmarshal(t[1], &d.PersonID), json.Unmarshal(t[2], &d.DataValue)); err != nil {
			return nil, fmt.Errorf("load question state: answers: %w", err)
		}
		out[i] = d
	}
	return out, nil
}

// nextQuestion answers a question step that is not the last. Its read
// needs no transaction (the instance's version is read with it, and every
// write to a registration's answers moves that version), and its write
// checks the version (advanceWithAnswers), so a registration changed in
// between gets the same conflict as in a transaction; on PostgreSQL the
// write is one statement and needs no transaction either, which saves
// BEGIN and COMMIT. done is false for a step that needs one, the selection and
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
	def, err := definition.Of(s.Service).Cache().Get(ctx, s.DB(), inst.DefinitionID)
	if err != nil {
		return nil, true, err
	}
	now := s.Clock()
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
	form, err = s.advance(ctx, s.DB(), inst, def, plan, now)
	return form, true, err
}

// advanceQuery is a question step's whole write on PostgreSQL in one
// statement: the version-checked move of the instance (as bumpVersion) and
// the step's answers replaced (as storeAnswers: answers of persons no
// longer answered deleted, the others upserted on the unique answer key).
// Every part depends on the move, so a version conflict writes nothing and
// returns no row. The answers go in as one JSON object of person id to
// answer, so the statement is prepared once for every step. The next
// step's saved answers, which pre-fill it after Back, need no read: the
// step's read had them, and no write came between (the version).
//
// $1 next step, $2 status, $3 new version, $4 now, $5 instance, $6 version
// read, $7 step answered, $8 answers, $9 the member's language ("" keeps
// the registration's, as bumpVersion does).
const advanceQuery = `WITH moved AS (
	UPDATE process_instances SET current_step_id = $1, status = $2, version = $3, updated_at = $4,
	language = COALESCE(NULLIF($9, ''), language)
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
SELECT id FROM moved`

// sqliteAdvance is advanceQuery on SQLite, which has no data-modifying
// WITH: the move, the insert and, only for a step answered before (after
// Back), the delete, in one transaction.
var sqliteAdvance = struct{ move, clear, store string }{
	move: `UPDATE process_instances SET current_step_id = ?, status = ?, version = ?, updated_at = ?,
	language = COALESCE(NULLIF(?, ''), language) WHERE id = ? AND version = ?`,
	clear: `DELETE FROM process_data WHERE instance_id = ? AND step_id = ? AND data_key = 'answer'
	AND NOT EXISTS (SELECT 1 FROM json_each(?) AS g WHERE CAST(g.key AS INTEGER) = process_data.person_id)`,
	store: `INSERT INTO process_data (instance_id, step_id, person_id, data_key, data_value, created_at)
	SELECT ?, ?, CAST(key AS INTEGER), 'answer', value, ? FROM json_each(?) WHERE true
	ON CONFLICT (instance_id, COALESCE(step_id, 0), person_id, data_key) DO UPDATE SET data_value = excluded.data_value, created_at = excluded.created_at`,
}

// storeStepAnswers moves inst to its next question (its CurrentStepID and
// Status already set by the caller) and replaces the answers of stepID,
// on db (the pool or a transaction) through moveInstance. answeredBefore
// says whether the step has saved answers (after Back), which on SQLite
// decides whether the delete runs.
func (s *Service) storeStepAnswers(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, now time.Time, stepID int64, answers map[int64]string, answeredBefore bool) error {
	given := make(map[string]string, len(answers))
	for id, value := range answers {
		given[fmt.Sprint(id)] = value
	}
	raw, err := json.Marshal(given)
	if err != nil {
		return err
	}
	answersJSON, version, language := string(raw), inst.Version, engine.LanguageOf(ctx)
	sqlite := []string{sqliteAdvance.move}
	args := [][]any{{*inst.CurrentStepID, string(inst.Status), version + 1, now, language, inst.ID, version}}
	if answeredBefore {
		sqlite, args = append(sqlite, sqliteAdvance.clear), append(args, []any{inst.ID, stepID, answersJSON})
	}
	sqlite, args = append(sqlite, sqliteAdvance.store), append(args, []any{inst.ID, stepID, now, answersJSON})
	return s.moveInstance(ctx, db, inst, now,
		advanceQuery, []any{*inst.CurrentStepID, string(inst.Status), version + 1, now, inst.ID, version, stepID, answersJSON, language},
		sqlite, args)
}
