package dbstats

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

var mysqlCounters = []string{"Questions", "Com_commit", "Com_rollback", "Handler_write", "Handler_update", "Handler_delete",
	"Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests", "Created_tmp_disk_tables", "Uptime"}

// mysqlOptionalCounters are counters some servers lack: MySQL's InnoDB
// row counters, which MariaDB no longer has (10.11 here), and the row lock
// waits. Figures from them appear where they exist.
var mysqlOptionalCounters = []string{"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Innodb_row_lock_waits", "Innodb_row_lock_time"}

// mysqlRedo are the variables that count the redo log's bytes, in order
// of preference; the first the server has is read: the bytes written to
// the redo log (MySQL to 8.4, MariaDB), else the log sequence number,
// which counts bytes of redo too (MySQL 8.0.30 and later, MariaDB). A
// sequence number goes on across a restart: it has an epoch of its own
// that never changes.
var mysqlRedo = []struct {
	name string
	lsn  bool
}{{"Innodb_os_log_written", false}, {"Innodb_redo_log_current_lsn", true}, {"Innodb_lsn_current", true}}

var mysqlGauges = []string{"Threads_running", "Threads_connected"}

// mysqlQuery reads only the variables the figures need, in one statement.
var mysqlQuery = "SHOW GLOBAL STATUS WHERE Variable_name IN ('" +
	strings.Join(slices.Concat(mysqlCounters, mysqlOptionalCounters, mysqlRedoNames(), mysqlGauges), "','") + "')"

func mysqlRedoNames() []string {
	var names []string
	for _, v := range mysqlRedo {
		names = append(names, v.name)
	}
	return names
}

// MySQL polls SHOW GLOBAL STATUS of a MySQL or MariaDB server.
type MySQL struct {
	db      *sql.DB
	addr    string
	secrets []string
	// MySQL has no run id: a restart shows as Uptime going down, and
	// generation counts those, so every counter is taken as restarted.
	lastUptime float64
	generation int
}

// NewMySQL connects to c.Host:c.Port with c's credentials and checks
// that the statement answers.
func NewMySQL(ctx context.Context, c Config) (*MySQL, error) {
	db, addr, err := OpenMySQL(c, "dbperf-dbstats")
	if err != nil {
		return nil, err
	}
	m := &MySQL{db: db, addr: addr, secrets: []string{c.Username, c.Password}}
	m.db.SetMaxOpenConns(1)
	m.db.SetMaxIdleConns(1)
	if _, err := m.Poll(ctx); err != nil {
		_ = m.db.Close()
		return nil, err
	}
	return m, nil
}

// Source names the statistics.
func (m *MySQL) Source() string { return SourceMySQL }

// SourceMySQL names MySQL's and MariaDB's statistics.
const SourceMySQL = "mysql"

// Poll runs the one SHOW GLOBAL STATUS; database/sql reconnects after a
// lost connection.
func (m *MySQL) Poll(ctx context.Context) (Reading, error) {
	vals, err := m.query(ctx)
	if err != nil {
		return Reading{}, redact(fmt.Sprintf("reading SHOW GLOBAL STATUS of %s", m.addr), err, m.secrets...)
	}
	return m.reading(vals), nil
}

// reading makes a Reading of the variables' values.
func (m *MySQL) reading(vals map[string]float64) Reading {
	r := Reading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	for _, k := range mysqlCounters {
		r.Counters[k] = vals[k]
	}
	for _, k := range mysqlOptionalCounters {
		if v, ok := vals[k]; ok {
			r.Counters[k] = v
		}
	}
	for _, v := range mysqlRedo {
		if n, ok := vals[v.name]; ok {
			r.Counters["redo_bytes"] = n
			if v.lsn {
				r.Epochs = map[string]string{"redo_bytes": "lsn"}
			}
			break
		}
	}
	for _, k := range mysqlGauges {
		r.Gauges[k] = vals[k]
	}
	// The poller's own thread is connected and running its statement.
	r.Gauges["Threads_running"] = max(r.Gauges["Threads_running"]-1, 0)
	r.Gauges["Threads_connected"] = max(r.Gauges["Threads_connected"]-1, 0)
	// Buffer pool requests that did not go to disk: the hits.
	r.Counters["buffer_pool_hits"] = max(vals["Innodb_buffer_pool_read_requests"]-vals["Innodb_buffer_pool_reads"], 0)
	if vals["Uptime"] < m.lastUptime {
		m.generation++
	}
	m.lastUptime = vals["Uptime"]
	r.Epoch = strconv.Itoa(m.generation)
	return r
}

func (m *MySQL) query(ctx context.Context) (map[string]float64, error) {
	rows, err := m.db.QueryContext(ctx, mysqlQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := map[string]float64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			vals[name] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, k := range slices.Concat(mysqlCounters, mysqlGauges) {
		if _, ok := vals[k]; !ok {
			return nil, fmt.Errorf("the server has no status variable %s", k)
		}
	}
	return vals, nil
}

// Figures of MySQL. The poll is one statement: one of Questions per poll
// is the poller's.
func (m *MySQL) Figures() []Def {
	return []Def{
		{Name: "questionsPerSecond", Kind: PerSecond, Key: "Questions", Unit: "statements/s", OwnPerPoll: 1},
		{Name: "commitsPerSecond", Kind: PerSecond, Key: "Com_commit", Unit: "tx/s"},
		{Name: "rollbacksPerSecond", Kind: PerSecond, Key: "Com_rollback", Unit: "tx/s"},
		{Name: "handlerWritesPerSecond", Kind: PerSecond, Key: "Handler_write", Unit: "rows/s"},
		{Name: "handlerUpdatesPerSecond", Kind: PerSecond, Key: "Handler_update", Unit: "rows/s"},
		{Name: "handlerDeletesPerSecond", Kind: PerSecond, Key: "Handler_delete", Unit: "rows/s"},
		{Name: "rowsReadPerSecond", Kind: PerSecond, Key: "Innodb_rows_read", Unit: "rows/s"},
		{Name: "rowsInsertedPerSecond", Kind: PerSecond, Key: "Innodb_rows_inserted", Unit: "rows/s"},
		{Name: "rowsUpdatedPerSecond", Kind: PerSecond, Key: "Innodb_rows_updated", Unit: "rows/s"},
		{Name: "rowsDeletedPerSecond", Kind: PerSecond, Key: "Innodb_rows_deleted", Unit: "rows/s"},
		{Name: "bufferPoolReadRequestsPerSecond", Kind: PerSecond, Key: "Innodb_buffer_pool_read_requests", Unit: "reads/s"},
		{Name: "bufferPoolDiskReadsPerSecond", Kind: PerSecond, Key: "Innodb_buffer_pool_reads", Unit: "reads/s"},
		{Name: "bufferHitPercent", Kind: Percent, Key: "buffer_pool_hits", Other: "Innodb_buffer_pool_reads", Unit: "%"},
		{Name: "rowLockWaitsPerSecond", Kind: PerSecond, Key: "Innodb_row_lock_waits", Unit: "waits/s"},
		{Name: "rowLockWaitMillisPerSecond", Kind: PerSecond, Key: "Innodb_row_lock_time", Unit: "ms/s"},
		{Name: "redoBytesPerSecond", Kind: PerSecond, Key: "redo_bytes", Unit: "bytes/s"},
		{Name: "tempDiskTablesPerSecond", Kind: PerSecond, Key: "Created_tmp_disk_tables", Unit: "tables/s"},
		{Name: "threadsRunning", Kind: Gauge, Key: "Threads_running", Unit: "threads"},
		{Name: "threadsConnected", Kind: Gauge, Key: "Threads_connected", Unit: "threads"},
	}
}

// Close ends the connection.
func (m *MySQL) Close() error { return m.db.Close() }

// OpenMySQL is a database handle on c's server (no connection made yet),
// its connections named program, and the address it reaches.
func OpenMySQL(c Config, program string) (*sql.DB, string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net = c.Username, c.Password, "tcp"
	cfg.Addr = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	cfg.DBName = c.Database
	cfg.TLS = c.TLS
	cfg.ConnectionAttributes = "program_name:" + program
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", redact("configuring the MySQL client", err, c.Username, c.Password)
	}
	return sql.OpenDB(conn), cfg.Addr, nil
}
