package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"portal/engine"
)

// referenceResult is what the raw step transaction reached.
type referenceResult struct {
	name string
	tps  float64
	// databaseCPU is PostgreSQL's CPU time per transaction (0 on SQLite).
	databaseCPU float64
}

// stepScript is the raw step transaction for pgbench: what one `next` on a
// question step must do at the least, with the same schema and indexes.
// The answers' person_id is NULL so that the unique answer key never
// stops a client (NULLs are distinct); the step_id is a real step.
const stepScript = `\set id random(:lo, :hi)
BEGIN;
SELECT id FROM process_instances WHERE id = :id FOR UPDATE;
INSERT INTO process_data (instance_id, step_id, person_id, data_key, data_value, created_at) VALUES (:id, :step, NULL, 'answer', '1', now()), (:id, :step, NULL, 'answer', '1', now()), (:id, :step, NULL, 'answer', '1', now());
UPDATE process_instances SET version = version + 1, updated_at = now() WHERE id = :id;
COMMIT;
`

var tpsPattern = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// runReference runs the raw step transaction on the run's database with
// o.members clients: pgbench on PostgreSQL (2 threads), database/sql with
// the portal's own driver and settings on SQLite.
func runReference(ctx context.Context, o options, dbURL, schema string) (referenceResult, error) {
	db, err := engine.OpenDB(dbURL)
	if err != nil {
		return referenceResult{}, err
	}
	defer db.Close()
	var lo, hi, step int64
	if err := db.QueryRowContext(ctx, "SELECT min(id), max(id) FROM process_instances").Scan(&lo, &hi); err != nil {
		return referenceResult{}, fmt.Errorf("instances: %w", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT min(id) FROM process_steps").Scan(&step); err != nil {
		return referenceResult{}, fmt.Errorf("steps: %w", err)
	}
	if o.sqlite {
		return sqliteReference(ctx, db.DB, o, lo, hi, step)
	}
	script, err := os.CreateTemp("", "portal-step-*.sql")
	if err != nil {
		return referenceResult{}, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(stepScript); err != nil {
		return referenceResult{}, err
	}
	script.Close()
	threads := min(2, o.members)
	cmd := exec.CommandContext(ctx, o.pgbench, "-n", "-f", script.Name(), "-c", strconv.Itoa(o.members), "-j", strconv.Itoa(threads),
		"-T", strconv.Itoa(int(o.reference.Seconds())), "-D", fmt.Sprintf("lo=%d", lo), "-D", fmt.Sprintf("hi=%d", hi), "-D", fmt.Sprintf("step=%d", step),
		o.databaseURL)
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+schema)
	// pgbench's backends exit with it, taking their CPU times along: the
	// last sample taken while they ran stands for the run.
	cpuBefore, started := databaseCPU(o), time.Now()
	var cpu, sampled float64
	stopSampling := make(chan struct{})
	sampling := make(chan struct{})
	go func() {
		defer close(sampling)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(250 * time.Millisecond):
				if at := time.Since(started).Seconds(); at < o.reference.Seconds()-0.25 {
					cpu, sampled = databaseCPU(o)-cpuBefore, at
				}
			}
		}
	}()
	out, err := cmd.CombinedOutput()
	close(stopSampling)
	<-sampling
	if err != nil {
		return referenceResult{}, fmt.Errorf("pgbench: %w\n%s", err, out)
	}
	m := tpsPattern.FindSubmatch(out)
	if m == nil {
		return referenceResult{}, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	res := referenceResult{name: fmt.Sprintf("pgbench -c %d -j %d, raw step script", o.members, threads), tps: tps}
	if sampled > 0 {
		res.databaseCPU = cpu / (tps * sampled)
	}
	return res, nil
}

// sqliteReference runs the raw step transaction through database/sql on
// the portal's SQLite settings (one connection, WAL, busy timeout) from
// o.members goroutines. SQLite runs one transaction at a time, so there is
// no row lock: the SELECT reads the instance as the portal does.
func sqliteReference(ctx context.Context, db *sql.DB, o options, lo, hi, step int64) (referenceResult, error) {
	var done atomic.Int64
	var failure error
	var once sync.Once
	deadline := time.Now().Add(o.reference)
	start := time.Now()
	var wg sync.WaitGroup
	for range o.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := rawStep(ctx, db, lo+mrand.Int64N(hi-lo+1), step); err != nil {
					once.Do(func() { failure = err })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return referenceResult{}, failure
	}
	return referenceResult{name: fmt.Sprintf("database/sql (modernc.org/sqlite), %d goroutines, raw step", o.members),
		tps: float64(done.Load()) / time.Since(start).Seconds()}, nil
}

func rawStep(ctx context.Context, db *sql.DB, id, step int64) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	var got int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM process_instances WHERE id = ?", id).Scan(&got); err != nil {
		return err
	}
	now := time.Now()
	if _, err := tx.ExecContext(ctx, "INSERT INTO process_data (instance_id, step_id, person_id, data_key, data_value, created_at) VALUES (?, ?, NULL, 'answer', '1', ?), (?, ?, NULL, 'answer', '1', ?), (?, ?, NULL, 'answer', '1', ?)",
		id, step, now, id, step, now, id, step, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE process_instances SET version = version + 1, updated_at = ? WHERE id = ?", now, id); err != nil {
		return err
	}
	return tx.Commit()
}
