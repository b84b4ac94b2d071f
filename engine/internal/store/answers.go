package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Store functions for what a member entered in an instance (process_data):
// the selected persons and the answers per step and person.

// InstanceData loads every stored answer and selection of an instance.
func InstanceData(ctx context.Context, db bun.IDB, instanceID int64) ([]engine.ProcessData, error) {
	var rows []engine.ProcessData
	if err := db.NewSelect().Model(&rows).Where("instance_id = ?", instanceID).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load process data: %w", err)
	}
	return rows, nil
}

// StepAnswers loads the answers of one step of an instance.
func StepAnswers(ctx context.Context, db bun.IDB, instanceID, stepID int64) ([]engine.ProcessData, error) {
	var rows []engine.ProcessData
	if err := db.NewSelect().Model(&rows).Where("instance_id = ? AND step_id = ? AND data_key = ?", instanceID, stepID, engine.DataAnswer).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load step answers: %w", err)
	}
	return rows, nil
}

// StoreSelection replaces the selected persons of an instance. The delete
// only runs when there was a selection before (reselect), which keeps a
// first selection to one write.
func StoreSelection(ctx context.Context, db bun.IDB, instanceID int64, reselect bool, personIDs []int64, now time.Time) error {
	if reselect {
		if _, err := db.NewDelete().Model((*engine.ProcessData)(nil)).
			Where("instance_id = ? AND data_key = ?", instanceID, engine.DataSelected).Exec(ctx); err != nil {
			return fmt.Errorf("clear selection: %w", err)
		}
	}
	rows := make([]engine.ProcessData, len(personIDs))
	for i := range personIDs {
		rows[i] = engine.ProcessData{InstanceID: instanceID, PersonID: &personIDs[i], DataKey: engine.DataSelected, DataValue: "true", CreatedAt: now}
	}
	if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return fmt.Errorf("store selection: %w", err)
	}
	return nil
}

// StoreAnswers replaces a step's answers. The delete only runs when the step
// was answered before (after Back), which keeps a forward step to one write.
func StoreAnswers(ctx context.Context, db bun.IDB, instanceID, stepID int64, hadAnswers bool, answers map[int64]string, now time.Time) error {
	if hadAnswers {
		if _, err := db.NewDelete().Model((*engine.ProcessData)(nil)).
			Where("instance_id = ? AND step_id = ? AND data_key = ?", instanceID, stepID, engine.DataAnswer).Exec(ctx); err != nil {
			return fmt.Errorf("replace answers: %w", err)
		}
	}
	if len(answers) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(answers))
	for id := range answers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rows := make([]engine.ProcessData, len(ids))
	for i, id := range ids {
		rows[i] = engine.ProcessData{InstanceID: instanceID, StepID: &stepID, PersonID: &ids[i], DataKey: engine.DataAnswer, DataValue: answers[id], CreatedAt: now}
	}
	if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return fmt.Errorf("store answers: %w", err)
	}
	return nil
}

// DeleteInstanceData deletes every selection and answer of an instance.
func DeleteInstanceData(ctx context.Context, db bun.IDB, instanceID int64) error {
	if _, err := db.NewDelete().Model((*engine.ProcessData)(nil)).Where("instance_id = ?", instanceID).Exec(ctx); err != nil {
		return fmt.Errorf("delete process data: %w", err)
	}
	return nil
}
