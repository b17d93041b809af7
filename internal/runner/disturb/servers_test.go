package disturb

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// testTimeout bounds every test's own waits and the disturbance's context.
const testTimeout = 90 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// logBuffer is the disturbance's log, written from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startPostgres(t *testing.T) (testutil.Postgres, dbstats.Config) {
	t.Helper()
	srv := testutil.StartPostgres(t)
	return srv, dbstats.Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database}
}

// pgConnect is the test's own connection, to look at the server.
func pgConnect(t *testing.T, c dbstats.Config) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(testContext(t), fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable application_name=test",
		c.Host, c.Port, c.Username, c.Password, c.Database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// startMariaDB starts a server with a password user bench and a database
// bench, as the mysql image's init would create them.
func startMariaDB(t *testing.T, password string) (testutil.MariaDB, dbstats.Config) {
	t.Helper()
	// Not t.TempDir(): the server runs as the mysql user, who must reach it.
	dir, err := os.MkdirTemp("", "dbperf-disturb-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	db := testutil.StartMariaDB(t, dir)
	sql := fmt.Sprintf("CREATE USER 'bench'@'%%' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO 'bench'@'%%'; CREATE DATABASE bench;", password)
	if out, err := db.Client("--socket="+db.Socket, "-e", sql); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return db, dbstats.Config{Host: "127.0.0.1", Port: db.Port, Username: "bench", Password: password, Database: "bench"}
}

// mariaQuery runs a statement as root over the socket and returns its
// output without headers.
func mariaQuery(db testutil.MariaDB, statement string) (string, error) {
	out, err := db.Client("--socket="+db.Socket, "-N", "-B", "-e", statement)
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, out)
	}
	return string(bytes.TrimSpace([]byte(out))), nil
}
