package dbstats

import (
	"context"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// testInterval keeps the real-server tests short while still giving each
// window several polls.
const testInterval = time.Second

func mustFigure(t *testing.T, rep *telemetry.Report, name string) float64 {
	t.Helper()
	v, ok := figureValue(rep, name)
	if !ok {
		t.Fatalf("no figure %s in %+v (warnings %q)", name, rep.Figures, rep.Warnings)
	}
	return v
}

// within says whether got is within frac of want.
func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*math.Abs(want) }

// runLoad runs a load tool, bounded in time, and returns its output.
func runLoad(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func pgbench(t *testing.T) string {
	t.Helper()
	bin, err := localdb.Tool("pgbench", "/usr/lib/postgresql/*/bin/pgbench")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestPostgresCommitsMatchPgbench: while pgbench runs a fixed number of
// transactions, the commits the server counted agree with them, and the
// sessions seen include pgbench's clients.
func TestPostgresCommitsMatchPgbench(t *testing.T) {
	srv := startPostgres(t)
	env := srv.Env()
	runLoad(t, env, pgbench(t), "-i", "-s", "2", "-q")
	for _, kv := range env { // the poller reads libpq's variables, as pgbench does
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	p, err := NewPostgres(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	const clients, perClient = 4, 2000
	lsnBefore := mustQuery(t, srv, "SELECT pg_current_wal_lsn()")
	recordsBefore := mustNumber(t, srv, "SELECT wal_records FROM pg_stat_wal")
	// The sessions are sampled at each poll: pgbench's 8,000 transactions
	// take well under a second here, so the polls are 50 ms apart (a poll
	// costs ~2 ms) for several to land while the clients run.
	rec := Start(ctx, p, 50*time.Millisecond)
	out := runLoad(t, env, pgbench(t), "-n", "-c", strconv.Itoa(clients), "-j", "2", "-t", strconv.Itoa(perClient))
	waitForNoSessions(t, p) // the backends publish their last statistics as they exit
	rep := rec.Stop(ctx)
	walWritten := mustNumber(t, srv, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '"+lsnBefore+"')")
	records := mustNumber(t, srv, "SELECT wal_records FROM pg_stat_wal") - recordsBefore
	size := mustNumber(t, srv, "SELECT pg_database_size(current_database())")

	m := regexp.MustCompile(`number of transactions actually processed: (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no transaction count in pgbench's output:\n%s", out)
	}
	tx, _ := strconv.ParseFloat(m[1], 64)
	commits := mustFigure(t, rep, "commitsPerSecond") * mustFigure(t, rep, "windowSeconds")
	t.Logf("pgbench transactions %v, server commits %.0f (%+.2f %%); sessions active max %v, idle in transaction max %v; poll %.2f ms",
		tx, commits, 100*(commits-tx)/tx, mustFigure(t, rep, "sessionsActiveMax"), mustFigure(t, rep, "sessionsIdleInTransactionMax"), mustFigure(t, rep, "pollMillisMean"))
	// pgbench adds a statement or two of its own (its scale check).
	if !within(commits, tx, 0.02) {
		t.Errorf("server commits %.0f, pgbench transactions %v: more than 2 %% apart", commits, tx)
	}
	if busy := mustFigure(t, rep, "sessionsActiveMax") + mustFigure(t, rep, "sessionsIdleInTransactionMax"); busy < clients/2 {
		t.Errorf("at most %v busy sessions seen while %d clients ran", busy, clients)
	}
	if hit := mustFigure(t, rep, "bufferHitPercent"); hit <= 50 || hit > 100 {
		t.Errorf("bufferHitPercent %v: a small pgbench database is read from shared buffers", hit)
	}
	if upd := mustFigure(t, rep, "rowsUpdatedPerSecond") * mustFigure(t, rep, "windowSeconds"); !within(upd, 3*tx, 0.02) {
		t.Errorf("rows updated %.0f, want 3 per pgbench transaction (%v)", upd, 3*tx)
	}
	// pg_stat_wal counts the records' bytes; the WAL's position moves by
	// them, each aligned to 8 bytes (up to 7 more), and by the pages'
	// headers (24 bytes in 8 kB): pgbench's small records make that 3 %.
	wal := mustFigure(t, rep, "walBytesPerSecond") * mustFigure(t, rep, "windowSeconds")
	padding := 7*records + 24*(walWritten/8192+1)
	t.Logf("WAL %.0f bytes by pg_stat_wal, %.0f by pg_current_wal_lsn() (%+.2f %%; %.0f records, up to %.0f bytes of alignment and page headers); database size %.0f bytes at the last poll, %.0f after",
		wal, walWritten, 100*(wal-walWritten)/walWritten, records, padding, mustFigure(t, rep, "databaseSizeBytesMax"), size)
	if wal > walWritten || wal < walWritten-padding || !within(wal, walWritten, 0.05) {
		t.Errorf("walBytesPerSecond × window = %.0f bytes, the WAL's position moved %.0f (%.0f records)", wal, walWritten, records)
	}
	if got := mustFigure(t, rep, "databaseSizeBytesMax"); !within(got, size, 0.01) {
		t.Errorf("databaseSizeBytesMax %.0f, pg_database_size() %.0f after the window", got, size)
	}
	// A poll gets its interval (50 ms here) to answer: on a machine
	// loaded by other packages' tests one can miss it, which the report
	// says and which is not the server's doing; any other warning is.
	var other []string
	missed := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, "context deadline exceeded") {
			missed++
			continue
		}
		other = append(other, w)
	}
	if mustFigure(t, rep, "serverRestarts") != 0 || len(other) != 0 || missed > 3 {
		t.Errorf("a quiet window has no restarts or warnings (a poll or three may miss its 50 ms on a loaded machine): %q", rep.Warnings)
	}
}

func mustQuery(t *testing.T, srv *localdb.Postgres, sql string) string {
	t.Helper()
	out, err := srv.Query(sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustNumber(t *testing.T, srv *localdb.Postgres, sql string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(mustQuery(t, srv, sql), 64)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// TestPostgresStatisticsResetIsNamed: pg_stat_reset() during a window is a
// restart of the counters, and so is pg_stat_reset_shared('wal') later on:
// a warning says so and serverRestarts counts both. The WAL's and the
// checkpoints' counters, which pg_stat_reset() leaves alone, count on
// through it (not all they counted since the server started).
func TestPostgresStatisticsResetIsNamed(t *testing.T) {
	srv := startPostgres(t)
	ctx := context.Background()
	p, err := NewPostgres(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	lsnBefore := mustQuery(t, srv, "SELECT pg_current_wal_lsn()")
	rec := Start(ctx, p, testInterval)
	waitForPolls(t, rec, 2)
	if err := srv.SQL("SELECT pg_stat_reset()"); err != nil {
		t.Fatal(err)
	}
	waitForPolls(t, rec, 4)
	if err := srv.SQL("SELECT pg_stat_reset_shared('wal')"); err != nil {
		t.Fatal(err)
	}
	waitForPolls(t, rec, 6)
	rep := rec.Stop(ctx)
	walWritten := mustNumber(t, srv, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '"+lsnBefore+"')")
	if got := mustFigure(t, rep, "serverRestarts"); got != 2 {
		t.Errorf("serverRestarts = %v, want 2 (warnings %q)", got, rep.Warnings)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), RestartWarning) {
		t.Errorf("warnings %q do not name the reset", rep.Warnings)
	}
	// The window is quiet: a few kB of WAL, and no checkpoint (the first
	// timed one is 5 minutes after the server's start).
	wal := mustFigure(t, rep, "walBytesPerSecond") * mustFigure(t, rep, "windowSeconds")
	t.Logf("WAL in the window %.0f bytes by pg_stat_wal, %.0f by pg_current_wal_lsn()", wal, walWritten)
	if wal > walWritten+8192 {
		t.Errorf("WAL %.0f bytes in a quiet window whose WAL position moved %.0f: counted from before the reset", wal, walWritten)
	}
	for _, name := range []string{"checkpointsTimed", "checkpointsRequested"} {
		if got := mustFigure(t, rep, name); got != 0 {
			t.Errorf("%s = %v in a quiet window", name, got)
		}
	}
}

func startPostgres(t testing.TB) *localdb.Postgres {
	t.Helper()
	srv, err := localdb.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func waitForNoSessions(t *testing.T, p *Postgres) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := p.Poll(context.Background())
		if err == nil && r.Gauges["active"]+r.Gauges["idle"]+r.Gauges["idle_in_tx"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbench's sessions are still there after 30 s: %v %v", r.Gauges, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitForPolls(t *testing.T, rec *Recording, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec.mu.Lock()
		got := len(rec.obs)
		rec.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d polls after 30 s, want %d", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
