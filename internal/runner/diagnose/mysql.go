package diagnose

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// MySQL reads performance_schema of a MySQL or MariaDB server: its
// statement digests (of the workload's schema when the run names one) and
// its waits by event, both cumulative, so a window is the difference of
// two snapshots.
type MySQL struct {
	db         *sql.DB
	secrets    []string
	schema     string
	statements bool
	notes      []string
}

// NewMySQL connects as the statistics poller does, named
// dbperf-diagnostics. performance_schema is a server setting read at its
// start: when it is off, nothing is read (said in the notes). When the
// statement digests' consumer is off, it is turned on (said too): it is
// what the digests' table is filled by. Wait instruments are not turned
// on: the waits are those the server instruments already.
func NewMySQL(ctx context.Context, c dbstats.Config) (*MySQL, error) {
	db, addr, err := dbstats.OpenMySQL(c, "dbperf-diagnostics")
	if err != nil {
		return nil, err
	}
	m := &MySQL{db: db, secrets: []string{c.Username, c.Password}, schema: c.Database}
	m.db.SetMaxOpenConns(1)
	var on int
	if err := m.db.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		_ = m.db.Close()
		return nil, fmt.Errorf("connecting to MySQL at %s: %w", addr, dbstats.RedactSecrets(err, m.secrets...))
	}
	if on == 0 {
		m.notes = append(m.notes, "performance_schema is off (a setting the server reads at its start): statements and waits are not read (docs/telemetry.md, \"Diagnostics\")")
		return m, nil
	}
	var enabled string
	if err := m.db.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'statements_digest'").Scan(&enabled); err != nil {
		m.notes = append(m.notes, fmt.Sprintf("performance_schema's consumers could not be read: %v", dbstats.RedactSecrets(err, m.secrets...)))
		return m, nil
	}
	if enabled != "YES" {
		if _, err := m.db.ExecContext(ctx, "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'statements_digest'"); err != nil {
			m.notes = append(m.notes, fmt.Sprintf("performance_schema's statements_digest consumer is off and could not be turned on: %v", dbstats.RedactSecrets(err, m.secrets...)))
			return m, nil
		}
		m.notes = append(m.notes, "turned on performance_schema's statements_digest consumer (it was off)")
	}
	m.statements = true
	return m, nil
}

// Name is the statistics' source.
func (m *MySQL) Name() string { return dbstats.SourceMySQL }

// TransactionsFrom says what the transactions count.
func (m *MySQL) TransactionsFrom() string {
	return "SHOW GLOBAL STATUS Com_commit + Com_rollback, or the statements (Questions) when none"
}

// Notes say what could not be read.
func (m *MySQL) Notes() []string { return m.notes }

// mysqlDigests are the statement digests' counters; the timers are in
// picoseconds. The runner's own statements (performance_schema's tables,
// SHOW) are left out.
const mysqlDigests = `SELECT DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT / 1e9, SUM_LOCK_TIME / 1e9, SUM_ROWS_EXAMINED, SUM_ROWS_SENT,
  SUM_ROWS_AFFECTED, SUM_CREATED_TMP_DISK_TABLES, SUM_CREATED_TMP_TABLES, SUM_SORT_ROWS, SUM_NO_INDEX_USED, SUM_ERRORS
FROM performance_schema.events_statements_summary_by_digest
WHERE DIGEST_TEXT IS NOT NULL AND DIGEST_TEXT NOT LIKE '%performance_schema%' AND DIGEST_TEXT NOT LIKE 'SHOW %'
  AND (? = '' OR SCHEMA_NAME = ?)`

// mysqlFigures name the columns after the first three of mysqlDigests.
var mysqlFigures = []string{"lockMillis", "rowsExamined", "rowsSent", "rowsAffected", "tmpDiskTables", "tmpTables", "sortRows", "noIndexUsed", "errors"}

// mysqlWaits are the instrumented waits by event, idle left out.
const mysqlWaits = `SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT / 1e9 FROM performance_schema.events_waits_summary_global_by_event_name
WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'`

// Snapshot reads the transaction counters, the digests and the waits.
func (m *MySQL) Snapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{Items: map[string]Counters{}}
	rows, err := m.db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback', 'Questions')")
	if err != nil {
		return s, fmt.Errorf("reading SHOW GLOBAL STATUS: %w", dbstats.RedactSecrets(err, m.secrets...))
	}
	status := map[string]float64{}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			_ = rows.Close()
			return s, err
		}
		status[name] = v
	}
	_ = rows.Close()
	s.Transactions = status["Com_commit"] + status["Com_rollback"]
	if s.Transactions == 0 {
		s.Transactions = status["Questions"]
	}
	s.At = time.Now()
	if !m.statements {
		return s, nil
	}
	if err := m.digests(ctx, s.Items); err != nil {
		return s, err
	}
	return s, m.waits(ctx, s.Items)
}

func (m *MySQL) digests(ctx context.Context, items map[string]Counters) error {
	rows, err := m.db.QueryContext(ctx, mysqlDigests, m.schema, m.schema)
	if err != nil {
		return fmt.Errorf("reading the statement digests: %w", dbstats.RedactSecrets(err, m.secrets...))
	}
	defer rows.Close()
	for rows.Next() {
		var text string
		vals := make([]sql.NullFloat64, 2+len(mysqlFigures))
		dest := []any{&text}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("reading the statement digests: %w", err)
		}
		if sensitive(text) {
			continue
		}
		name := collapse(text)
		c := items[name] // the same text in two schemas: one statement
		if c.Figures == nil {
			c = Counters{Kind: results.DiagnosticStatement, Figures: map[string]float64{}}
		}
		c.Calls += vals[0].Float64
		c.TimeMillis += vals[1].Float64
		for i, f := range mysqlFigures {
			c.Figures[f] += vals[2+i].Float64
		}
		items[name] = c
	}
	return rows.Err()
}

func (m *MySQL) waits(ctx context.Context, items map[string]Counters) error {
	rows, err := m.db.QueryContext(ctx, mysqlWaits)
	if err != nil {
		return fmt.Errorf("reading the waits: %w", dbstats.RedactSecrets(err, m.secrets...))
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var count, millis sql.NullFloat64
		if err := rows.Scan(&name, &count, &millis); err != nil {
			return fmt.Errorf("reading the waits: %w", err)
		}
		items[waitPrefix+name] = Counters{Kind: results.DiagnosticWait, Calls: count.Float64, TimeMillis: millis.Float64}
	}
	return rows.Err()
}

// waitPrefix keeps a wait's name apart from a statement's of the same
// text in a snapshot's items; diff takes it off.
const waitPrefix = "\x00wait:"

// Close closes the connection.
func (m *MySQL) Close() error { return m.db.Close() }

// itemName is an item's name without the snapshot's key prefix.
func itemName(key string) string { return strings.TrimPrefix(key, waitPrefix) }
