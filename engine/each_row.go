package engine

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// EachRow runs query (bun's ? placeholders) on db and calls each for
// every row, which scans it into plain variables. For reads of thousands
// of rows that are folded into a few figures (the year-end report, the
// season overview): bun's scan into a slice of structs costs reflection
// and a growing slice per row, which for a club of 5,000 registrations
// was most of those pages' time (issue 42).
func EachRow(ctx context.Context, db bun.IDB, each func(*sql.Rows) error, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// Date scans a DATE column in EachRow as either driver gives it: a
// time.Time (SQLite) or the text "2006-01-02" (bun's PostgreSQL driver),
// as midnight UTC of that day.
type Date struct{ time.Time }

// Scan implements sql.Scanner.
func (d *Date) Scan(v any) error {
	switch v := v.(type) {
	case time.Time:
		d.Time = time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)
		return nil
	case string:
		return d.parse(v)
	case []byte:
		return d.parse(string(v))
	}
	return fmt.Errorf("scan %T as a date", v)
}

func (d *Date) parse(s string) error {
	t, err := time.Parse(time.DateOnly, s[:min(len(s), len(time.DateOnly))])
	if err != nil {
		return fmt.Errorf("scan %q as a date: %w", s, err)
	}
	d.Time = t
	return nil
}
