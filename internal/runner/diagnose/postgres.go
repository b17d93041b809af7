package diagnose

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// Postgres reads pg_stat_statements of the target database (its
// top-level statements by normalized text, the runner's own reads of the
// statistics views left out) and samples pg_stat_activity's wait events
// of its client sessions. One connection, one statement at a time.
type Postgres struct {
	mu         sync.Mutex
	cfg        *pgx.ConnConfig
	conn       *pgx.Conn
	secrets    []string
	versionNum int
	statements bool
	notes      []string
}

// NewPostgres connects as the statistics poller does (dbstats.Config,
// libpq's variables for what it leaves empty), named dbperf-diagnostics,
// and finds pg_stat_statements: when the server loads its library but the
// database lacks the extension, it is created (said in the notes); when
// the server does not load it, statements are not read (said too) and the
// waits still are.
func NewPostgres(ctx context.Context, c dbstats.Config) (*Postgres, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("reading the PostgreSQL settings from the environment: %w", dbstats.RedactSecrets(err, c.Username, c.Password))
	}
	dbstats.ApplyConfig(cfg, c)
	cfg.RuntimeParams["application_name"] = "dbperf-diagnostics"
	p := &Postgres{cfg: cfg, secrets: []string{cfg.User, cfg.Password}}
	if p.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL at %s:%d: %w", cfg.Host, cfg.Port, dbstats.RedactSecrets(err, p.secrets...))
	}
	var present bool
	var libraries string
	if err := p.conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, to_regclass('pg_stat_statements') IS NOT NULL,
		current_setting('shared_preload_libraries')`).Scan(&p.versionNum, &present, &libraries); err != nil {
		_ = p.conn.Close(context.Background())
		return nil, fmt.Errorf("probing PostgreSQL: %w", dbstats.RedactSecrets(err, p.secrets...))
	}
	loaded := strings.Contains(libraries, "pg_stat_statements")
	switch {
	case p.versionNum < 130000:
		p.notes = append(p.notes, fmt.Sprintf("PostgreSQL %d is older than 13: statements are not read (pg_stat_statements' columns of 13 and later)", p.versionNum/10000))
	case present && loaded:
		p.statements = true
	case !loaded:
		p.notes = append(p.notes, "pg_stat_statements is not in the server's shared_preload_libraries: statements are not read (docs/telemetry.md, \"Diagnostics\")")
	default:
		if _, err := p.conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			p.notes = append(p.notes, fmt.Sprintf("pg_stat_statements is loaded but not created in the database, and creating it failed: %v", dbstats.RedactSecrets(err, p.secrets...)))
		} else {
			p.statements = true
			p.notes = append(p.notes, "created the extension pg_stat_statements in the database (its library was loaded)")
		}
	}
	return p, nil
}

// Name is the statistics' source.
func (p *Postgres) Name() string { return dbstats.SourcePostgreSQL }

// ready connects again when the connection was lost (a server restarted,
// a statement cut by its deadline); the caller holds mu.
func (p *Postgres) ready(ctx context.Context) error {
	if p.conn != nil && !p.conn.IsClosed() {
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL again: %w", dbstats.RedactSecrets(err, p.secrets...))
	}
	p.conn = conn
	return nil
}

// TransactionsFrom says what the transactions count.
func (p *Postgres) TransactionsFrom() string {
	return "pg_stat_database xact_commit + xact_rollback"
}

// Notes say what could not be read.
func (p *Postgres) Notes() []string { return p.notes }

// pgStatements sums the database's top-level statements by text: the same
// text under two users or two query ids is one statement. The runner's
// own reads of the statistics views (pg_stat_*) are left out.
const pgStatements = `SELECT query, sum(calls)::float8, sum(total_exec_time)::float8, sum(rows)::float8,
  sum(shared_blks_hit)::float8, sum(shared_blks_read)::float8, sum(shared_blks_dirtied)::float8,
  sum(temp_blks_read)::float8, sum(temp_blks_written)::float8, sum(wal_bytes)::float8
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel AND query NOT LIKE '%pg\_stat%'
GROUP BY query`

// pgFigures name the columns after the first three of pgStatements.
var pgFigures = []string{"rows", "sharedBlocksHit", "sharedBlocksRead", "sharedBlocksDirtied", "tempBlocksRead", "tempBlocksWritten", "walBytes"}

// Snapshot reads the database's transaction counter and its statements'.
func (p *Postgres) Snapshot(ctx context.Context) (Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Snapshot{Items: map[string]Counters{}}
	if err := p.ready(ctx); err != nil {
		return s, err
	}
	// The statistics of this backend's own transactions are flushed at
	// most once a second: a snapshot reads the cumulative views afresh.
	if _, err := p.conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return s, fmt.Errorf("reading pg_stat_database: %w", dbstats.RedactSecrets(err, p.secrets...))
	}
	if err := p.conn.QueryRow(ctx, `SELECT (xact_commit + xact_rollback)::float8 FROM pg_stat_database WHERE datname = current_database()`).Scan(&s.Transactions); err != nil {
		return s, fmt.Errorf("reading pg_stat_database: %w", dbstats.RedactSecrets(err, p.secrets...))
	}
	s.At = time.Now()
	if !p.statements {
		return s, nil
	}
	rows, err := p.conn.Query(ctx, pgStatements)
	if err != nil {
		return s, fmt.Errorf("reading pg_stat_statements: %w", dbstats.RedactSecrets(err, p.secrets...))
	}
	defer rows.Close()
	for rows.Next() {
		var text string
		vals := make([]float64, 3+len(pgFigures)-1)
		dest := []any{&text}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return s, fmt.Errorf("reading pg_stat_statements: %w", err)
		}
		if sensitive(text) {
			continue
		}
		c := Counters{Kind: results.DiagnosticStatement, Calls: vals[0], TimeMillis: vals[1], Figures: map[string]float64{}}
		for i, name := range pgFigures {
			c.Figures[name] = vals[2+i]
		}
		s.Items[collapse(text)] = c
	}
	return s, rows.Err()
}

// pgWaits counts the database's active client sessions by what they wait
// on; one not waiting is on the CPU (or in its run queue).
const pgWaits = `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*)::int FROM pg_stat_activity
WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = current_database()
GROUP BY 1`

// SampleWaits counts the active sessions by wait event.
func (p *Postgres) SampleWaits(ctx context.Context) (map[string]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	rows, err := p.conn.Query(ctx, pgWaits)
	if err != nil {
		return nil, dbstats.RedactSecrets(err, p.secrets...)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		out[name] = n
	}
	return out, rows.Err()
}

// placeholders are a normalized statement's parameters.
var placeholders = regexp.MustCompile(`\$([0-9]+)`)

// Explain plans a normalized statement as the server would for any
// parameters (its generic plan, costs off), in a transaction rolled back
// with a 5 s statement timeout: PREPARE with plan_cache_mode
// force_generic_plan, then EXPLAIN EXECUTE with NULLs, which plans without
// running it (PostgreSQL 16's EXPLAIN (GENERIC_PLAN) does the same, on
// 16 only). A statement whose parameters' types its text does not imply
// cannot be prepared, and has no plan.
func (p *Postgres) Explain(ctx context.Context, statement string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, m := range placeholders.FindAllStringSubmatch(statement, -1) {
		if k, _ := strconv.Atoi(m[1]); k > n {
			n = k
		}
	}
	args := strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")
	if err := p.ready(ctx); err != nil {
		return "", err
	}
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return "", dbstats.RedactSecrets(err, p.secrets...)
	}
	defer func() {
		_ = tx.Rollback(context.Background())
		// A prepared statement outlives its transaction.
		_, _ = p.conn.Exec(context.Background(), "DEALLOCATE dbperf_explain", pgx.QueryExecModeSimpleProtocol)
	}()
	for _, s := range []string{"SET LOCAL statement_timeout = '5s'", "SET LOCAL plan_cache_mode = force_generic_plan",
		"PREPARE dbperf_explain AS " + statement} {
		if _, err := tx.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
			return "", dbstats.RedactSecrets(err, p.secrets...)
		}
	}
	exec := "EXPLAIN (COSTS OFF) EXECUTE dbperf_explain"
	if n > 0 {
		exec += "(" + args + ")"
	}
	rows, err := tx.Query(ctx, exec, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", dbstats.RedactSecrets(err, p.secrets...)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		return "", dbstats.RedactSecrets(err, p.secrets...)
	}
	return strings.Join(lines, "\n"), nil
}

// Close closes the connection.
func (p *Postgres) Close() error { return p.conn.Close(context.Background()) }

// sensitive says whether a statement's text may carry a credential (a
// utility statement is kept verbatim: ALTER ROLE … PASSWORD '…').
func sensitive(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "password") || strings.Contains(t, "secret")
}

// collapse folds a statement's runs of white space into one space.
func collapse(text string) string { return strings.Join(strings.Fields(text), " ") }
