package report

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/enginetest"
)

// rowsWriter keeps an export's rows and, at each row, asks the database
// something, as another request would while a download is under way.
type rowsWriter struct {
	t      *testing.T
	db     *bun.DB
	header []string
	rows   [][]string
}

func (w *rowsWriter) Header(columns []string) error { w.header = columns; return nil }
func (w *rowsWriter) Close() error                  { return nil }
func (w *rowsWriter) Row(values []string) error {
	var n int
	// On SQLite this needs the only connection: an export holding it for
	// its whole length would make the pool guard fail this.
	if err := w.db.NewSelect().TableExpr("organisations").ColumnExpr("count(*)").Scan(context.Background(), &n); err != nil {
		w.t.Fatalf("a query during the export: %v", err)
	}
	w.rows = append(w.rows, values)
	return nil
}

// TestExportPeriodPages: an export read in pages writes the same rows as
// one read at once, none twice, and holds no connection between rows.
func TestExportPeriodPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		demo := enginetest.Seed(t, db)
		demo.Pay(demo.Commit(1, 3))
		demo.Commit(2)
		ctx := context.Background()
		for _, kind := range []ExportKind{ExportRegistrations, ExportPayments} {
			whole := &rowsWriter{t: t, db: db}
			if err := Of(demo.Svc).ExportPeriod(ctx, 1, 1, kind, whole); err != nil {
				t.Fatal(err)
			}
			exportPageRows = 1 // a page per row: every row crosses a page boundary
			paged := &rowsWriter{t: t, db: db}
			err := Of(demo.Svc).ExportPeriod(ctx, 1, 1, kind, paged)
			exportPageRows = defaultExportPageRows
			if err != nil {
				t.Fatal(err)
			}
			if len(whole.rows) < 2 || !slices.Equal(whole.header, paged.header) ||
				!slices.EqualFunc(whole.rows, paged.rows, slices.Equal[[]string]) {
				t.Fatalf("%s: paged export differs:\n%v\n%v", kind, whole.rows, paged.rows)
			}
		}
	})
}
