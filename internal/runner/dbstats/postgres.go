package dbstats

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// postgresQuery reads the target database's counters and its client
// sessions by state in one statement; the poller's own session is not
// counted. The epoch changes with a restart or a statistics reset.
const postgresQuery = `SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes, d.deadlocks,
  d.tup_returned, d.tup_fetched, d.tup_inserted, d.tup_updated, d.tup_deleted,
  pg_postmaster_start_time()::text || ' ' || coalesce(d.stats_reset::text, ''),
  a.active, a.idle, a.idle_in_tx
FROM pg_stat_database d, LATERAL (
  SELECT count(*) FILTER (WHERE state = 'active') AS active,
         count(*) FILTER (WHERE state = 'idle') AS idle,
         count(*) FILTER (WHERE state LIKE 'idle in transaction%') AS idle_in_tx
  FROM pg_stat_activity
  WHERE datname = d.datname AND backend_type = 'client backend' AND pid <> pg_backend_pid()) a
WHERE d.datname = current_database()`

var postgresCounters = []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit", "temp_bytes", "deadlocks",
	"tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted"}

// Postgres polls pg_stat_database for the database it connects to (the
// target's) and pg_stat_activity for that database's client sessions. It
// is safe for concurrent use: its one connection serves one poll at a time
// (a pgx.Conn used by two goroutines at once fails with "conn busy").
type Postgres struct {
	cfg     *pgx.ConnConfig
	mu      sync.Mutex
	conn    *pgx.Conn
	secrets []string
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
	p := &Postgres{cfg: cfg, secrets: []string{cfg.User, cfg.Password}}
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

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
	p.conn = conn
	return nil
}

// Source names the statistics.
func (p *Postgres) Source() string { return SourcePostgreSQL }

// SourcePostgreSQL names PostgreSQL's statistics.
const SourcePostgreSQL = "postgresql"

// Poll runs the one statement, reconnecting first if the connection was
// lost (a restarted server).
func (p *Postgres) Poll(ctx context.Context) (Reading, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil || p.conn.IsClosed() {
		if err := p.connect(ctx); err != nil {
			return Reading{}, err
		}
	}
	c := make([]int64, len(postgresCounters))
	var active, idle, idleInTx int64
	dest := make([]any, 0, len(c)+4)
	for i := range c {
		dest = append(dest, &c[i])
	}
	r := Reading{Counters: map[string]float64{}}
	dest = append(dest, &r.Epoch, &active, &idle, &idleInTx)
	if err := p.conn.QueryRow(ctx, postgresQuery).Scan(dest...); err != nil {
		return Reading{}, redact("reading pg_stat_database", err, p.secrets...)
	}
	for i, k := range postgresCounters {
		r.Counters[k] = float64(c[i])
	}
	r.Gauges = map[string]float64{"active": float64(active), "idle": float64(idle), "idle_in_tx": float64(idleInTx)}
	return r, nil
}

// Figures of PostgreSQL. The poll is a transaction of its own in the
// target database: one commit per poll is the poller's.
func (p *Postgres) Figures() []Def {
	return []Def{
		{Name: "commitsPerSecond", Kind: PerSecond, Key: "xact_commit", Unit: "tx/s", OwnPerPoll: 1},
		{Name: "rollbacksPerSecond", Kind: PerSecond, Key: "xact_rollback", Unit: "tx/s"},
		{Name: "blocksReadPerSecond", Kind: PerSecond, Key: "blks_read", Unit: "blocks/s"},
		{Name: "blocksHitPerSecond", Kind: PerSecond, Key: "blks_hit", Unit: "blocks/s"},
		{Name: "bufferHitPercent", Kind: Percent, Key: "blks_hit", Other: "blks_read", Unit: "%"},
		{Name: "tempBytesPerSecond", Kind: PerSecond, Key: "temp_bytes", Unit: "bytes/s"},
		{Name: "deadlocks", Kind: Count, Key: "deadlocks", Unit: "count", Direction: results.LowerIsBetter},
		{Name: "rowsReturnedPerSecond", Kind: PerSecond, Key: "tup_returned", Unit: "rows/s"},
		{Name: "rowsFetchedPerSecond", Kind: PerSecond, Key: "tup_fetched", Unit: "rows/s"},
		{Name: "rowsInsertedPerSecond", Kind: PerSecond, Key: "tup_inserted", Unit: "rows/s"},
		{Name: "rowsUpdatedPerSecond", Kind: PerSecond, Key: "tup_updated", Unit: "rows/s"},
		{Name: "rowsDeletedPerSecond", Kind: PerSecond, Key: "tup_deleted", Unit: "rows/s"},
		{Name: "sessionsActive", Kind: Gauge, Key: "active", Unit: "sessions"},
		{Name: "sessionsIdle", Kind: Gauge, Key: "idle", Unit: "sessions"},
		{Name: "sessionsIdleInTransaction", Kind: Gauge, Key: "idle_in_tx", Unit: "sessions"},
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
