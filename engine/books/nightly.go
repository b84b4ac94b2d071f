package books

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/jobs"
)

// StoredFinding is a finding of the last nightly check of an
// organisation's books (table books_findings), replaced by every run: the
// staff overview shows them and /readyz counts them.
type StoredFinding struct {
	bun.BaseModel  `bun:"table:books_findings"`
	ID             int64     `bun:"id,pk,autoincrement"`
	OrganisationID int64     `bun:"organisation_id,notnull"`
	Rule           Rule      `bun:"rule,notnull"`
	Message        string    `bun:"message,notnull"`
	Records        string    `bun:"records,notnull"`
	CheckedAt      time.Time `bun:"checked_at,notnull"`
}

// CheckAll checks the books of every organisation (or of the one ctx is
// scoped to: `portal jobs run books.check --org ID`) and keeps each
// organisation's findings in place of the last run's, in one transaction
// per organisation. It returns how many violations it found.
func CheckAll(ctx context.Context, svc *engine.Service, now time.Time) (int, error) {
	orgs, err := engine.ListOrganisations(ctx, svc.DB())
	if err != nil {
		return 0, err
	}
	one, scoped := engine.OrganisationOf(ctx)
	total := 0
	for _, org := range orgs {
		if scoped && one != 0 && org.ID != one {
			continue
		}
		findings, err := Check(ctx, svc, org.ID)
		if err != nil {
			return total, fmt.Errorf("organisation %d: %w", org.ID, err)
		}
		total += len(findings)
		rows := make([]StoredFinding, len(findings))
		for i, f := range findings {
			rows[i] = StoredFinding{OrganisationID: org.ID, Rule: f.Rule, Message: f.Message, Records: strings.Join(f.Records, ", "), CheckedAt: now.UTC()}
		}
		err = engine.InTx(ctx, svc.DB(), func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewDelete().Model((*StoredFinding)(nil)).Where("organisation_id = ?", org.ID).Exec(ctx); err != nil {
				return fmt.Errorf("books: replace findings: %w", err)
			}
			if len(rows) == 0 {
				return nil
			}
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return fmt.Errorf("books: keep findings: %w", err)
			}
			return nil
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// ScheduleCheck runs CheckAll daily (engine.KindCheckBooks), once in the
// cluster; a violation is logged as a warning, for the operator's alerts.
func ScheduleCheck(r *jobs.Runner, svc *engine.Service, now func() time.Time, log *slog.Logger) {
	r.Every(engine.KindCheckBooks, 24*time.Hour)
	r.Handle(engine.KindCheckBooks, func(ctx context.Context, j *jobs.Job) error {
		ctx = engine.JobScope(ctx, j)
		n, err := CheckAll(ctx, svc, now())
		if n > 0 {
			log.WarnContext(ctx, "the books check found violations (portal books check shows them)", "violations", n)
		}
		return err
	})
}

// Findings are the last nightly run's findings of one organisation.
func Findings(ctx context.Context, db bun.IDB, orgID int64) (out []StoredFinding, err error) {
	if err := db.NewSelect().Model(&out).Where("organisation_id = ?", orgID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("books: load findings: %w", err)
	}
	return out, nil
}

// FindingCount is how many findings the last nightly runs kept, over
// every organisation: /readyz says it, without their detail.
func FindingCount(ctx context.Context, db bun.IDB) (int, error) {
	n, err := db.NewSelect().Model((*StoredFinding)(nil)).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("books: count findings: %w", err)
	}
	return int(n), nil
}
