package disturb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// classOf is a database error's class: its code.
func classOf(err error) string {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var re redis.Error
	switch {
	case errors.As(err, &pe):
		return pe.Code
	case errors.As(err, &me):
		return strconv.Itoa(int(me.Number))
	case errors.As(err, &re):
		word, _, _ := strings.Cut(re.Error(), " ")
		return word
	}
	var che *chError
	if errors.As(err, &che) {
		return che.code
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed") {
		return "connection"
	}
	return ""
}

// token is a random hex string.
func token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// postgres: sessions are pgx connections named dbperf-disturb/<name>,
// cancelled with PostgreSQL's cancel request (and pg_cancel_backend from
// the control connection at the end).
type postgres struct {
	l       SQLLoad
	control *pgx.Conn
}

func (l SQLLoad) pgConfig() (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, errors.New("reading the PostgreSQL settings from the environment failed")
	}
	dbstats.ApplyConfig(cfg, l.Config)
	cfg.RuntimeParams["application_name"] = "dbperf-disturb/" + l.Name
	// A cancelled context sends PostgreSQL's cancel request, so that the
	// statement stops on the server, not only the client's wait for it.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 2 * time.Second}
	}
	return cfg, nil
}

func newPostgres(ctx context.Context, l SQLLoad) (*postgres, error) {
	cfg, err := l.pgConfig()
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = "dbperf-disturb-control"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %s", redact(err.Error(), l.Config))
	}
	return &postgres{l: l, control: conn}, nil
}

type pgSession struct{ conn *pgx.Conn }

func (p *postgres) open(ctx context.Context, _ int) (session, error) {
	cfg, err := p.l.pgConfig()
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &pgSession{conn: conn}, nil
}

func (s *pgSession) run(ctx context.Context, stmt string) error {
	_, err := s.conn.Exec(ctx, stmt)
	return err
}

func (s *pgSession) id() string { return strconv.Itoa(int(s.conn.PgConn().PID())) }

func (s *pgSession) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.conn.Close(ctx)
}

func (p *postgres) running(ctx context.Context, _ []string) (int, error) {
	var n int
	err := p.control.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
		"dbperf-disturb/"+p.l.Name).Scan(&n)
	return n, err
}

func (p *postgres) cancel(ctx context.Context, _ []string) error {
	_, err := p.control.Exec(ctx, `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
		"dbperf-disturb/"+p.l.Name)
	return err
}

func (p *postgres) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = p.control.Close(ctx)
}

// mysqlBackend: sessions are connections of their own; go-sql-driver
// only closes a connection on cancel, so their statements are killed on
// the server (KILL QUERY) from the control connection.
type mysqlBackend struct {
	l       SQLLoad
	control *sql.DB
}

func (l SQLLoad) mysqlDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	c := l.Config
	cfg.User, cfg.Passwd, cfg.Net = c.Username, c.Password, "tcp"
	cfg.Addr = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	cfg.DBName, cfg.TLS = c.Database, c.TLS
	cfg.ConnectionAttributes = "program_name:dbperf-disturb/" + l.Name
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, errors.New("configuring the MySQL client failed")
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

func newMySQL(ctx context.Context, l SQLLoad) (*mysqlBackend, error) {
	db, err := l.mysqlDB()
	if err == nil {
		err = db.PingContext(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to MySQL: %s", redact(err.Error(), l.Config))
	}
	return &mysqlBackend{l: l, control: db}, nil
}

type mysqlSession struct {
	db     *sql.DB
	conn   *sql.Conn
	connID string
}

func (m *mysqlBackend) open(ctx context.Context, _ int) (session, error) {
	db, err := m.l.mysqlDB()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		_ = conn.Close()
		_ = db.Close()
		return nil, err
	}
	return &mysqlSession{db: db, conn: conn, connID: strconv.FormatInt(id, 10)}, nil
}

func (s *mysqlSession) run(ctx context.Context, stmt string) error {
	rows, err := s.conn.QueryContext(ctx, stmt)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	return rows.Close()
}

func (s *mysqlSession) id() string { return s.connID }

func (s *mysqlSession) close() {
	_ = s.conn.Close()
	_ = s.db.Close()
}

func (m *mysqlBackend) running(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	err := m.control.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.processlist WHERE COMMAND = 'Query' AND ID IN ("+strings.Join(ids, ",")+")").Scan(&n)
	return n, err
}

func (m *mysqlBackend) cancel(ctx context.Context, ids []string) error {
	var errs []error
	for _, id := range ids {
		if id == "" {
			continue
		}
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			continue
		}
		var me *mysql.MySQLError
		if _, err := m.control.ExecContext(ctx, "KILL QUERY "+id); err != nil && (!errors.As(err, &me) || me.Number != 1094) { // 1094: no such thread
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *mysqlBackend) close() { _ = m.control.Close() }

// redisBackend: a statement is a command line; a cancelled command's
// connection is closed.
type redisBackend struct{ l SQLLoad }

func newRedis(l SQLLoad) *redisBackend { return &redisBackend{l: l} }

type redisSession struct{ c *redis.Client }

func (r *redisBackend) open(ctx context.Context, i int) (session, error) {
	c := r.l.Config
	client := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), Username: c.Username, Password: c.Password,
		TLSConfig: c.TLS, ClientName: "dbperf-disturb-" + r.l.Name, Protocol: 2, DisableIdentity: true, PoolSize: 1, MaxRetries: -1,
		ReadTimeout: -1, ContextTimeoutEnabled: true})
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, err
	}
	return &redisSession{c: client}, nil
}

func (s *redisSession) run(ctx context.Context, stmt string) error {
	words, err := splitCommand(stmt)
	if err != nil {
		return fmt.Errorf("the command %q: %w", stmt, err)
	}
	var args []any
	for _, f := range words {
		args = append(args, f)
	}
	if len(args) == 0 {
		return nil
	}
	err = s.c.Do(ctx, args...).Err()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

func (s *redisSession) id() string { return "redis" }
func (s *redisSession) close()     { _ = s.c.Close() }

func (r *redisBackend) running(context.Context, []string) (int, error) { return -1, nil }
func (r *redisBackend) cancel(context.Context, []string) error         { return nil }
func (r *redisBackend) close()                                         {}

// clickHouse: statements over the HTTP interface, each with a query id,
// killed on the server (KILL QUERY) at the end.
type clickHouse struct {
	l      SQLLoad
	client *http.Client
	prefix string
}

func newClickHouse(l SQLLoad) *clickHouse {
	tr := &http.Transport{TLSClientConfig: l.Config.TLS}
	return &clickHouse{l: l, client: &http.Client{Transport: tr}, prefix: "dbperf-disturb-" + l.Name + "-" + token(4)}
}

type chSession struct {
	ch *clickHouse
	n  int
	q  int
}

func (c *clickHouse) open(_ context.Context, i int) (session, error) {
	return &chSession{ch: c, n: i}, nil
}

func (c *clickHouse) post(ctx context.Context, queryID, stmt string) error {
	scheme := "http"
	if c.l.Config.TLS != nil {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(c.l.Config.Host, strconv.Itoa(c.l.Config.Port)), Path: "/"}
	q := url.Values{}
	if queryID != "" {
		q.Set("query_id", queryID)
	}
	if c.l.Config.Database != "" {
		q.Set("database", c.l.Config.Database)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(stmt))
	if err != nil {
		return err
	}
	if c.l.Config.Username != "" {
		req.Header.Set("X-ClickHouse-User", c.l.Config.Username)
	}
	if c.l.Config.Password != "" {
		req.Header.Set("X-ClickHouse-Key", c.l.Config.Password)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return &chError{code: resp.Header.Get("X-ClickHouse-Exception-Code"), msg: strings.TrimSpace(string(body))}
	}
	return nil
}

func (s *chSession) run(ctx context.Context, stmt string) error {
	s.q++
	return s.ch.post(ctx, fmt.Sprintf("%s-%d-%d", s.ch.prefix, s.n, s.q), stmt)
}

func (s *chSession) id() string { return s.ch.prefix }
func (s *chSession) close()     {}

func (c *clickHouse) running(context.Context, []string) (int, error) { return -1, nil }

func (c *clickHouse) cancel(ctx context.Context, _ []string) error {
	return c.post(ctx, "", "KILL QUERY WHERE query_id LIKE '"+c.prefix+"-%' ASYNC")
}

func (c *clickHouse) close() { c.client.CloseIdleConnections() }

// chError is a ClickHouse exception: its code (X-ClickHouse-Exception-Code)
// and message.
type chError struct{ code, msg string }

func (e *chError) Error() string { return "ClickHouse exception " + e.code + ": " + e.msg }
