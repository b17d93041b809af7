package dbstats

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// pgColumn is one number a poll reads: a counter or a gauge under key.
type pgColumn struct {
	key   string
	expr  string
	gauge bool
}

// pgOwnEpoch is the epoch of counters that go by their own (Reading.Epochs):
// a shared view's statistics, reset by pg_stat_reset_shared() alone.
type pgOwnEpoch struct {
	expr string
	keys []string
}

// postgresBase reads the target database's counters and its client
// sessions by state; the poller's own session is not counted.
var postgresBase = []pgColumn{
	{key: "xact_commit", expr: "d.xact_commit"}, {key: "xact_rollback", expr: "d.xact_rollback"},
	{key: "blks_read", expr: "d.blks_read"}, {key: "blks_hit", expr: "d.blks_hit"},
	{key: "temp_files", expr: "d.temp_files"}, {key: "temp_bytes", expr: "d.temp_bytes"}, {key: "deadlocks", expr: "d.deadlocks"},
	{key: "tup_returned", expr: "d.tup_returned"}, {key: "tup_fetched", expr: "d.tup_fetched"}, {key: "tup_inserted", expr: "d.tup_inserted"},
	{key: "tup_updated", expr: "d.tup_updated"}, {key: "tup_deleted", expr: "d.tup_deleted"},
	{key: "active", expr: "a.active", gauge: true}, {key: "idle", expr: "a.idle", gauge: true}, {key: "idle_in_tx", expr: "a.idle_in_tx", gauge: true},
}

const postgresActivity = `LATERAL (
  SELECT count(*) FILTER (WHERE state = 'active') AS active,
         count(*) FILTER (WHERE state = 'idle') AS idle,
         count(*) FILTER (WHERE state LIKE 'idle in transaction%') AS idle_in_tx
  FROM pg_stat_activity
  WHERE datname = d.datname AND backend_type = 'client backend' AND pid <> pg_backend_pid()) a`

// postgresSize is the target database's size on disk. It stats every file
// of the database (about 2 µs a file: 0.5 ms for the empty database, 8 ms
// with 4,400 relations, 57 ms with 20,000; BenchmarkPostgresDatabaseSize),
// so it is read at a window's first and last polls and at most once per
// postgresSizeEvery between them.
var postgresSize = pgColumn{key: "database_size", expr: "pg_database_size(d.datid)", gauge: true}

const postgresSizeEvery = 30 * time.Second

// postgresServer is what the poller found at connecting: the version and
// which of the version-dependent views it has.
type postgresServer struct {
	versionNum                  int
	version                     string
	wal, checkpointer, bgwriter bool
}

// postgresProbe finds them, once per connection.
const postgresProbe = `SELECT current_setting('server_version_num')::int, split_part(current_setting('server_version'), ' ', 1),
  to_regclass('pg_stat_wal') IS NOT NULL, to_regclass('pg_stat_checkpointer') IS NOT NULL, to_regclass('pg_stat_bgwriter') IS NOT NULL`

// postgresPlan is the one statement of a poll for a server: the database's
// columns and those of the shared views the version has (one sub-select
// each in the FROM list), and notes on what it lacks.
type postgresPlan struct {
	cols   []pgColumn
	epochs []pgOwnEpoch
	from   []string
	notes  []string
	// queries are statement(false) and statement(true), built once;
	// columns are their numbers' columns.
	queries [2]string
	columns [2][]pgColumn
}

func planPostgres(s postgresServer) postgresPlan {
	pl := postgresPlan{cols: slices.Clone(postgresBase), from: []string{"pg_stat_database d", postgresActivity}}
	shared := func(alias, from string, cols ...pgColumn) {
		pl.from = append(pl.from, fmt.Sprintf("(%s) %s", from, alias))
		e := pgOwnEpoch{expr: fmt.Sprintf("pg_postmaster_start_time()::text || ' ' || coalesce(%s.stats_reset::text, '')", alias)}
		for _, c := range cols {
			c.expr = alias + "." + c.expr
			pl.cols = append(pl.cols, c)
			e.keys = append(e.keys, c.key)
		}
		pl.epochs = append(pl.epochs, e)
	}
	checkpoints := []pgColumn{{key: "checkpoints_timed", expr: "timed"}, {key: "checkpoints_req", expr: "requested"}, {key: "buffers_checkpoint", expr: "buffers"}}
	switch {
	// PostgreSQL 17 moved the checkpoints' counters to pg_stat_checkpointer.
	case s.versionNum >= 170000 && s.checkpointer:
		shared("c", "SELECT num_timed AS timed, num_requested AS requested, buffers_written AS buffers, stats_reset FROM pg_stat_checkpointer", checkpoints...)
	case s.versionNum < 170000 && s.bgwriter:
		shared("c", "SELECT checkpoints_timed AS timed, checkpoints_req AS requested, buffers_checkpoint AS buffers, stats_reset FROM pg_stat_bgwriter", checkpoints...)
	default:
		view := "pg_stat_bgwriter"
		if s.versionNum >= 170000 {
			view = "pg_stat_checkpointer"
		}
		pl.notes = append(pl.notes, fmt.Sprintf("PostgreSQL %s has no %s: checkpointsTimed, checkpointsRequested and checkpointBuffersWrittenPerSecond are left out", s.version, view))
	}
	if s.wal {
		shared("w", "SELECT wal_bytes, stats_reset FROM pg_stat_wal", pgColumn{key: "wal_bytes", expr: "wal_bytes"})
	} else {
		pl.notes = append(pl.notes, fmt.Sprintf("PostgreSQL %s has no pg_stat_wal (PostgreSQL 14 and later have it): walBytesPerSecond is left out", s.version))
	}
	pl.queries[0], pl.columns[0] = pl.statement(false)
	pl.queries[1], pl.columns[1] = pl.statement(true)
	return pl
}

// statement is the plan's SELECT, with the database's size or without:
// its columns are the reading's epoch, the numbers of cols (NULL where a
// server has none) and the own epochs.
func (pl postgresPlan) statement(withSize bool) (string, []pgColumn) {
	cols := pl.cols
	if withSize {
		cols = append(slices.Clone(cols), postgresSize)
	}
	exprs := []string{"pg_postmaster_start_time()::text || ' ' || coalesce(d.stats_reset::text, '')"}
	for _, c := range cols {
		exprs = append(exprs, c.expr+"::float8")
	}
	for _, e := range pl.epochs {
		exprs = append(exprs, e.expr)
	}
	return "SELECT " + strings.Join(exprs, ",\n  ") + "\nFROM " + strings.Join(pl.from, ",\n  ") + "\nWHERE d.datname = current_database()", cols
}

// Postgres polls pg_stat_database for the database it connects to (the
// target's), pg_stat_activity for that database's client sessions, and
// the server's checkpoints and WAL (pg_stat_bgwriter or, from PostgreSQL
// 17, pg_stat_checkpointer; pg_stat_wal from 14), all in one statement
// chosen at connecting by the server's version. It is safe for concurrent
// use: its one connection serves one poll at a time (a pgx.Conn used by
// two goroutines at once fails with "conn busy").
type Postgres struct {
	cfg     *pgx.ConnConfig
	mu      sync.Mutex
	conn    *pgx.Conn
	secrets []string
	plan    postgresPlan
	notes   []string
	// sizeEvery is the least time between two reads of the database's
	// size between a window's edges (0: every poll); sizeAt the last read.
	sizeEvery time.Duration
	sizeAt    time.Time
}

// NewPostgres connects as cfg says; what it leaves empty comes from libpq's
// PG* variables (PGHOST, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE, ...),
// those the pgbench invocation sets.
func NewPostgres(ctx context.Context, c Config) (*Postgres, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, redact("reading the PostgreSQL settings from the environment", err, c.Username, c.Password)
	}
	applyConfig(cfg, c)
	p := &Postgres{cfg: cfg, secrets: []string{cfg.User, cfg.Password}, sizeEvery: postgresSizeEvery}
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// ApplyConfig sets where and as whom a pgx configuration connects from c
// (what c leaves empty stays libpq's environment), named dbperf-dbstats;
// a caller of its own names its connections after.
func ApplyConfig(cfg *pgx.ConnConfig, c Config) { applyConfig(cfg, c) }

func applyConfig(cfg *pgx.ConnConfig, c Config) {
	if c.Host != "" {
		cfg.Host = c.Host
	}
	if c.Port != 0 {
		cfg.Port = uint16(c.Port)
	}
	if c.Username != "" {
		cfg.User = c.Username
	}
	if c.Password != "" {
		cfg.Password = c.Password
	}
	if c.Database != "" {
		cfg.Database = c.Database
	}
	if c.TLS != nil {
		cfg.TLSConfig = c.TLS
		cfg.Fallbacks = nil
	}
	cfg.RuntimeParams["application_name"] = "dbperf-dbstats"
}

func (p *Postgres) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return redact(fmt.Sprintf("connecting to PostgreSQL at %s:%d", p.cfg.Host, p.cfg.Port), err, p.secrets...)
	}
	var srv postgresServer
	if err := conn.QueryRow(ctx, postgresProbe).Scan(&srv.versionNum, &srv.version, &srv.wal, &srv.checkpointer, &srv.bgwriter); err != nil {
		_ = conn.Close(context.Background())
		return redact("reading the PostgreSQL server's version", err, p.secrets...)
	}
	p.conn = conn
	p.setPlan(planPostgres(srv))
	return nil
}

// setPlan takes the statement of a server's version, keeping the notes of
// every version connected to (a server upgraded while polled).
func (p *Postgres) setPlan(pl postgresPlan) {
	p.plan = pl
	for _, n := range pl.notes {
		if !slices.Contains(p.notes, n) {
			p.notes = append(p.notes, n)
		}
	}
}

// Notes says which figures the server's version leaves out.
func (p *Postgres) Notes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notes)
}

// Source names the statistics.
func (p *Postgres) Source() string { return SourcePostgreSQL }

// SourcePostgreSQL names PostgreSQL's statistics.
const SourcePostgreSQL = "postgresql"

// Poll runs the one statement, reconnecting first if the connection was
// lost (a restarted server). The database's size is in it at a window's
// edges and at most once per sizeEvery between them.
// settleFor bounds the wait of the window's last poll for the database's
// other sessions to end.
const settleFor = 2 * time.Second

// Settle waits, at most settleFor, until the database has no client
// session but the runner's own (dbperf-*): PostgreSQL 15+ backends
// publish their counters at most once a second while they run and at once
// when they end, so a last poll taken as the tool's clients disconnect
// missed up to a second of each one's commits (CI: 5,316 of 6,000). A
// database with other clients (another load generator, another tenant)
// waits the bound; the window's end stays the tool's (lastPoll).
func (p *Postgres) Settle(ctx context.Context) {
	deadline := time.Now().Add(settleFor)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		p.mu.Lock()
		n, err := 0, error(nil)
		if p.conn != nil && !p.conn.IsClosed() {
			err = p.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
				AND application_name NOT LIKE 'dbperf-%'`).Scan(&n)
		}
		p.mu.Unlock()
		if err != nil || n == 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *Postgres) Poll(ctx context.Context) (Reading, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil || p.conn.IsClosed() {
		if err := p.connect(ctx); err != nil {
			return Reading{}, err
		}
	}
	withSize := isWindowEdge(ctx) || p.sizeAt.IsZero() || time.Since(p.sizeAt) >= p.sizeEvery
	which := 0
	if withSize {
		which = 1
	}
	query, cols := p.plan.queries[which], p.plan.columns[which]
	r := Reading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	vals := make([]*float64, len(cols))
	epochs := make([]string, len(p.plan.epochs))
	dest := []any{&r.Epoch}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	for i := range epochs {
		dest = append(dest, &epochs[i])
	}
	if err := p.conn.QueryRow(ctx, query).Scan(dest...); err != nil {
		return Reading{}, redact("reading pg_stat_database", err, p.secrets...)
	}
	for i, c := range cols {
		switch {
		case vals[i] == nil: // none on this server: no figure rather than a zero
		case c.gauge:
			r.Gauges[c.key] = *vals[i]
		default:
			r.Counters[c.key] = *vals[i]
		}
	}
	for i, e := range p.plan.epochs {
		for _, k := range e.keys {
			if r.Epochs == nil {
				r.Epochs = map[string]string{}
			}
			r.Epochs[k] = epochs[i]
		}
	}
	if withSize {
		p.sizeAt = time.Now()
	}
	return r, nil
}

// Figures of PostgreSQL. The poll is a transaction of its own in the
// target database: one commit per poll is the poller's. The checkpoints
// and the WAL are the whole server's; the rest the target database's.
func (p *Postgres) Figures() []Def {
	return []Def{
		{Name: "commitsPerSecond", Kind: PerSecond, Key: "xact_commit", Unit: "tx/s", OwnPerPoll: 1},
		{Name: "rollbacksPerSecond", Kind: PerSecond, Key: "xact_rollback", Unit: "tx/s"},
		{Name: "blocksReadPerSecond", Kind: PerSecond, Key: "blks_read", Unit: "blocks/s"},
		{Name: "blocksHitPerSecond", Kind: PerSecond, Key: "blks_hit", Unit: "blocks/s"},
		{Name: "bufferHitPercent", Kind: Percent, Key: "blks_hit", Other: "blks_read", Unit: "%"},
		{Name: "tempFilesPerSecond", Kind: PerSecond, Key: "temp_files", Unit: "files/s"},
		{Name: "tempBytesPerSecond", Kind: PerSecond, Key: "temp_bytes", Unit: "bytes/s"},
		{Name: "deadlocks", Kind: Count, Key: "deadlocks", Unit: "count", Direction: results.LowerIsBetter},
		{Name: "checkpointsTimed", Kind: Count, Key: "checkpoints_timed", Unit: "count"},
		{Name: "checkpointsRequested", Kind: Count, Key: "checkpoints_req", Unit: "count"},
		{Name: "checkpointBuffersWrittenPerSecond", Kind: PerSecond, Key: "buffers_checkpoint", Unit: "buffers/s"},
		{Name: "walBytesPerSecond", Kind: PerSecond, Key: "wal_bytes", Unit: "bytes/s"},
		{Name: "rowsReturnedPerSecond", Kind: PerSecond, Key: "tup_returned", Unit: "rows/s"},
		{Name: "rowsFetchedPerSecond", Kind: PerSecond, Key: "tup_fetched", Unit: "rows/s"},
		{Name: "rowsInsertedPerSecond", Kind: PerSecond, Key: "tup_inserted", Unit: "rows/s"},
		{Name: "rowsUpdatedPerSecond", Kind: PerSecond, Key: "tup_updated", Unit: "rows/s"},
		{Name: "rowsDeletedPerSecond", Kind: PerSecond, Key: "tup_deleted", Unit: "rows/s"},
		{Name: "sessionsActive", Kind: Gauge, Key: "active", Unit: "sessions"},
		{Name: "sessionsIdle", Kind: Gauge, Key: "idle", Unit: "sessions"},
		{Name: "sessionsIdleInTransaction", Kind: Gauge, Key: "idle_in_tx", Unit: "sessions"},
		{Name: "databaseSizeBytes", Kind: Gauge, Key: "database_size", Unit: "bytes"},
	}
}

// Close ends the connection.
func (p *Postgres) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return nil
	}
	return p.conn.Close(context.Background())
}
