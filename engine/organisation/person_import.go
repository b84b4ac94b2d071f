package organisation

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
)

// The person import: an external system (or a club's spreadsheet) sends
// its members, keyed by its own person id, with the user keys that may
// register them. It is an idempotent upsert: a row that matches what is
// stored changes nothing, so the same file can be sent again and again.
// The whole call is one transaction: with any row in error nothing is
// written, and the report names each error by line and field.

// PersonRow is one person of an import.
type PersonRow struct {
	// Line is where the row came from: the CSV line, or the JSON index + 1.
	Line        int      `json:"-"`
	ExternalID  string   `json:"externalId"`
	FirstName   string   `json:"firstName"`
	LastName    string   `json:"lastName"`
	DateOfBirth string   `json:"dateOfBirth"` // YYYY-MM-DD
	Email       string   `json:"email"`
	UserKeys    []string `json:"userKeys"` // added to the person's links; none is removed (UnlinkPersons does that)
}

// RowOutcome is what an import did with a row.
type RowOutcome string

// Row outcomes.
const (
	RowCreated   RowOutcome = "created"
	RowUpdated   RowOutcome = "updated"
	RowUnchanged RowOutcome = "unchanged"
	RowError     RowOutcome = "error"
)

// RowReport is the outcome of one row.
type RowReport struct {
	Line       int                 `json:"line"`
	ExternalID string              `json:"externalId"`
	Outcome    RowOutcome          `json:"outcome"`
	PersonID   int64               `json:"personId,omitempty"`
	Errors     []engine.FieldError `json:"errors,omitempty"`
}

// ImportReport sums up an import.
type ImportReport struct {
	Created   int         `json:"created"`
	Updated   int         `json:"updated"`
	Unchanged int         `json:"unchanged"`
	Errors    int         `json:"errors"`
	Rows      []RowReport `json:"rows"`
}

// MaxImportRows bounds one import call.
const MaxImportRows = 20000

// PersonCSVColumns are the columns of the CSV format, in the JSON names;
// the first four are required.
var PersonCSVColumns = []string{"externalId", "firstName", "lastName", "dateOfBirth", "email", "userKeys"}

// ParsePersonCSV reads the CSV format: a header line naming the columns
// (any order, PersonCSVColumns), then one person per line; several user
// keys are separated by ";". A file that cannot be read as CSV at all is
// invalid; problems of single rows are left to ImportPersons.
func ParsePersonCSV(r io.Reader) ([]PersonRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil && !errors.Is(err, io.EOF) {
		var pe *csv.ParseError
		if !errors.As(err, &pe) {
			return nil, fmt.Errorf("read csv: %w", err)
		}
	}
	if err != nil {
		return nil, &engine.Error{Code: engine.CodeInvalid, Message: "The CSV has no header line.", Fields: []engine.FieldError{{Field: "line 1", Message: "a header line naming the columns is required"}}}
	}
	col := map[string]int{}
	var fields []engine.FieldError
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) // a spreadsheet's byte order mark
		if !slices.Contains(PersonCSVColumns, h) {
			fields = append(fields, engine.FieldError{Field: "line 1", Message: fmt.Sprintf("unknown column %q (columns: %s)", h, strings.Join(PersonCSVColumns, ", "))})
			continue
		}
		if _, dup := col[h]; dup {
			fields = append(fields, engine.FieldError{Field: "line 1", Message: fmt.Sprintf("column %q appears twice", h)})
		}
		col[h] = i
	}
	for _, req := range PersonCSVColumns[:4] {
		if _, ok := col[req]; !ok {
			fields = append(fields, engine.FieldError{Field: "line 1", Message: fmt.Sprintf("column %q is required", req)})
		}
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeInvalid, Message: "The CSV header is not valid.", Fields: fields}
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []PersonRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return nil, fmt.Errorf("read csv: %w", err) // the body itself failed (too large, cut off)
			}
			line := pe.Line
			return nil, &engine.Error{Code: engine.CodeInvalid, Message: "The CSV cannot be read.", Fields: []engine.FieldError{{Field: fmt.Sprintf("line %d", line), Message: "malformed CSV (quotes)"}}}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		line, _ := cr.FieldPos(0)
		if len(rows) >= MaxImportRows {
			return nil, engine.Errorf(engine.CodeInvalid, "At most %d persons per import.", MaxImportRows)
		}
		row := PersonRow{Line: line, ExternalID: get(rec, "externalId"), FirstName: get(rec, "firstName"),
			LastName: get(rec, "lastName"), DateOfBirth: get(rec, "dateOfBirth"), Email: get(rec, "email")}
		for _, k := range strings.Split(get(rec, "userKeys"), ";") {
			if k = strings.TrimSpace(k); k != "" {
				row.UserKeys = append(row.UserKeys, k)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// importable is a checked row.
type importable struct {
	row PersonRow
	dob time.Time
}

func checkPersonRow(r *PersonRow, validKey func(string) bool) (importable, []engine.FieldError) {
	var fields []engine.FieldError
	bad := func(field, msg string) { fields = append(fields, engine.FieldError{Field: field, Message: msg}) }
	r.ExternalID, r.FirstName, r.LastName, r.Email = strings.TrimSpace(r.ExternalID), strings.TrimSpace(r.FirstName), strings.TrimSpace(r.LastName), strings.TrimSpace(r.Email)
	// A file in another encoding than UTF-8 (Latin-1, Windows-1252) is
	// refused per row and field, never stored with its letters replaced:
	// invalid bytes as they come in a CSV, U+FFFD as a JSON decoder has
	// already replaced them with.
	for _, f := range []struct{ name, value string }{{"externalId", r.ExternalID}, {"firstName", r.FirstName},
		{"lastName", r.LastName}, {"dateOfBirth", r.DateOfBirth}, {"email", r.Email}} {
		if !utf8.ValidString(f.value) || strings.ContainsRune(f.value, utf8.RuneError) {
			bad(f.name, "is not valid UTF-8 text: save the file as UTF-8 and import it again")
		}
	}
	if len(fields) > 0 {
		return importable{row: *r}, fields
	}
	if r.ExternalID == "" || !engine.Printable(r.ExternalID, 100) {
		bad("externalId", "is required: at most 100 printable characters")
	}
	if r.FirstName == "" || !engine.Printable(r.FirstName, 100) {
		bad("firstName", "is required: at most 100 printable characters")
	}
	if r.LastName == "" || !engine.Printable(r.LastName, 100) {
		bad("lastName", "is required: at most 100 printable characters")
	}
	dob, err := time.Parse(time.DateOnly, strings.TrimSpace(r.DateOfBirth))
	if err != nil || dob.Year() < 1900 || dob.After(clock.Now()) {
		bad("dateOfBirth", "must be a date as YYYY-MM-DD, not in the future")
	}
	if r.Email != "" && (!engine.Printable(r.Email, 254) || !strings.Contains(r.Email, "@")) {
		bad("email", "must be an e-mail address")
	}
	for i, k := range r.UserKeys {
		if !validKey(k) {
			bad(fmt.Sprintf("userKeys[%d]", i), "must be 1 to 200 letters, digits or . _ @ + -")
		}
	}
	return importable{row: *r, dob: dob}, fields
}

// ImportPersons upserts persons of the organisation ctx is scoped to (or
// orgID without a scope) and adds their user-key links, in one
// transaction. validKey decides which user keys are acceptable (the
// portal's hash-link rule). With any row in error nothing is written: the
// report then lists every error and the result is a validation error
// carrying it.
func (s *Service) ImportPersons(ctx context.Context, orgID int64, rows []PersonRow, validKey func(string) bool) (rep *ImportReport, err error) {
	return s.importPersons(ctx, orgID, rows, validKey, PersonImportOptions{})
}

// PersonImportOptions are the staff pages' ways of importing.
type PersonImportOptions struct {
	// DryRun reports what the import would do and writes nothing: the
	// preview before applying.
	DryRun bool
	// Actor, when set, is the staff member applying it: the import's
	// counts are written to the audit log in its transaction.
	Actor *engine.Actor
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// StaffImportPersons is ImportPersons for the staff pages: a preview
// (DryRun) computed by the same transaction rolled back, or the import
// applied with its audit entry.
func (s *Service) StaffImportPersons(ctx context.Context, orgID int64, rows []PersonRow, validKey func(string) bool, opt PersonImportOptions) (*ImportReport, error) {
	return s.importPersons(ctx, orgID, rows, validKey, opt)
}

func (s *Service) importPersons(ctx context.Context, orgID int64, rows []PersonRow, validKey func(string) bool, opt PersonImportOptions) (rep *ImportReport, err error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	if len(rows) > MaxImportRows {
		return nil, engine.Errorf(engine.CodeInvalid, "At most %d persons per import.", MaxImportRows)
	}
	rep = &ImportReport{Rows: make([]RowReport, len(rows))}
	checked := make([]importable, len(rows))
	seen := map[string]int{}
	for i := range rows {
		if rows[i].Line == 0 {
			rows[i].Line = i + 1
		}
		imp, fields := checkPersonRow(&rows[i], validKey)
		if first, dup := seen[imp.row.ExternalID]; dup && imp.row.ExternalID != "" {
			fields = append(fields, engine.FieldError{Field: "externalId", Message: fmt.Sprintf("appears again (first on line %d)", first)})
		} else {
			seen[imp.row.ExternalID] = imp.row.Line
		}
		checked[i] = imp
		rep.Rows[i] = RowReport{Line: imp.row.Line, ExternalID: imp.row.ExternalID}
		if len(fields) > 0 {
			rep.Rows[i].Outcome, rep.Rows[i].Errors = RowError, fields
			rep.Errors++
		}
	}
	if rep.Errors > 0 {
		// Nothing is written: every row without an error is reported
		// unchanged (an outcome the API's schema names), never blank.
		for i := range rep.Rows {
			if rep.Rows[i].Outcome == "" {
				rep.Rows[i].Outcome = RowUnchanged
				rep.Unchanged++
			}
		}
		return rep, &engine.Error{Code: engine.CodeValidation, Message: fmt.Sprintf("%d of %d rows have errors; nothing was imported.", rep.Errors, len(rows))}
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := engine.LoadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		if err := upsertPersons(ctx, tx, orgID, checked, rep, s.Clock()); err != nil {
			return err
		}
		if opt.DryRun {
			return errDryRun
		}
		if opt.Actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *opt.Actor, engine.AuditEntry{OrganisationID: orgID, Action: "persons.import", TargetType: "organisation",
			TargetID: fmt.Sprint(orgID), After: map[string]int{"rows": len(rows), "created": rep.Created, "updated": rep.Updated, "unchanged": rep.Unchanged}})
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, err
	}
	return rep, nil
}

// importChunk bounds the parameters of one statement (SQLite allows 32766).
const importChunk = 500

func upsertPersons(ctx context.Context, tx bun.Tx, orgID int64, rows []importable, rep *ImportReport, now time.Time) error {
	existing := make(map[string]*engine.Person, len(rows))
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.row.ExternalID
	}
	for chunk := range slices.Chunk(ids, importChunk) {
		var found []engine.Person
		if err := tx.NewSelect().Model(&found).Where("organisation_id = ? AND external_id IN (?)", orgID, bun.List(chunk)).Scan(ctx); err != nil {
			return fmt.Errorf("load persons: %w", err)
		}
		for i := range found {
			existing[*found[i].ExternalID] = &found[i]
		}
	}
	var fresh []engine.Person
	var freshAt []int
	for i, r := range rows {
		p := existing[r.row.ExternalID]
		if p == nil {
			ext := r.row.ExternalID
			fresh = append(fresh, engine.Person{OrganisationID: orgID, ExternalID: &ext, FirstName: r.row.FirstName,
				LastName: r.row.LastName, DateOfBirth: r.dob, Email: r.row.Email, CreatedAt: now})
			freshAt = append(freshAt, i)
			continue
		}
		rep.Rows[i].PersonID = p.ID
		if p.FirstName == r.row.FirstName && p.LastName == r.row.LastName && p.Email == r.row.Email && p.DateOfBirth.Format(time.DateOnly) == r.dob.Format(time.DateOnly) {
			rep.Rows[i].Outcome = RowUnchanged
			continue
		}
		if _, err := tx.NewUpdate().Model((*engine.Person)(nil)).Set("first_name = ?", r.row.FirstName).Set("last_name = ?", r.row.LastName).
			Set("email = ?", r.row.Email).Set("date_of_birth = ?", r.dob).Where("id = ?", p.ID).Exec(ctx); err != nil {
			return fmt.Errorf("update person: %w", err)
		}
		rep.Rows[i].Outcome = RowUpdated
	}
	for start := 0; start < len(fresh); start += importChunk {
		part := fresh[start:min(start+importChunk, len(fresh))]
		if _, err := tx.NewInsert().Model(&part).Exec(ctx); err != nil {
			return fmt.Errorf("insert persons: %w", err)
		}
		for j := range part {
			i := freshAt[start+j]
			rep.Rows[i].PersonID, rep.Rows[i].Outcome = part[j].ID, RowCreated
		}
	}
	linked, err := addLinks(ctx, tx, orgID, rows, rep)
	if err != nil {
		return err
	}
	for i := range rep.Rows {
		if rep.Rows[i].Outcome == RowUnchanged && linked[i] {
			rep.Rows[i].Outcome = RowUpdated
		}
		switch rep.Rows[i].Outcome {
		case RowCreated:
			rep.Created++
		case RowUpdated:
			rep.Updated++
		case RowUnchanged:
			rep.Unchanged++
		}
	}
	return nil
}

// addLinks adds the rows' user-key links that do not exist yet and says
// which rows gained one.
func addLinks(ctx context.Context, tx bun.Tx, orgID int64, rows []importable, rep *ImportReport) (map[int]bool, error) {
	personIDs := make([]int64, 0, len(rows))
	for i := range rows {
		personIDs = append(personIDs, rep.Rows[i].PersonID)
	}
	have := map[engine.UserPerson]bool{}
	for chunk := range slices.Chunk(personIDs, importChunk) {
		var links []engine.UserPerson
		if err := tx.NewSelect().Model(&links).Where("person_id IN (?)", bun.List(chunk)).Scan(ctx); err != nil {
			return nil, fmt.Errorf("load links: %w", err)
		}
		for _, l := range links {
			have[engine.UserPerson{UserKey: l.UserKey, PersonID: l.PersonID}] = true
		}
	}
	var add []engine.UserPerson
	gained := map[int]bool{}
	for i, r := range rows {
		for _, k := range r.row.UserKeys {
			key := engine.UserPerson{UserKey: k, PersonID: rep.Rows[i].PersonID}
			if have[key] {
				continue
			}
			have[key] = true
			add = append(add, engine.UserPerson{UserKey: k, PersonID: rep.Rows[i].PersonID, OrganisationID: orgID})
			gained[i] = true
		}
	}
	for start := 0; start < len(add); start += importChunk {
		part := add[start:min(start+importChunk, len(add))]
		if _, err := tx.NewInsert().Model(&part).Exec(ctx); err != nil {
			return nil, fmt.Errorf("insert links: %w", err)
		}
	}
	return gained, nil
}

// UnlinkPersons removes user-key links of the organisation's persons,
// named by external id; links that do not exist are ignored (idempotent).
// It reports how many links it removed; an unknown external id is a
// validation error and removes nothing.
func (s *Service) UnlinkPersons(ctx context.Context, orgID int64, links []PersonLink) (removed int, err error) {
	return s.unlinkPersons(ctx, nil, orgID, links)
}

// StaffUnlinkPersons is UnlinkPersons by a staff member or an API key,
// audited in its transaction.
func (s *Service) StaffUnlinkPersons(ctx context.Context, actor engine.Actor, orgID int64, links []PersonLink) (int, error) {
	return s.unlinkPersons(ctx, &actor, orgID, links)
}

func (s *Service) unlinkPersons(ctx context.Context, actor *engine.Actor, orgID int64, links []PersonLink) (removed int, err error) {
	if !engine.InScope(ctx, orgID) {
		return 0, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		var fields []engine.FieldError
		for i, l := range links {
			var p engine.Person
			err := tx.NewSelect().Model(&p).Where("organisation_id = ? AND external_id = ?", orgID, l.ExternalID).Scan(ctx)
			if err != nil {
				if engine.ErrorCode(engine.NotFoundOr(err, "person")) == engine.CodeNotFound {
					fields = append(fields, engine.FieldError{Field: fmt.Sprintf("[%d].externalId", i), Message: "no person has this external id"})
					continue
				}
				return fmt.Errorf("load person: %w", err)
			}
			res, err := tx.NewDelete().Model((*engine.UserPerson)(nil)).Where("person_id = ? AND user_key = ?", p.ID, l.UserKey).Exec(ctx)
			if err != nil {
				return fmt.Errorf("unlink: %w", err)
			}
			if n, err := res.RowsAffected(); err == nil {
				removed += int(n)
			}
		}
		if len(fields) > 0 {
			removed = 0
			return &engine.Error{Code: engine.CodeValidation, Message: "Some links name unknown persons; nothing was unlinked.", Fields: fields}
		}
		if actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "persons.unlink", TargetType: "organisation",
			TargetID: fmt.Sprint(orgID), After: map[string]int{"links": len(links), "removed": removed}})
	})
	return removed, err
}

// PersonLink names one user-key link by the person's external id.
type PersonLink struct {
	ExternalID string `json:"externalId"`
	UserKey    string `json:"userKey"`
}
