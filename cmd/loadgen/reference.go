package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"portal/engine"
)

// referenceResult is what the raw step transaction reached.
type referenceResult struct {
	name string
	tps  float64
	// databaseCPU is PostgreSQL's CPU time per transaction (0 on SQLite).
	databaseCPU float64
	// latencies are the transactions' times, sorted: what the database
	// alone gives 32 clients, against which the step loop's p99 is read.
	latencies []time.Duration
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
	// -l writes each transaction's time (µs, the third field) to
	// pgbench_log.* files in the working directory.
	logDir, err := os.MkdirTemp("", "portal-pgbench-*")
	if err != nil {
		return referenceResult{}, err
	}
	defer os.RemoveAll(logDir)
	threads := min(2, o.members)
	cmd := exec.CommandContext(ctx, o.pgbench, "-n", "-l", "-f", script.Name(), "-c", strconv.Itoa(o.members), "-j", strconv.Itoa(threads),
		"-T", strconv.Itoa(int(o.reference.Seconds())), "-D", fmt.Sprintf("lo=%d", lo), "-D", fmt.Sprintf("hi=%d", hi), "-D", fmt.Sprintf("step=%d", step),
		o.databaseURL)
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+schema)
	cmd.Dir = logDir
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
	res.latencies, err = pgbenchLatencies(logDir)
	return res, err
}

// pgbenchLatencies reads the transaction times of pgbench's -l logs in dir,
// sorted.
func pgbenchLatencies(dir string) ([]time.Duration, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "pgbench_log.*"))
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for _, name := range logs {
		raw, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			us, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("pgbench log %s: %w", name, err)
			}
			out = append(out, time.Duration(us)*time.Microsecond)
		}
	}
	slices.Sort(out)
	return out, nil
}

// sqliteReference runs the raw step transaction through database/sql on
// the portal's SQLite settings (one connection, WAL, busy timeout) from
// o.members goroutines. SQLite runs one transaction at a time, so there is
// no row lock: the SELECT reads the instance as the portal does.
func sqliteReference(ctx context.Context, db *sql.DB, o options, lo, hi, step int64) (referenceResult, error) {
	var mu sync.Mutex
	var latencies []time.Duration
	var failure error
	var once sync.Once
	deadline := time.Now().Add(o.reference)
	start := time.Now()
	var wg sync.WaitGroup
	for range o.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			defer func() {
				mu.Lock()
				latencies = append(latencies, mine...)
				mu.Unlock()
			}()
			for time.Now().Before(deadline) {
				began := time.Now()
				if err := rawStep(ctx, db, lo+mrand.Int64N(hi-lo+1), step); err != nil {
					once.Do(func() { failure = err })
					return
				}
				mine = append(mine, time.Since(began))
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return referenceResult{}, failure
	}
	slices.Sort(latencies)
	return referenceResult{name: fmt.Sprintf("database/sql (modernc.org/sqlite), %d goroutines, raw step", o.members),
		tps: float64(len(latencies)) / time.Since(start).Seconds(), latencies: latencies}, nil
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
