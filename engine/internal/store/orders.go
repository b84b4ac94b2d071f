package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Store functions for orders (orders) and their frozen lines (order_lines).

// WithLines loads an order's lines in line order.
func WithLines(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no ASC") })
}

// LoadOrder loads an order by id, with its lines.
func LoadOrder(ctx context.Context, db bun.IDB, orderID int64) (*engine.Order, error) {
	order := new(engine.Order)
	if err := WithLines(db.NewSelect().Model(order).Where("?TableAlias.id = ?", orderID)).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "order")
	}
	return order, nil
}

// LiveOrder loads the instance's order that is not cancelled, with its lines.
func LiveOrder(ctx context.Context, db bun.IDB, instanceID int64) (*engine.Order, error) {
	order := new(engine.Order)
	err := WithLines(db.NewSelect().Model(order).
		Where("?TableAlias.process_instance_id = ? AND ?TableAlias.status <> ?", instanceID, engine.OrderCancelled)).Scan(ctx)
	if err != nil {
		return nil, engine.NotFoundOr(err, "order")
	}
	return order, nil
}

// InsertOrder stores a new order and its lines (numbered from 1 as given).
// A unique violation means the instance has a live order already: a conflict.
func InsertOrder(ctx context.Context, db bun.IDB, order *engine.Order) error {
	if order.PayReference == "" {
		// Random rather than derived from the id: the pay link must not be guessable.
		order.PayReference = engine.NewReference("PO-")
	}
	if _, err := db.NewInsert().Model(order).Exec(ctx); err != nil {
		if IsUniqueViolation(err) {
			return engine.Errorf(engine.CodeConflict, "this registration was already submitted")
		}
		return fmt.Errorf("create order: %w", err)
	}
	if len(order.Lines) == 0 {
		return nil
	}
	for i := range order.Lines {
		order.Lines[i].OrderID = order.ID
	}
	if _, err := db.NewInsert().Model(&order.Lines).Exec(ctx); err != nil {
		return fmt.Errorf("create order lines: %w", err)
	}
	return nil
}

// CancelUnpaidOrders cancels the unpaid order of an instance.
func CancelUnpaidOrders(ctx context.Context, db bun.IDB, instanceID int64) error {
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderCancelled).
		Where("process_instance_id = ? AND status = ?", instanceID, engine.OrderUnpaid).Exec(ctx); err != nil {
		return fmt.Errorf("cancel order: %w", err)
	}
	return nil
}

// MarkOrderPaid marks an unpaid order paid. Anything but exactly one row
// changed is a defect: the caller holds the instance lock.
func MarkOrderPaid(ctx context.Context, db bun.IDB, orderID int64, now time.Time) error {
	r, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderPaid).Set("paid_at = ?", now).
		Where("id = ? AND status = ?", orderID, engine.OrderUnpaid).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark order paid: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("mark order %d paid: %d rows changed", orderID, n)
	}
	return nil
}

// MarkOrderUnpaid is markOrderPaid undone, for an order whose money went
// back (a returned direct debit): unpaid again, and no longer due for
// collection until the member confirms it again on the pay link.
// Anything but exactly one row changed is a defect: the caller holds the
// instance lock and read the order paid.
func MarkOrderUnpaid(ctx context.Context, db bun.IDB, orderID int64) error {
	r, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderUnpaid).Set("paid_at = NULL").Set("debit_due_on = NULL").
		Where("id = ? AND status = ?", orderID, engine.OrderPaid).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark order unpaid: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("mark order %d unpaid: %d rows changed", orderID, n)
	}
	return nil
}

// AddOrderLine appends a line to an order (numbered after its last) and
// raises the order's total by its amount, so that the next payment
// attempt, made from the total, asks for it too.
func AddOrderLine(ctx context.Context, db bun.IDB, order *engine.Order, line engine.OrderLine) error {
	var last int
	if err := db.NewSelect().Model((*engine.OrderLine)(nil)).ColumnExpr("COALESCE(MAX(line_no), 0)").
		Where("order_id = ?", order.ID).Scan(ctx, &last); err != nil {
		return fmt.Errorf("number the order line: %w", err)
	}
	line.OrderID, line.LineNo = order.ID, last+1
	if _, err := db.NewInsert().Model(&line).Exec(ctx); err != nil {
		return fmt.Errorf("add order line: %w", err)
	}
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("total_minor = total_minor + ?", line.AmountMinor).
		Where("id = ?", order.ID).Exec(ctx); err != nil {
		return fmt.Errorf("raise the order total: %w", err)
	}
	order.Lines = append(order.Lines, line)
	order.TotalMinor += line.AmountMinor
	return nil
}
