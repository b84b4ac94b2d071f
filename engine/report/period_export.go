package report

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"portal/engine"
	"portal/engine/organisation"
)

// The export of a period's registrations and payments, for a club's own
// bookkeeping: streamed row by row from the database to a writer, so that
// a period of thousands of members is never held in memory. The HTTP
// layer writes CSV or JSON from it, the command line too.

// ExportKind names what an export holds.
type ExportKind string

// Export kinds.
const (
	ExportRegistrations ExportKind = "registrations" // one row per membership
	ExportPayments      ExportKind = "payments"      // one row per payment attempt
)

// ExportColumns are the columns of each export kind, in order.
var ExportColumns = map[ExportKind][]string{
	ExportRegistrations: {"membershipId", "registrationId", "orderId", "userKey", "personExternalId", "firstName", "lastName", "dateOfBirth",
		"email", "membershipType", "memberType", "membershipStatus", "orderStatus", "orderTotalMinor", "currency", "committedAt", "paidAt"},
	ExportPayments: {"paymentId", "orderId", "userKey", "reference", "provider", "amountMinor", "currency", "status", "transactionId",
		"createdAt", "updatedAt"},
}

// ExportWriter receives an export: the header once, then each row, then
// Close (by the caller, also after an error).
type ExportWriter interface {
	Header(columns []string) error
	Row(values []string) error
	Close() error
}

type registrationRow struct {
	MembershipID   int64          `bun:"membership_id"`
	RegistrationID sql.NullInt64  `bun:"registration_id"`
	OrderID        sql.NullInt64  `bun:"order_id"`
	UserKey        sql.NullString `bun:"user_key"`
	ExternalID     sql.NullString `bun:"external_id"`
	FirstName      string         `bun:"first_name"`
	LastName       string         `bun:"last_name"`
	DateOfBirth    time.Time      `bun:"date_of_birth"`
	Email          string         `bun:"email"`
	TypeCode       string         `bun:"type_code"`
	MemberType     string         `bun:"member_type"`
	Status         string         `bun:"status"`
	OrderStatus    sql.NullString `bun:"order_status"`
	TotalMinor     sql.NullInt64  `bun:"total_minor"`
	Currency       sql.NullString `bun:"currency"`
	OrderedAt      *time.Time     `bun:"ordered_at"`
	PaidAt         *time.Time     `bun:"paid_at"`
}

func (r *registrationRow) values() []string {
	return []string{strconv.FormatInt(r.MembershipID, 10), nullInt(r.RegistrationID), nullInt(r.OrderID), r.UserKey.String, r.ExternalID.String,
		r.FirstName, r.LastName, r.DateOfBirth.Format(time.DateOnly), r.Email, r.TypeCode, r.MemberType, r.Status, r.OrderStatus.String,
		nullInt(r.TotalMinor), r.Currency.String, timestamp(r.OrderedAt), timestamp(r.PaidAt)}
}

type paymentRow struct {
	ID            int64          `bun:"id"`
	OrderID       int64          `bun:"order_id"`
	UserKey       string         `bun:"user_key"`
	Reference     string         `bun:"reference"`
	Provider      string         `bun:"provider"`
	AmountMinor   int64          `bun:"amount_minor"`
	Currency      string         `bun:"currency"`
	Status        string         `bun:"status"`
	TransactionID sql.NullString `bun:"transaction_id"`
	CreatedAt     time.Time      `bun:"created_at"`
	UpdatedAt     time.Time      `bun:"updated_at"`
}

func (r *paymentRow) values() []string {
	return []string{strconv.FormatInt(r.ID, 10), strconv.FormatInt(r.OrderID, 10), r.UserKey, r.Reference, r.Provider,
		strconv.FormatInt(r.AmountMinor, 10), r.Currency, r.Status, r.TransactionID.String, timestamp(&r.CreatedAt), timestamp(&r.UpdatedAt)}
}

func nullInt(n sql.NullInt64) string {
	if !n.Valid {
		return ""
	}
	return strconv.FormatInt(n.Int64, 10)
}

func timestamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// ExportPeriod streams an export of a period of orgID to w: the header,
// then the rows by id. Another organisation's period is not found (before
// anything is written); an unknown kind is invalid.
func (s *Service) ExportPeriod(ctx context.Context, orgID, periodID int64, kind ExportKind, w ExportWriter) (err error) {
	columns, ok := ExportColumns[kind]
	if !ok {
		return engine.Errorf(engine.CodeNotFound, "unknown export %q: registrations or payments", kind)
	}
	if _, err := organisation.OrgPeriod(ctx, s.DB(), orgID, periodID); err != nil {
		return err
	}
	// The first page is read before the header, so that a failing query
	// answers an error rather than a cut file.
	page, last, err := s.readExportPage(ctx, kind, periodID, 0)
	if err != nil {
		return err
	}
	if err := w.Header(columns); err != nil {
		return err
	}
	for {
		for _, values := range page {
			if err := w.Row(values); err != nil {
				return err
			}
		}
		if len(page) < exportPageRows {
			return nil
		}
		if page, last, err = s.readExportPage(ctx, kind, periodID, last); err != nil {
			return err
		}
	}
}

// exportPageRows is how many rows one query of an export reads. The
// export goes page by page (by id, after the last one written) so that a
// slow download never holds a connection for its whole length: on SQLite
// that connection is the only one, and every other request would wait.
// Each page is read at its own moment; rows are ordered by id, so none is
// written twice.
var exportPageRows = defaultExportPageRows

const defaultExportPageRows = 500

// readExportPage reads the rows of an export after the id after, as the
// export's values, and the last id read.
func (s *Service) readExportPage(ctx context.Context, kind ExportKind, periodID, after int64) ([][]string, int64, error) {
	q := s.DB().NewSelect().Limit(int64(exportPageRows))
	var out [][]string
	var last int64
	switch kind {
	case ExportRegistrations:
		var rows []registrationRow
		err := q.TableExpr("memberships AS m").
			ColumnExpr("m.id AS membership_id, m.process_instance_id AS registration_id, o.id AS order_id, o.user_key").
			ColumnExpr("p.external_id, p.first_name, p.last_name, p.date_of_birth, p.email, t.code AS type_code, m.member_type, m.status").
			ColumnExpr("o.status AS order_status, o.total_minor, o.currency, o.created_at AS ordered_at, o.paid_at").
			Join("JOIN persons AS p ON p.id = m.person_id").
			Join("JOIN membership_types AS t ON t.id = m.membership_type_id").
			// A cancelled membership's order was cancelled with it (a reset):
			// the registration's live order is another commit's.
			Join("LEFT JOIN orders AS o ON o.process_instance_id = m.process_instance_id AND o.status <> ? AND m.status <> ?", engine.OrderCancelled, engine.MembershipCancelled).
			Where("m.period_id = ?", periodID).Where("m.id > ?", after).OrderExpr("m.id").Scan(ctx, &rows)
		if err != nil {
			return nil, 0, fmt.Errorf("export %s: %w", kind, err)
		}
		for i := range rows {
			out, last = append(out, rows[i].values()), rows[i].MembershipID
		}
	case ExportPayments:
		var rows []paymentRow
		err := q.TableExpr("payments AS pay").
			ColumnExpr("pay.id, pay.order_id, o.user_key, pay.reference, pay.provider, pay.amount_minor, pay.currency, pay.status").
			ColumnExpr("pay.transaction_id, pay.created_at, pay.updated_at").
			Join("JOIN orders AS o ON o.id = pay.order_id").
			Where("o.period_id = ?", periodID).Where("pay.id > ?", after).OrderExpr("pay.id").Scan(ctx, &rows)
		if err != nil {
			return nil, 0, fmt.Errorf("export %s: %w", kind, err)
		}
		for i := range rows {
			out, last = append(out, rows[i].values()), rows[i].ID
		}
	}
	return out, last, nil
}

// CSVExport writes an export as CSV (RFC 4180, a header line), flushing
// every few hundred rows so that a large export leaves as it is read.
func CSVExport(w io.Writer) ExportWriter { return &csvExport{w: csv.NewWriter(w)} }

type csvExport struct {
	w *csv.Writer
	n int
}

func (e *csvExport) Header(columns []string) error { return e.w.Write(columns) }

func (e *csvExport) Row(values []string) error {
	safe := make([]string, len(values))
	for i, v := range values {
		safe[i] = CSVCell(v)
	}
	if err := e.w.Write(safe); err != nil {
		return err
	}
	if e.n++; e.n%200 == 0 {
		e.w.Flush()
	}
	return e.w.Error()
}

// Close writes what is buffered.
func (e *csvExport) Close() error { e.w.Flush(); return e.w.Error() }

// JSONExport writes an export as a JSON array of objects keyed by column,
// every value a string ("" for none), one object per line.
func JSONExport(w io.Writer) ExportWriter { return &jsonExport{w: bufio.NewWriter(w)} }

type jsonExport struct {
	w       *bufio.Writer
	columns []string
	n       int
}

func (e *jsonExport) Header(columns []string) error {
	e.columns = columns
	_, err := e.w.WriteString("[")
	return err
}

func (e *jsonExport) Row(values []string) error {
	sep := ",\n"
	if e.n == 0 {
		sep = "\n"
	}
	e.n++
	e.w.WriteString(sep + "{")
	for i, c := range e.columns {
		if i > 0 {
			e.w.WriteString(",")
		}
		k, _ := json.Marshal(c)
		v, _ := json.Marshal(values[i])
		e.w.Write(k)
		e.w.WriteString(":")
		e.w.Write(v)
	}
	_, err := e.w.WriteString("}")
	return err
}

// Close ends the array and writes what is buffered.
func (e *jsonExport) Close() error {
	if e.columns == nil {
		return e.w.Flush() // nothing began
	}
	e.w.WriteString("\n]\n")
	return e.w.Flush()
}

// CSVCell keeps a spreadsheet from reading a cell as a formula: a value
// that begins with = + - @ or a tab or carriage return is prefixed with an
// apostrophe, unless it is a plain number (a negative amount stays one).
// Names and e-mail addresses come from members and external systems.
func CSVCell(v string) string {
	if v == "" || !strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil && v[0] == '-' {
		return v
	}
	return "'" + v
}
