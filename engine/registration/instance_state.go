package registration

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/internal/store"
)

// A registration's state in one prepared statement: the instance of a user
// key with its period and whether its definition is still active, and after
// them what the request needs besides (the selected persons and the saved
// answers for a question step, the linked persons and the membership types
// for person selection), as JSON aggregates. One statement is one round
// trip, and prepared (engine/prepared.go) it is parsed and planned once per
// connection instead of on every request.

// stateSQL writes the state statement with extra columns for a dialect,
// reading from from (stateByInstance, formStateFrom). Texts are written
// once for both: {agg}, {obj} and {arr} are the JSON aggregate, object and
// array functions, {selected} the instance's selected person ids as a
// table s with one row per id, {sid} the id of a row of it (a join, not
// IN: SQLite builds an index for an IN subquery on every run, whose pages
// its allocator maps and unmaps each time); {id} and {key} are the
// statement's two parameters, an id and the user key.
func stateSQL(pg bool, from string, extra ...string) string {
	text := `SELECT i.id, i.definition_id, i.definition_key, i.current_step_id, i.status,
	i.start_time, i.end_time, i.related_entity_type, i.related_entity_id, i.organisation_id, i.user_key,
	i.selected_persons, i.version, i.updated_at, i.language,
	p.id, p.organisation_id, p.name, p.name_texts, p.start_date, p.end_date, p.status, p.currency, p.definition_key,
	d.active, ` + strings.Join(extra, ", ") + from
	words := strings.NewReplacer("{agg}", "json_agg", "{obj}", "json_build_object", "{arr}", "json_build_array",
		"{selected}", "json_array_elements_text(i.selected_persons::json) AS s", "{sid}", "s.value::bigint",
		"{id}", "$1", "{key}", "$2")
	if !pg {
		words = strings.NewReplacer("{agg}", "json_group_array", "{obj}", "json_object", "{arr}", "json_array",
			"{selected}", "json_each(i.selected_persons) AS s", "{sid}", "s.value",
			"{id}", "?", "{key}", "?")
	}
	return words.Replace(text)
}

// stateByInstance is where a state statement reads one instance: {id} is
// the instance's id.
const stateByInstance = `
FROM process_instances AS i
JOIN membership_periods AS p ON p.id = i.related_entity_id
JOIN process_definitions AS d ON d.id = i.definition_id
WHERE i.id = {id} AND i.user_key = {key}`

// personJSON is a person as a state statement writes it ({obj} of the
// columns statePerson reads), status columns left to the caller.
const personJSON = `'id', x.id, 'organisationId', x.organisation_id, 'firstName', x.first_name, 'lastName', x.last_name,
	'dateOfBirth', x.date_of_birth, 'email', x.email, 'externalId', x.external_id`

// stateStatements are a state statement's text on each database.
type stateStatements struct{ pg, sqlite string }

// newStateStatements are the state statements of one instance
// (stateByInstance) with extra columns.
func newStateStatements(extra ...string) stateStatements {
	return newStateStatementsFrom(stateByInstance, extra...)
}

func newStateStatementsFrom(from string, extra ...string) stateStatements {
	return stateStatements{pg: stateSQL(true, from, extra...), sqlite: stateSQL(false, from, extra...)}
}

// loadState runs the state statement of st for the registration processID
// of userKey, scanning its extra columns into extra; not found as
// loadInstance has it (another organisation's instance reads as none).
func (s *Service) loadState(ctx context.Context, st stateStatements, userKey, processID string, extra ...any) (*engine.ProcessInstance, error) {
	id, err := store.ParseProcessID(processID)
	if err != nil {
		return nil, err
	}
	inst, found, err := s.readState(ctx, st, id, userKey, extra...)
	if err != nil {
		return nil, err
	}
	if !found || !engine.InScope(ctx, inst.OrganisationID) { // another organisation's instance reads as none (engine/organisations.go)
		return nil, engine.Errorf(engine.CodeNotFound, "process instance not found")
	}
	return inst, nil
}

// readState runs the state statement of st with id and userKey, scanning
// its extra columns into extra; found is false when it returns no row.
// The caller checks the organisation's scope.
func (s *Service) readState(ctx context.Context, st stateStatements, id int64, userKey string, extra ...any) (inst *engine.ProcessInstance, found bool, err error) {
	query := st.pg
	if s.DB().Dialect().Name() != dialect.PG {
		query = st.sqlite
	}
	rows, err := s.Prepared.Query(ctx, s.DB(), query, id, userKey)
	if err != nil {
		return nil, false, fmt.Errorf("load registration: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, false, fmt.Errorf("load registration: %w", err)
		}
		return nil, false, nil
	}
	inst = &engine.ProcessInstance{Period: &engine.MembershipPeriod{}, Definition: &engine.ProcessDefinition{}}
	p := inst.Period
	var selectedJSON []byte
	var endTime sql.Null[storedTime]
	if err := rows.Scan(append([]any{&inst.ID, &inst.DefinitionID, &inst.DefinitionKey, &inst.CurrentStepID, &inst.Status,
		(*storedTime)(&inst.StartTime), &endTime, &inst.RelatedEntityType, &inst.RelatedEntityID, &inst.OrganisationID, &inst.UserKey,
		&selectedJSON, &inst.Version, (*storedTime)(&inst.UpdatedAt), &inst.Language,
		&p.ID, &p.OrganisationID, &p.Name, &p.NameTexts, (*storedTime)(&p.StartDate), (*storedTime)(&p.EndDate), &p.Status, &p.Currency, &p.DefinitionKey,
		&inst.Definition.Active}, extra...)...); err != nil {
		return nil, false, fmt.Errorf("load registration: %w", err)
	}
	if err := rows.Close(); err != nil {
		return nil, false, fmt.Errorf("load registration: %w", err)
	}
	inst.Definition.ID = inst.DefinitionID
	if endTime.Valid {
		t := time.Time(endTime.V)
		inst.EndTime = &t
	}
	if err := json.Unmarshal(selectedJSON, &inst.SelectedPersons); err != nil {
		return nil, false, fmt.Errorf("load registration: selected persons: %w", err)
	}
	p.Localize(engine.LanguageOf(ctx)) // the member's pages name the period in their language
	return inst, true, nil
}

// storedTime scans a time or date as either database gives it: a
// time.Time (PostgreSQL; SQLite for columns declared DATE or TIMESTAMP) or
// its text.
type storedTime time.Time

func (t *storedTime) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*t = storedTime(v)
		return nil
	case []byte:
		return t.parse(string(v))
	case string:
		return t.parse(v)
	}
	return fmt.Errorf("cannot read %T as a time", src)
}

// parse reads the text forms the databases write: a date, SQLite's
// "2006-01-02 15:04:05.999999999-07:00" or RFC 3339.
func (t *storedTime) parse(text string) error {
	for _, layout := range []string{time.DateOnly, "2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano} {
		if v, err := time.Parse(layout, text); err == nil {
			*t = storedTime(v)
			return nil
		}
	}
	return fmt.Errorf("cannot read %q as a time", text)
}

// statePerson is a person as a state statement writes it (personJSON); a
// step needs no more of a person than these (not when the record was
// made). Membership is read with the linked persons only.
type statePerson struct {
	ID             int64                    `json:"id"`
	OrganisationID int64                    `json:"organisationId"`
	FirstName      string                   `json:"firstName"`
	LastName       string                   `json:"lastName"`
	DateOfBirth    string                   `json:"dateOfBirth"` // a date, on SQLite with a time of day after it
	Email          string                   `json:"email"`
	ExternalID     *string                  `json:"externalId"`
	Membership     *engine.MembershipStatus `json:"membership"` // selection only: the person's pending or active membership of the period
}

// person is r as a Person.
func (r statePerson) person() (engine.Person, error) {
	born, err := time.Parse(time.DateOnly, r.DateOfBirth[:min(len(r.DateOfBirth), len(time.DateOnly))])
	if err != nil {
		return engine.Person{}, fmt.Errorf("load registration: date of birth of person %d: %w", r.ID, err)
	}
	return engine.Person{ID: r.ID, OrganisationID: r.OrganisationID, FirstName: r.FirstName, LastName: r.LastName,
		DateOfBirth: born, Email: r.Email, ExternalID: r.ExternalID}, nil
}

// status is the person's status for the period, as membershipStatuses
// gives it.
func (r statePerson) status() string {
	switch {
	case r.Membership == nil:
		return engine.PersonAvailable
	case *r.Membership == engine.MembershipActive:
		return engine.PersonRegistered
	}
	return engine.PersonPendingPayment
}
