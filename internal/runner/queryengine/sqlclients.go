package queryengine

import (
	"context"
	"crypto/tls"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// postgres runs statements with the simple query protocol, as psql does,
// reading every row without decoding it; settings are run-time parameters
// of the connection.
type postgres struct {
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
}

func connectPostgres(ctx context.Context, t Target, tc *tls.Config) (*postgres, error) {
	// Not from the environment: PG* variables of the image must not
	// change what the spec says.
	cfg, err := pgx.ParseConfig("host=" + t.Host + " port=" + strconv.Itoa(t.Port) + " sslmode=prefer connect_timeout=10")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg.User, cfg.Password, cfg.Database = t.Username, t.Password, t.Database
	if tc != nil {
		cfg.TLSConfig, cfg.Fallbacks = tc, nil
	}
	cfg.RuntimeParams["application_name"] = "dbperf-query"
	for k, v := range t.Settings {
		cfg.RuntimeParams[k] = v
	}
	p := &postgres{cfg: cfg}
	return p, p.connect(ctx)
}

func (p *postgres) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return fmt.Errorf("postgres: connecting to %s: %w", hostPort(p.cfg.Host, int(p.cfg.Port)), err)
	}
	p.conn = conn
	return nil
}

// QueryIDs: PostgreSQL's protocol names no statement.
func (*postgres) QueryIDs() bool { return false }

func (p *postgres) ServerVersion(ctx context.Context) (string, error) {
	var v string
	err := p.conn.QueryRow(ctx, "SHOW server_version").Scan(&v)
	return v, err
}

func (p *postgres) Exec(ctx context.Context, sql, _ string) (int64, error) {
	if p.conn.IsClosed() {
		// A run past its timeout closes the connection: the next one
		// opens another.
		if err := p.connect(ctx); err != nil {
			return 0, err
		}
	}
	var rows int64
	mrr := p.conn.PgConn().Exec(ctx, sql)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() {
			rows++
		}
		if _, err := rr.Close(); err != nil {
			_ = mrr.Close()
			return rows, err
		}
	}
	return rows, mrr.Close()
}

func (p *postgres) Load(ctx context.Context, table string, format benchv1.QueryLoadFormat, r io.Reader) error {
	f := "csv"
	if format == benchv1.QueryLoadTSV {
		f = "text"
	}
	_, err := p.conn.PgConn().CopyFrom(ctx, r, "COPY "+table+" FROM STDIN WITH (FORMAT "+f+")")
	return err
}

func (p *postgres) Close() error { return p.conn.Close(context.Background()) }

// mySQL runs statements through database/sql on one connection (the text
// protocol: no arguments), scanning every row as raw bytes; settings are
// session variables the driver sets on connecting.
type mySQL struct {
	db *sql.DB
}

// registrations numbers the TLS configurations and reader handlers
// registered with the driver, whose registries are global.
var registrations atomic.Int64

func connectMySQL(t Target, tc *tls.Config) (*mySQL, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = t.Username, t.Password, t.Database
	cfg.Net, cfg.Addr = "tcp", hostPort(t.Host, t.Port)
	cfg.AllowNativePasswords = true
	if tc != nil {
		name := "dbperf-query-" + strconv.FormatInt(registrations.Add(1), 10)
		if err := mysql.RegisterTLSConfig(name, tc); err != nil {
			return nil, err
		}
		cfg.TLSConfig = name
	}
	if len(t.Settings) > 0 {
		cfg.Params = map[string]string{}
		for k, v := range t.Settings {
			cfg.Params[k] = sqlValue(v)
		}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return &mySQL{db: db}, nil
}

// sqlValue is a session variable's value as SET takes it: a number as is,
// anything else quoted (the schema allows no quote in it).
func sqlValue(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	if strings.EqualFold(v, "on") || strings.EqualFold(v, "off") || strings.EqualFold(v, "default") {
		return v
	}
	return "'" + v + "'"
}

// QueryIDs: MySQL's protocol names no statement.
func (*mySQL) QueryIDs() bool { return false }

func (m *mySQL) ServerVersion(ctx context.Context) (string, error) {
	var v string
	err := m.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
	return v, err
}

func (m *mySQL) Exec(ctx context.Context, query, _ string) (int64, error) {
	rs, err := m.db.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	var n int64
	for {
		cols, err := rs.Columns()
		if err != nil {
			return n, err
		}
		raw := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		for rs.Next() {
			if err := rs.Scan(dest...); err != nil {
				return n, err
			}
			n++
		}
		if !rs.NextResultSet() {
			break
		}
	}
	return n, rs.Err()
}

// Load sends the file with LOAD DATA LOCAL INFILE through a reader
// handler: the driver streams it, and no file on disk is opened.
func (m *mySQL) Load(ctx context.Context, table string, format benchv1.QueryLoadFormat, r io.Reader) error {
	name := "dbperf-load-" + strconv.FormatInt(registrations.Add(1), 10)
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	fields := `FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' ESCAPED BY '\\'`
	if format == benchv1.QueryLoadTSV {
		fields = `FIELDS TERMINATED BY '\t' ESCAPED BY '\\'`
	}
	_, err := m.db.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table+" "+fields+` LINES TERMINATED BY '\n'`)
	return err
}

func (m *mySQL) Close() error { return m.db.Close() }
