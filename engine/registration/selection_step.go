package registration

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
)

// Person selection, the first answer of every registration, in prepared
// statements like the question step (question_step.go): one read (the
// registration, the linked persons with their membership of the period,
// the organisation's membership types and who was registered before) and
// one write, on PostgreSQL a single statement without a transaction. The
// common case only: a first selection (state INIT) of persons with no
// earlier registration to carry answers from (prefill.go). A selection
// made again, or one that carries last season's answers, takes the
// transaction in Next.

// linkedPersonsColumn is the persons linked to the registration's user key
// in its organisation, each with their pending or active membership of the
// period (decodeLinkedPersons reads them).
const linkedPersonsColumn = `(SELECT coalesce({agg}({obj}(` + personJSON + `, 'membership', (SELECT m.status FROM memberships AS m
	WHERE m.person_id = x.id AND m.period_id = i.related_entity_id AND m.status IN ('` + string(engine.MembershipPending) + `', '` + string(engine.MembershipActive) + `')))), '[]')
	FROM persons AS x JOIN user_persons AS up ON up.person_id = x.id
	WHERE up.user_key = i.user_key AND up.organisation_id = i.organisation_id)`

// selectionStateSQL is the read of a person selection.
var selectionStateSQL = newStateStatements(linkedPersonsColumn,
	`(SELECT coalesce({agg}({obj}('id', t.id, 'organisationId', t.organisation_id, 'code', t.code, 'name', t.name,
		'minAge', t.min_age, 'maxAge', t.max_age)), '[]') FROM membership_types AS t WHERE t.organisation_id = i.organisation_id)`,
	`(SELECT coalesce({agg}(e.selected_persons), '[]') FROM process_instances AS e
		WHERE e.user_key = i.user_key AND e.organisation_id = i.organisation_id AND e.related_entity_id <> i.related_entity_id
		AND e.id <> i.id AND e.status IN ('`+string(engine.StateDone)+`', '`+string(engine.StateCompleted)+`'))`)

// selectQuery is a first selection's write on PostgreSQL in one statement:
// the version-checked move of the instance (as bumpVersion) and the
// selection stored (as storeSelection). The insert hangs off the move, so a
// version that moved meanwhile writes nothing and returns no row.
//
// $1 the selected ids (JSON), $2 the first question, $3 status, $4 new
// version, $5 now, $6 instance, $7 version read, $8 the member's language
// ("" keeps the registration's).
const selectQuery = `WITH moved AS (
	UPDATE process_instances SET selected_persons = $1, current_step_id = $2, status = $3, version = $4, updated_at = $5,
	language = COALESCE(NULLIF($8, ''), language)
	WHERE id = $6 AND version = $7 RETURNING id
)
INSERT INTO process_data (instance_id, person_id, data_key, data_value, created_at)
SELECT moved.id, s.value::bigint, 'selected', 'true', $5 FROM moved, json_array_elements_text($1::json) AS s
RETURNING instance_id`

// sqliteSelect is selectQuery on SQLite, in two statements in one
// transaction (the same $ numbering).
var sqliteSelect = [...]string{
	`UPDATE process_instances SET selected_persons = ?, current_step_id = ?, status = ?, version = ?, updated_at = ?,
	language = COALESCE(NULLIF(?, ''), language) WHERE id = ? AND version = ?`,
	`INSERT INTO process_data (instance_id, person_id, data_key, data_value, created_at)
	SELECT ?, CAST(value AS INTEGER), 'selected', 'true', ? FROM json_each(?)`,
}

// nextSelection answers a first person selection. done is false for a
// selection it leaves to Next's transaction: one made again, or one with
// answers to carry from an earlier registration.
func (s *Service) nextSelection(ctx context.Context, userKey string, in NextInput) (form *Form, done bool, err error) {
	var personsJSON, typesJSON, earlierJSON []byte
	inst, err := s.loadState(ctx, selectionStateSQL, userKey, in.ProcessID, &personsJSON, &typesJSON, &earlierJSON)
	if err != nil {
		return nil, true, err
	}
	if err := checkOpen(inst); err != nil {
		return nil, true, err
	}
	def, err := definition.Of(s.Service).Cache().Get(ctx, s.DB(), inst.DefinitionID)
	if err != nil {
		return nil, true, err
	}
	now := s.Clock()
	if _, err := checkNext(inst, def, in, now); err != nil {
		return nil, true, err
	}
	if inst.Status != engine.StateInit {
		return nil, false, nil
	}
	persons, statuses, err := decodeLinkedPersons(personsJSON)
	if err != nil {
		return nil, true, err
	}
	var types []engine.MembershipType
	if err := json.Unmarshal(typesJSON, &types); err != nil {
		return nil, true, fmt.Errorf("load registration: membership types: %w", err)
	}
	chosen, selected, err := choosePersons(inst, in, persons, statuses, types)
	if err != nil {
		return nil, true, err
	}
	if carries, err := registeredBefore(earlierJSON, chosen); err != nil || carries {
		return nil, err != nil, err
	}
	answers := map[int64]map[int64]string{}
	number := def.RouteFor(selected, inst.Period.StartDate, answers).Next(0)
	first := def.Steps[number-1].ID
	inst.SelectedPersons, inst.CurrentStepID, inst.Status = chosen, &first, engine.StateRunning
	if err := s.storeFirstSelection(ctx, inst, now); err != nil {
		return nil, true, err
	}
	return questionForm(inst, def, number, selected, answers), true, nil
}

// decodeLinkedPersons reads the linked persons of selectionStateSQL in the
// order linkedPersons gives them, with their statuses.
func decodeLinkedPersons(raw []byte) ([]engine.Person, map[int64]string, error) {
	var rows []statePerson
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, nil, fmt.Errorf("load registration: persons: %w", err)
	}
	persons := make([]engine.Person, len(rows))
	statuses := make(map[int64]string, len(rows))
	for i, r := range rows {
		p, err := r.person()
		if err != nil {
			return nil, nil, err
		}
		persons[i], statuses[r.ID] = p, r.status()
	}
	slices.SortFunc(persons, func(a, b engine.Person) int {
		if c := a.DateOfBirth.Compare(b.DateOfBirth); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return persons, statuses, nil
}

// registeredBefore reports whether any of ids was selected in one of the
// earlier registrations of selectionStateSQL (their selected persons, as
// JSON texts): answers may be carried over from there.
func registeredBefore(raw []byte, ids []int64) (bool, error) {
	var selections []string
	if err := json.Unmarshal(raw, &selections); err != nil {
		return false, fmt.Errorf("load registration: earlier registrations: %w", err)
	}
	for _, text := range selections {
		var earlier []int64
		if err := json.Unmarshal([]byte(text), &earlier); err != nil {
			return false, fmt.Errorf("load registration: earlier registrations: %w", err)
		}
		for _, id := range ids {
			if slices.Contains(earlier, id) {
				return true, nil
			}
		}
	}
	return false, nil
}

// storeFirstSelection writes inst's selection and first question (set by
// the caller) if its version is still the one read (moveInstance).
func (s *Service) storeFirstSelection(ctx context.Context, inst *engine.ProcessInstance, now time.Time) error {
	ids, err := json.Marshal(inst.SelectedPersons)
	if err != nil {
		return err
	}
	version, language := inst.Version, engine.LanguageOf(ctx)
	return s.moveInstance(ctx, s.DB(), inst, now,
		selectQuery, []any{string(ids), *inst.CurrentStepID, string(inst.Status), version + 1, now, inst.ID, version, language},
		sqliteSelect[:], [][]any{
			{string(ids), *inst.CurrentStepID, string(inst.Status), version + 1, now, language, inst.ID, version},
			{inst.ID, now, string(ids)},
		})
}

// moveInstance runs a write that moves inst to its next version if it is
// still at the version read, and marks it moved, on db (the pool or a
// transaction): on PostgreSQL one statement (pg), whose rows say it moved
// (none: the version moved meanwhile, and nothing was written); on SQLite
// the statements sqlite, in a transaction of their own if db is not one,
// the first of them the version-checked UPDATE. A version that moved is
// errMovedMeanwhile.
func (s *Service) moveInstance(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, now time.Time, pg string, pgArgs []any, sqlite []string, sqliteArgs [][]any) error {
	moved := false
	write := func(ctx context.Context, tx bun.Tx) error {
		moved = false
		for i, text := range sqlite {
			res, err := s.Prepared.Exec(ctx, tx, text, sqliteArgs[i]...)
			if err != nil {
				return fmt.Errorf("update process instance: %w", err)
			}
			if i == 0 {
				if n, err := res.RowsAffected(); err != nil || n != 1 {
					return err // nothing written: the version moved meanwhile
				}
				moved = true
			}
		}
		return nil
	}
	if db.Dialect().Name() == dialect.PG {
		rows, err := s.Prepared.Query(ctx, db, pg, pgArgs...)
		if err != nil {
			return fmt.Errorf("update process instance: %w", err)
		}
		moved = rows.Next()
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("update process instance: %w", err)
		}
	} else if tx, ok := db.(bun.Tx); ok {
		if err := write(ctx, tx); err != nil {
			return err
		}
	} else if err := s.Prepared.Prepare(ctx, sqlite...); err != nil {
		return err
	} else if err := engine.InTx(ctx, s.DB(), write); err != nil {
		return err
	}
	if !moved {
		return store.ErrMovedMeanwhile
	}
	store.MarkMoved(ctx, inst, now)
	return nil
}
