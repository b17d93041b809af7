package dbstats

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

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
	status := mysqlStatus(t, srv.Port, password)
	lsnBefore := status("Innodb_lsn_current")
	waitForNoThreads(t, p) // the status reader's connection has gone
	rec := Start(ctx, p, testInterval)
	statements, inserts, commits := mysqlLoad(t, srv.Port, password, 4, 1500)
	rep := rec.Stop(ctx)
	lsnMoved := status("Innodb_lsn_current") - lsnBefore
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
	// The redo log: MariaDB counts Innodb_os_log_written as its log
	// sequence number moves; each row inserted writes at least its 4+4
	// bytes of columns.
	redo := mustFigure(t, rep, "redoBytesPerSecond") * window
	requests := mustFigure(t, rep, "bufferPoolReadRequestsPerSecond") * window
	t.Logf("redo %.0f bytes, the log sequence number moved %.0f (%+.2f %%); buffer pool read requests %.0f, from disk %.0f, hit %.2f %%",
		redo, lsnMoved, 100*(redo-lsnMoved)/lsnMoved, requests, mustFigure(t, rep, "bufferPoolDiskReadsPerSecond")*window, mustFigure(t, rep, "bufferHitPercent"))
	if !within(redo, lsnMoved, 0.01) || redo < 8*float64(inserts) {
		t.Errorf("redo %.0f bytes, the log sequence number moved %.0f, %d rows inserted", redo, lsnMoved, inserts)
	}
	// Each statement reads pages of the table and its index.
	if requests < float64(statements)/2 {
		t.Errorf("buffer pool read requests %.0f for %d statements", requests, statements)
	}
	if hit := mustFigure(t, rep, "bufferHitPercent"); hit <= 50 || hit > 100 {
		t.Errorf("bufferHitPercent %v: a small table is read from the buffer pool", hit)
	}
	// Every client updates a row of its own: a lock wait is rare (InnoDB's
	// insert intention and gap locks between the clients' inserts can still
	// make one wait now and then: seen once in a run, 1 wait of thousands).
	if got := mustFigure(t, rep, "rowLockWaitsPerSecond") * window; got > 0.01*float64(statements) {
		t.Errorf("%.0f row lock waits for %d statements: every client updates a row of its own", got, statements)
	}
}

// mysqlStatus returns a reader of one global status variable, over a
// connection of its own that it keeps only while it reads.
func mysqlStatus(t *testing.T, port int, password string) func(name string) float64 {
	t.Helper()
	db := mysqlDB(t, port, password, 1)
	db.SetMaxIdleConns(0)
	t.Cleanup(func() { _ = db.Close() })
	return func(name string) float64 {
		t.Helper()
		var n string
		var v float64
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
}

// waitForNoThreads waits until the server has no client thread but the
// poller's.
func waitForNoThreads(t *testing.T, p *MySQL) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := p.Poll(context.Background())
		if err == nil && r.Gauges["Threads_connected"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("other clients are still connected after 10 s: %v %v", r.Gauges, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mysqlDB(t *testing.T, port int, password string, conns int) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "bench", password, "tcp", "127.0.0.1:"+strconv.Itoa(port), "bench"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conns)
	return db
}

// TestMySQLRowLockWaits: a session waits for a row another holds; the
// holder lets it go a measured time after the wait is seen. The server
// counts one row lock wait, and its time between the hold seen and the
// whole wait as the waiter saw it.
func TestMySQLRowLockWaits(t *testing.T) {
	const password = "pw-dbstats-test"
	srv := startMariaDB(t, password)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := mysqlDB(t, srv.Port, password, 2)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE lk (id INT PRIMARY KEY, v INT) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO lk VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	status := mysqlStatus(t, srv.Port, password)
	p, err := NewMySQL(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := Start(ctx, p, testInterval)
	waitForPolls(t, rec, 1)

	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, "UPDATE lk SET v = v + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	waited := make(chan error, 1)
	var ended time.Time
	go func() {
		_, err := db.ExecContext(ctx, "UPDATE lk SET v = v + 1 WHERE id = 1")
		ended = time.Now()
		waited <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for status("Innodb_row_lock_current_waits") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no row lock wait after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	seen := time.Now()
	const hold = 700 * time.Millisecond
	time.Sleep(hold) // the wait the server measures: the row held this long after the waiter was seen
	committing := time.Now()
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	rep := rec.Stop(ctx)

	window := mustFigure(t, rep, "windowSeconds")
	waits := mustFigure(t, rep, "rowLockWaitsPerSecond") * window
	millis := mustFigure(t, rep, "rowLockWaitMillisPerSecond") * window
	// At least from the wait seen to the commit sent (the lock is granted
	// before the commit's answer comes back, which CI once saw 3 ms
	// later); at most the waiter's whole statement.
	least, most := committing.Sub(seen).Seconds()*1000, ended.Sub(began).Seconds()*1000
	t.Logf("row lock waits %.2f, %.1f ms waited (held %.1f ms after the wait was seen until the commit was sent, %.1f ms from the waiter's statement to its end)", waits, millis, least, most)
	if !within(waits, 1, 1e-6) {
		t.Errorf("row lock waits %v, want 1", waits)
	}
	// Innodb_row_lock_time counts whole milliseconds.
	if millis < least-2 || millis > most+2 {
		t.Errorf("row lock time %.1f ms, want between %.1f and %.1f", millis, least, most)
	}
}

// TestMySQLRedoOfEachServer: the redo log's bytes come from the first
// variable the server has; a log sequence number goes on across a
// restart (its own epoch), Innodb_os_log_written starts again with it.
func TestMySQLRedoOfEachServer(t *testing.T) {
	base := map[string]float64{"Uptime": 100}
	with := func(kv ...any) map[string]float64 {
		vals := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			vals[kv[i].(string)] = kv[i+1].(float64)
		}
		return vals
	}
	var m MySQL
	for _, tc := range []struct {
		vals  map[string]float64
		redo  float64
		epoch bool
	}{
		{with("Innodb_os_log_written", 10.0, "Innodb_redo_log_current_lsn", 20.0, "Innodb_lsn_current", 30.0), 10, false},
		{with("Innodb_redo_log_current_lsn", 20.0, "Innodb_lsn_current", 30.0), 20, true},
		{with("Innodb_lsn_current", 30.0), 30, true},
	} {
		r := m.reading(tc.vals)
		if r.Counters["redo_bytes"] != tc.redo || (r.Epochs["redo_bytes"] != "") != tc.epoch {
			t.Errorf("%v: redo %v, epochs %v", tc.vals, r.Counters["redo_bytes"], r.Epochs)
		}
	}
	if r := m.reading(base); len(r.Epochs) != 0 {
		t.Errorf("no redo variable: counters %v, epochs %v", r.Counters, r.Epochs)
	} else if _, ok := r.Counters["redo_bytes"]; ok {
		t.Errorf("no redo variable, yet redo_bytes %v", r.Counters["redo_bytes"])
	}
	for _, k := range []string{"Innodb_row_lock_waits", "Innodb_row_lock_time"} {
		if _, ok := m.reading(base).Counters[k]; ok {
			t.Errorf("%s read from a server that has none", k)
		}
	}
}
