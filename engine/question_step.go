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
	"github.com/uptrace/bun/dialect"
)

// The question step, the registration's most frequent request, in
// prepared statements (prepared.go): one read of everything the step needs
// (questionState), outside a transaction, and the write, on PostgreSQL one
// statement without a transaction (advanceQuery), on SQLite four in one
// (sqliteAdvance). docs/BENCHMARKS.md has the figures behind it.

// questionStateSQL is the read of a question step: the registration with its
// selected persons and its saved answers ([step, person, value] triples).
var questionStateSQL = newStateStatements(
	`(SELECT coalesce({agg}({obj}(`+personJSON+`)), '[]') FROM persons AS x WHERE x.id IN {selected})`,
	`(SELECT coalesce({agg}({arr}(a.step_id, a.person_id, a.data_value)), '[]')
		FROM process_data AS a WHERE a.instance_id = i.id AND a.data_key = 'answer')`)

// questionState is what questionStateSQL read.
type questionState struct {
	inst     *ProcessInstance
	selected []Person      // in the order of inst.SelectedPersons
	answers  []ProcessData // the saved answers, in the order they were written
}

// loadQuestionState reads the registration processID of userKey for a
// question step; not found as loadInstance has it.
func (s *Service) loadQuestionState(ctx context.Context, userKey, processID string) (*questionState, error) {
	var personsJSON, answersJSON []byte
	inst, err := s.loadState(ctx, questionStateSQL, userKey, processID, &personsJSON, &answersJSON)
	if err != nil {
		return nil, err
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

// decodePersons reads the persons of a state statement in the order of
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
		p, err := rows[i].person()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
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
// read, $7 step answered, $8 answers, $9 next step (to pre-fill), $10 the
// member's language ("" keeps the registration's, as bumpVersion does).
const advanceQuery = `WITH moved AS (
	UPDATE process_instances SET current_step_id = $1, status = $2, version = $3, updated_at = $4,
	language = COALESCE(NULLIF($10, ''), language)
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
SELECT d.person_id, d.data_value FROM moved
LEFT JOIN process_data AS d ON d.instance_id = moved.id AND d.step_id = $9 AND d.data_key = 'answer'`

// sqliteAdvance is advanceQuery on SQLite, which has no data-modifying
// WITH: four statements, run in one transaction (the same $ numbering).
var sqliteAdvance = [...]string{
	`UPDATE process_instances SET current_step_id = ?, status = ?, version = ?, updated_at = ?,
	language = COALESCE(NULLIF(?, ''), language) WHERE id = ? AND version = ?`,
	`DELETE FROM process_data WHERE instance_id = ? AND step_id = ? AND data_key = 'answer'
	AND person_id NOT IN (SELECT CAST(key AS INTEGER) FROM json_each(?))`,
	`INSERT INTO process_data (instance_id, step_id, person_id, data_key, data_value, created_at)
	SELECT ?, ?, CAST(key AS INTEGER), 'answer', value, ? FROM json_each(?) WHERE true
	ON CONFLICT (instance_id, COALESCE(step_id, 0), person_id, data_key) DO UPDATE SET data_value = excluded.data_value, created_at = excluded.created_at`,
	`SELECT person_id, data_value FROM process_data WHERE instance_id = ? AND step_id = ? AND data_key = 'answer'`,
}

// advanceWithAnswers moves inst to its next question (its CurrentStepID and
// Status already set by the caller), replaces the answers of stepID and
// returns the answers stored for nextStepID by person, on db: the pool or
// a transaction. On PostgreSQL in one statement (advanceQuery); on SQLite
// in four, in a transaction of their own if db is not one. A version
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
	var prefill map[int64]string
	if db.Dialect().Name() == dialect.PG {
		prefill, err = s.advancePG(ctx, db, inst, now, stepID, string(answersJSON), nextStepID)
	} else if tx, ok := db.(bun.Tx); ok {
		prefill, err = s.advanceSQLite(ctx, tx, inst, now, stepID, string(answersJSON), nextStepID)
	} else if err = s.prepared.prepare(ctx, sqliteAdvance[:]...); err == nil {
		err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
			prefill, err = s.advanceSQLite(ctx, tx, inst, now, stepID, string(answersJSON), nextStepID)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	markMoved(ctx, inst, now)
	return prefill, nil
}

// errMovedMeanwhile is the version conflict of advanceWithAnswers.
var errMovedMeanwhile = Errorf(CodeConflict, "this registration changed in another window; reload it to continue")

func (s *Service) advancePG(ctx context.Context, db bun.IDB, inst *ProcessInstance, now time.Time, stepID int64, answersJSON string, nextStepID int64) (map[int64]string, error) {
	rows, err := s.prepared.query(ctx, db, advanceQuery, *inst.CurrentStepID, string(inst.Status), inst.Version+1, now,
		inst.ID, inst.Version, stepID, answersJSON, nextStepID, LanguageOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("store answers and move process instance: %w", err)
	}
	// A row (the next step's answers, or NULLs) for a moved instance; none
	// for a version that moved meanwhile.
	prefill, n, err := scanPrefill(rows)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errMovedMeanwhile
	}
	return prefill, nil
}

func (s *Service) advanceSQLite(ctx context.Context, tx bun.Tx, inst *ProcessInstance, now time.Time, stepID int64, answersJSON string, nextStepID int64) (map[int64]string, error) {
	res, err := s.prepared.exec(ctx, tx, sqliteAdvance[0], *inst.CurrentStepID, string(inst.Status), inst.Version+1, now,
		LanguageOf(ctx), inst.ID, inst.Version)
	if err != nil {
		return nil, fmt.Errorf("move process instance: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, errors.Join(errMovedMeanwhile, err)
	}
	if _, err := s.prepared.exec(ctx, tx, sqliteAdvance[1], inst.ID, stepID, answersJSON); err != nil {
		return nil, fmt.Errorf("replace answers: %w", err)
	}
	if _, err := s.prepared.exec(ctx, tx, sqliteAdvance[2], inst.ID, stepID, now, answersJSON); err != nil {
		return nil, fmt.Errorf("store answers: %w", err)
	}
	rows, err := s.prepared.query(ctx, tx, sqliteAdvance[3], inst.ID, nextStepID)
	if err != nil {
		return nil, fmt.Errorf("load answers of the next step: %w", err)
	}
	prefill, _, err := scanPrefill(rows)
	return prefill, err
}

// scanPrefill reads rows of (person, answer) and how many there were; a
// row of NULLs is no answer.
func scanPrefill(rows *sql.Rows) (map[int64]string, int, error) {
	defer rows.Close()
	prefill := map[int64]string{}
	n := 0
	for rows.Next() {
		var person sql.NullInt64
		var value sql.NullString
		if err := rows.Scan(&person, &value); err != nil {
			return nil, 0, fmt.Errorf("load answers of the next step: %w", err)
		}
		n++
		if person.Valid && value.Valid {
			prefill[person.Int64] = value.String
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("load answers of the next step: %w", err)
	}
	return prefill, n, nil
}
