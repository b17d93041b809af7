package dbstats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

func pgConnect(t *testing.T, ctx context.Context, srv *localdb.Postgres) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=disable",
		srv.Port, srv.User, srv.Password, srv.Database))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPostgresTempFilesCheckpointsAndDeadlocks: in one window a sort that
// spills to disk (work_mem 64kB), a CHECKPOINT and a deadlock between two
// sessions. The figures agree with what the server said of each: the
// sort's disk space in its EXPLAIN ANALYZE, one requested checkpoint that
// wrote at least the pages left dirty before it, one deadlock.
func TestPostgresTempFilesCheckpointsAndDeadlocks(t *testing.T) {
	srv := startPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Dirty pages for the checkpoint: the table to sort, not yet written
	// (its rows fit in the bulk write's ring, and no checkpoint ran since).
	// Made with work_mem enough that generate_series' tuplestore does not
	// spill: its temporary file, published when the session's statistics
	// are flushed (up to a second later), fell into the window once (CI).
	if err := srv.SQL("SET work_mem = '64MB'; CREATE TABLE sortme AS SELECT g AS v FROM generate_series(1, 200000) g; CREATE TABLE pair (id int PRIMARY KEY, v int); INSERT INTO pair VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}
	dirty := mustNumber(t, srv, "SELECT pg_relation_size('sortme') / current_setting('block_size')::int")
	p, err := NewPostgres(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := Start(ctx, p, testInterval)
	waitForPolls(t, rec, 1) // the window's start is before all that follows

	// The sort: one temporary file (no parallel workers), its size in kB
	// as EXPLAIN gives it.
	a, b := pgConnect(t, ctx, srv), pgConnect(t, ctx, srv)
	if _, err := a.Exec(ctx, "SET work_mem = '64kB'; SET max_parallel_workers_per_gather = 0"); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Plan struct {
			NodeType      string  `json:"Node Type"`
			SortSpaceUsed float64 `json:"Sort Space Used"`
			SortSpaceType string  `json:"Sort Space Type"`
		} `json:"Plan"`
	}
	var raw string
	if err := a.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT v FROM sortme ORDER BY v DESC").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &plan); err != nil || len(plan) != 1 || plan[0].Plan.SortSpaceType != "Disk" {
		t.Fatalf("the sort did not spill to disk (%v): %s", err, raw)
	}
	sortBytes := plan[0].Plan.SortSpaceUsed * 1024

	if err := srv.SQL("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}

	// The deadlock: each session holds one row and asks for the other's.
	// Whichever waits second finds the deadlock, after deadlock_timeout.
	for _, c := range []*pgx.Conn{a, b} {
		if _, err := c.Exec(ctx, "SET deadlock_timeout = '100ms'"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Exec(ctx, "BEGIN; UPDATE pair SET v = v + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec(ctx, "BEGIN; UPDATE pair SET v = v + 1 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	errA := make(chan error, 1)
	go func() { _, err := a.Exec(ctx, "UPDATE pair SET v = v + 1 WHERE id = 2"); errA <- err }()
	_, errB := b.Exec(ctx, "UPDATE pair SET v = v + 1 WHERE id = 1")
	if errB != nil { // b was the victim: a gets its row once b's transaction ends
		if _, err := b.Exec(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
	errs := []error{<-errA, errB}
	deadlocked := 0
	for _, err := range errs {
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "40P01":
			deadlocked++
		case err != nil:
			t.Fatal(err)
		}
	}
	if deadlocked != 1 {
		t.Fatalf("%d sessions deadlocked, want 1: %v", deadlocked, errs)
	}
	// The backends publish their statistics as they exit.
	_ = a.Close(ctx)
	_ = b.Close(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := p.Poll(ctx)
		if err == nil && r.Counters["deadlocks"] > before.Counters["deadlocks"] && r.Counters["temp_files"] > before.Counters["temp_files"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sort's and the deadlock's statistics are not there after 10 s: %v %v", r.Counters, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rep := rec.Stop(ctx)

	window := mustFigure(t, rep, "windowSeconds")
	tempFiles := mustFigure(t, rep, "tempFilesPerSecond") * window
	tempBytes := mustFigure(t, rep, "tempBytesPerSecond") * window
	buffers := mustFigure(t, rep, "checkpointBuffersWrittenPerSecond") * window
	t.Logf("temp files %.0f, %.0f bytes (the sort's EXPLAIN: %.0f bytes on disk); checkpoints requested %v, timed %v, %.0f buffers written (%.0f pages were dirty); deadlocks %v",
		tempFiles, tempBytes, sortBytes, mustFigure(t, rep, "checkpointsRequested"), mustFigure(t, rep, "checkpointsTimed"), buffers, dirty, mustFigure(t, rep, "deadlocks"))
	if !within(tempFiles, 1, 1e-6) {
		t.Errorf("temp files %v, want the sort's 1", tempFiles)
	}
	if !within(tempBytes, sortBytes, 0.01) {
		t.Errorf("temp bytes %.0f, the sort's EXPLAIN says %.0f on disk", tempBytes, sortBytes)
	}
	if got := mustFigure(t, rep, "checkpointsRequested"); got < 1 {
		t.Errorf("checkpointsRequested %v after a CHECKPOINT", got)
	}
	if buffers < dirty {
		t.Errorf("the checkpoint wrote %.0f buffers, fewer than the %.0f pages of the table left dirty", buffers, dirty)
	}
	if got := mustFigure(t, rep, "deadlocks"); got != 1 {
		t.Errorf("deadlocks = %v, want 1", got)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q", rep.Warnings)
	}
}

// TestPostgresStatementOfEachVersion: the statements chosen for other
// versions than the local server's run against it. PostgreSQL 17's reads
// pg_stat_checkpointer, here a view of the test's over pg_stat_bgwriter
// under the same names (found on the search path, as the real one would
// be in pg_catalog); PostgreSQL 13's has no pg_stat_wal, and a version
// without the checkpoints' view has none of theirs: their figures are
// left out, each with one warning for the window however many polls it
// has, and the other figures are there.
func TestPostgresStatementOfEachVersion(t *testing.T) {
	srv := startPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.SQL(`CREATE VIEW public.pg_stat_checkpointer AS SELECT checkpoints_timed AS num_timed, checkpoints_req AS num_requested,
  buffers_checkpoint AS buffers_written, stats_reset FROM pg_stat_bgwriter`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		server postgresServer
		absent []string
		warns  []string
	}{
		{server: postgresServer{versionNum: 170002, version: "17.2", wal: true, checkpointer: true, bgwriter: true}},
		{server: postgresServer{versionNum: 130011, version: "13.11", bgwriter: true},
			absent: []string{"walBytesPerSecond"}, warns: []string{"PostgreSQL 13.11 has no pg_stat_wal"}},
		{server: postgresServer{versionNum: 170002, version: "17.2", wal: true, bgwriter: true},
			absent: []string{"checkpointsTimed", "checkpointsRequested", "checkpointBuffersWrittenPerSecond"}, warns: []string{"PostgreSQL 17.2 has no pg_stat_checkpointer"}},
	} {
		t.Run(tc.server.version+" "+strings.Join(tc.absent, ","), func(t *testing.T) {
			p, err := NewPostgres(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.mu.Lock()
			p.notes = nil
			p.setPlan(planPostgres(tc.server))
			p.mu.Unlock()
			rec := Start(ctx, p, 200*time.Millisecond)
			waitForPolls(t, rec, 1) // the window's start is before the checkpoint
			if err := srv.SQL("CHECKPOINT"); err != nil {
				t.Fatal(err)
			}
			waitForPolls(t, rec, 4)
			rep := rec.Stop(ctx)
			for _, name := range tc.absent {
				if v, ok := figureValue(rep, name); ok {
					t.Errorf("%s = %v, want no such figure", name, v)
				}
			}
			if !slices.Contains(tc.absent, "checkpointsRequested") {
				if got := mustFigure(t, rep, "checkpointsRequested"); got < 1 {
					t.Errorf("checkpointsRequested %v after a CHECKPOINT", got)
				}
			}
			for _, name := range []string{"commitsPerSecond", "deadlocks", "databaseSizeBytesMax"} {
				mustFigure(t, rep, name)
			}
			if len(rep.Warnings) != len(tc.warns) {
				t.Errorf("warnings %q, want %d", rep.Warnings, len(tc.warns))
			}
			for i, w := range tc.warns {
				if i < len(rep.Warnings) && !strings.HasPrefix(rep.Warnings[i], w) {
					t.Errorf("warning %q, want one starting %q", rep.Warnings[i], w)
				}
			}
			t.Logf("warnings %q", rep.Warnings)
		})
	}
}
