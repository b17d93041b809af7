package dbstats

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// startMariaDB starts a server with a password user bench, as the mysql
// image's init would create one.
func startMariaDB(t testing.TB, password string) testutil.MariaDB {
	t.Helper()
	// Not t.TempDir(): the server runs as the mysql user, who must reach it.
	dir, err := os.MkdirTemp("", "dbperf-dbstats-mariadb-")
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
	return db
}

// mysqlLoad runs clients×perClient iterations of real statements: an
// INSERT and a SELECT, and every tenth a transaction of an UPDATE. It
// returns the statements sent, the rows inserted and the commits.
func mysqlLoad(t *testing.T, port int, password string, clients, perClient int) (statements, inserts, commits int) {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "bench", password, "tcp", "127.0.0.1:"+strconv.Itoa(port), "bench"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(clients)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kv (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				if _, err := db.ExecContext(ctx, "INSERT INTO kv (v) VALUES (?)", i); err != nil {
					errs <- err
					return
				}
				var n int
				if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM kv WHERE v = ?", i).Scan(&n); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					tx, err := db.BeginTx(ctx, nil)
					if err == nil {
						_, err = tx.ExecContext(ctx, "UPDATE kv SET v = v + 1 WHERE id = ?", c+1)
					}
					if err == nil {
						err = tx.Commit()
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	perTx := 3 // START TRANSACTION, UPDATE, COMMIT
	txs := clients * ((perClient + 9) / 10)
	return 1 + clients*perClient*2 + txs*perTx, clients * perClient, txs
}

// TestMySQLQuestionsMatchTheStatements: while a Go loop of real statements
// runs, the server's Questions, commits and inserted rows agree with what
// it sent.
func TestMySQLQuestionsMatchTheStatements(t *testing.T) {
	const password = "pw-dbstats-test"
	srv := startMariaDB(t, password)
	ctx := context.Background()
	p, err := NewMySQL(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := Start(ctx, p, testInterval)
	statements, inserts, commits := mysqlLoad(t, srv.Port, password, 4, 1500)
	rep := rec.Stop(ctx)
	window := mustFigure(t, rep, "windowSeconds")
	questions := mustFigure(t, rep, "questionsPerSecond") * window
	t.Logf("statements sent %d, Questions %.0f (%+.2f %%); handler writes %.0f for %d rows inserted; commits %.0f of %d; threads running max %v, connected max %v; poll %.2f ms",
		statements, questions, 100*(questions-float64(statements))/float64(statements), mustFigure(t, rep, "handlerWritesPerSecond")*window, inserts,
		mustFigure(t, rep, "commitsPerSecond")*window, commits, mustFigure(t, rep, "threadsRunningMax"), mustFigure(t, rep, "threadsConnectedMax"), mustFigure(t, rep, "pollMillisMean"))
	if questions < float64(statements)-0.5 || !within(questions, float64(statements), 0.02) {
		t.Errorf("Questions %.0f for %d statements sent", questions, statements)
	}
	// CREATE TABLE writes a few rows of its own into the data dictionary.
	if got := mustFigure(t, rep, "handlerWritesPerSecond") * window; got < float64(inserts)-0.5 || !within(got, float64(inserts), 0.01) {
		t.Errorf("handler writes %.0f, want the %d rows inserted", got, inserts)
	}
	if got := mustFigure(t, rep, "commitsPerSecond") * window; !within(got, float64(commits), 0.001) {
		t.Errorf("commits %.0f, want %d", got, commits)
	}
	if got := mustFigure(t, rep, "threadsConnectedMax"); got < 1 || got > 4 {
		t.Errorf("threadsConnectedMax %v with 4 clients", got)
	}
}
