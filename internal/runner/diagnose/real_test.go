package diagnose

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/profile"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// pgbenchWindow runs pgbench's select-only script for 3 s against the
// local server inside one diagnostics window and returns what it saw.
func pgbenchWindow(t *testing.T, srv *localdb.Postgres, bin string, plans bool) *results.Diagnostics {
	t.Helper()
	ctx := context.Background()
	src, err := NewPostgres(ctx, dbstats.Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w, err := Start(ctx, src, Options{WaitInterval: 20 * time.Millisecond, Plans: plans})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-n", "-S", "-M", "prepared", "-c", "4", "-j", "2", "-T", "3")
	cmd.Env = append(os.Environ(), srv.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	d, warnings := w.Stop(ctx)
	if d == nil {
		t.Fatalf("no diagnostics: %v", warnings)
	}
	return d
}

// pgbenchServer starts the local PostgreSQL with pgbench's tables at
// scale 2, and returns pgbench's path.
func pgbenchServer(t *testing.T) (string, *localdb.Postgres) {
	t.Helper()
	bin, err := localdb.Tool("pgbench", "/usr/lib/postgresql/*/bin/pgbench")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localdb.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	init := exec.Command(bin, "-i", "-s", "2", "-q")
	init.Env = append(os.Environ(), srv.Env()...)
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	return bin, srv
}

func item(d *results.Diagnostics, kind results.DiagnosticKind, prefix string) *results.DiagnosticItem {
	for i := range d.Items {
		if d.Items[i].Kind == kind && strings.HasPrefix(d.Items[i].Name, prefix) {
			return &d.Items[i]
		}
	}
	return nil
}

// TestPostgresWindowSeesTheSlowedStatement: pgbench's select-only
// script against the local server, then the same with index scans turned
// off for the database (what a missing index does): the statement's
// time per transaction grows many times, its shared-block reads per
// transaction with it, its plan turns from an index scan to a sequential
// scan, and the sessions' waits were sampled (CPU most).
func TestPostgresWindowSeesTheSlowedStatement(t *testing.T) {
	bin, srv := pgbenchServer(t)
	const query = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
	fast := pgbenchWindow(t, srv, bin, true)
	if err := srv.SQL("ALTER DATABASE postgres SET enable_indexscan = off; ALTER DATABASE postgres SET enable_bitmapscan = off; ALTER DATABASE postgres SET enable_indexonlyscan = off"); err != nil {
		t.Fatal(err)
	}
	slow := pgbenchWindow(t, srv, bin, true)
	for _, d := range []*results.Diagnostics{fast, slow} {
		t.Logf("%.0f transactions in %.1f s (%s), %d wait samples, notes %v", d.Transactions, d.WindowSeconds, d.TransactionsFrom, d.WaitSamples, d.Notes)
		for _, it := range d.Items {
			t.Logf("  %s %.60q: %.0f calls, %.1f ms, %v", it.Kind, it.Name, it.Calls, it.TimeMillis, it.Figures)
		}
	}
	a, b := item(fast, results.DiagnosticStatement, query), item(slow, results.DiagnosticStatement, query)
	if a == nil || b == nil {
		t.Fatalf("pgbench's statement is missing: %v / %v", fast.Items, slow.Items)
	}
	if fast.Transactions < a.Calls*0.9 || fast.Transactions > a.Calls*1.2 {
		t.Errorf("%.0f transactions for %.0f calls of a one-statement script", fast.Transactions, a.Calls)
	}
	perA, perB := fast.Per(a.TimeMillis), slow.Per(b.TimeMillis)
	if perB < 5*perA {
		t.Errorf("the statement's time per transaction: %.4f → %.4f ms, not 5× more", perA, perB)
	}
	readsA := fast.Per(a.Figures["sharedBlocksHit"] + a.Figures["sharedBlocksRead"])
	readsB := slow.Per(b.Figures["sharedBlocksHit"] + b.Figures["sharedBlocksRead"])
	if readsB < 50*readsA {
		t.Errorf("shared blocks per transaction %.1f → %.1f", readsA, readsB)
	}
	if !strings.Contains(a.Plan, "Index") || !strings.Contains(b.Plan, "Seq Scan") {
		t.Errorf("plans:\n%s\n---\n%s", a.Plan, b.Plan)
	}
	if fast.WaitSamples < 50 || item(fast, results.DiagnosticWait, "CPU") == nil {
		t.Errorf("%d wait samples, items %v", fast.WaitSamples, fast.Items)
	}
	for _, it := range fast.Items {
		if strings.Contains(it.Name, "pg_stat") {
			t.Errorf("the runner's own statement counted: %s", it.Name)
		}
	}
}

// TestPostgresWindowIsADifferenceNotAReset: a window started twice over
// the same server, one inside the other, each sees its own work and the
// server's statistics are never reset (the outer window's statement
// counts all calls).
func TestPostgresWindowIsADifferenceNotAReset(t *testing.T) {
	srv, err := localdb.StartPostgres()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	open := func() *Postgres {
		src, err := NewPostgres(ctx, dbstats.Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = src.Close() })
		return src
	}
	run := func(n int) {
		for range n {
			if err := srv.SQL("SELECT count(*) FROM generate_series(1, 1000)"); err != nil {
				t.Fatal(err)
			}
		}
	}
	outer, err := Start(ctx, open(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	run(3)
	inner, err := Start(ctx, open(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	run(5)
	di, _ := inner.Stop(ctx)
	run(2)
	do, _ := outer.Stop(ctx)
	const q = "SELECT count(*) FROM generate_series($1, $2)"
	if it := item(di, results.DiagnosticStatement, q); it == nil || it.Calls != 5 {
		t.Errorf("inner window: %+v", di.Items)
	}
	if it := item(do, results.DiagnosticStatement, q); it == nil || it.Calls != 10 {
		t.Errorf("outer window: %+v", do.Items)
	}
	if !strings.Contains(strings.Join(di.Notes, "|"), "created the extension") && !strings.Contains(strings.Join(do.Notes, "|"), "created the extension") {
		t.Errorf("the extension's creation is not said: %v %v", di.Notes, do.Notes)
	}
}

// TestRedisWindowNamesTheSlowCommand: GETs alone, then GETs with a SORT
// of a 20,000-element list beside them: commandstats name sort first, by
// time per command, and the runner's own INFO is not counted.
func TestRedisWindowNamesTheSlowCommand(t *testing.T) {
	srv, err := localdb.StartRedis()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(srv.Port)})
	t.Cleanup(func() { _ = c.Close() })
	vals := make([]any, 20000)
	for i := range vals {
		vals[i] = (i * 7919) % 20000
	}
	if err := c.RPush(ctx, "list", vals...).Err(); err != nil {
		t.Fatal(err)
	}
	window := func(sorts int) *results.Diagnostics {
		src, err := NewRedis(ctx, dbstats.Config{Host: "127.0.0.1", Port: srv.Port})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		w, err := Start(ctx, src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2000 {
			if err := c.Get(ctx, "k"+strconv.Itoa(i)).Err(); err != nil && !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			if i < sorts {
				if err := c.Sort(ctx, "list", &redis.Sort{Count: 10}).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
		d, warnings := w.Stop(ctx)
		if d == nil {
			t.Fatal(warnings)
		}
		return d
	}
	before, after := window(0), window(20)
	for _, d := range []*results.Diagnostics{before, after} {
		t.Logf("%.0f commands: %+v", d.Transactions, d.Items)
	}
	if item(before, results.DiagnosticCommand, "sort") != nil || item(before, results.DiagnosticCommand, "info") != nil {
		t.Errorf("before: %+v", before.Items)
	}
	s := item(after, results.DiagnosticCommand, "sort")
	if s == nil || s.Calls != 20 || after.Items[0].Name != "sort" {
		t.Fatalf("after: %+v", after.Items)
	}
	g := item(after, results.DiagnosticCommand, "get")
	if g == nil || g.Calls != 2000 || s.TimeMillis/s.Calls < 20*g.TimeMillis/g.Calls {
		t.Errorf("sort %+v get %+v", s, g)
	}
	// The window's latency histograms (LATENCY HISTOGRAM, Redis 7): a
	// SORT of 20,000 elements takes milliseconds, a GET microseconds; the
	// buckets are turned into percentiles, not kept.
	t.Logf("sort p50 %v µs p99 %v µs; get p50 %v µs p99 %v µs", s.Figures["p50Micros"], s.Figures["p99Micros"], g.Figures["p50Micros"], g.Figures["p99Micros"])
	if s.Figures["p50Micros"] < 256 || g.Figures["p50Micros"] > 64 || g.Figures["p50Micros"] <= 0 || s.Figures["p99Micros"] < s.Figures["p50Micros"] {
		t.Errorf("latency percentiles: sort %v, get %v", s.Figures, g.Figures)
	}
	for k := range g.Figures {
		if strings.HasPrefix(k, histogramPrefix) {
			t.Errorf("a bucket left among the figures: %s", k)
		}
	}
	// Both windows are differences: the first window's 2,000 GETs are not
	// in the second's percentiles' counts (its calls are its own).
	if before := item(before, results.DiagnosticCommand, "get"); before == nil || before.Figures["p50Micros"] <= 0 {
		t.Errorf("the first window's get: %+v", before)
	}
}

// TestMySQLWindowSeesTheStatementThatLostItsIndex: MariaDB with
// performance_schema on, a table of 20,000 rows; 300 lookups by an indexed
// column, then 300 by the same column with its index dropped: the
// statement's digest (sent as text: MariaDB does not digest a server-side
// prepared statement's executions) is first in both windows, its rows examined per call
// go from 1 to the table, its time grows, and the table's I/O waits are
// read (wait/io/table/sql/handler).
func TestMySQLWindowSeesTheStatementThatLostItsIndex(t *testing.T) {
	dir, err := os.MkdirTemp("", "dbperf-diagnose-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	srv, err := localdb.StartMariaDB(dir, "--performance-schema=ON")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(srv.Stop)
	const password = "s3cret-diagnose"
	if out, err := srv.Client("--socket="+srv.Socket, "-e", "CREATE USER 'bench'@'%' IDENTIFIED BY '"+password+"'; GRANT ALL ON *.* TO 'bench'@'%'; CREATE DATABASE bench; USE bench;"+
		"CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, INDEX by_k (k)) ENGINE=InnoDB;"+
		"INSERT INTO t SELECT seq, seq, seq FROM seq_1_to_20000;"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx := context.Background()
	cfg := dbstats.Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: password, Database: "bench"}
	load, err := sql.Open("mysql", "bench:"+password+"@tcp(127.0.0.1:"+strconv.Itoa(srv.Port)+")/bench?interpolateParams=true")
	if err != nil {
		t.Fatal(err)
	}
	defer load.Close()
	window := func() *results.Diagnostics {
		src, err := NewMySQL(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		w, err := Start(ctx, src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			var v int
			if err := load.QueryRowContext(ctx, "SELECT v FROM t WHERE k = ?", i*61%20000+1).Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		d, warnings := w.Stop(ctx)
		if d == nil {
			t.Fatal(warnings)
		}
		return d
	}
	const digest = "SELECT `v` FROM `t` WHERE `k` = ?"
	indexed := window()
	if _, err := load.ExecContext(ctx, "ALTER TABLE t DROP INDEX by_k"); err != nil {
		t.Fatal(err)
	}
	scanned := window()
	for _, d := range []*results.Diagnostics{indexed, scanned} {
		t.Logf("%.0f transactions (%s), notes %v", d.Transactions, d.TransactionsFrom, d.Notes)
		for _, it := range d.Items {
			t.Logf("  %s %.70q: %.0f calls, %.2f ms, %v", it.Kind, it.Name, it.Calls, it.TimeMillis, it.Figures)
		}
	}
	// MariaDB closes a statement's event (and adds it to its digest) a
	// moment after the client has its reply: the window's last snapshot,
	// taken as the last reply arrives, may not hold the last call yet (CI:
	// 299 of 300).
	a, b := item(indexed, results.DiagnosticStatement, digest), item(scanned, results.DiagnosticStatement, digest)
	if a == nil || b == nil || a.Calls < 299 || a.Calls > 300 || b.Calls < 299 || b.Calls > 300 {
		t.Fatalf("the lookup's digest: %+v / %+v", a, b)
	}
	if indexed.Items[0].Name != digest || scanned.Items[0].Name != digest {
		t.Errorf("the lookup is not the first statement: %s / %s", indexed.Items[0].Name, scanned.Items[0].Name)
	}
	if ra, rb := a.Figures["rowsExamined"]/a.Calls, b.Figures["rowsExamined"]/b.Calls; ra > 2 || rb < 19000 {
		t.Errorf("rows examined a call: %.1f → %.1f", ra, rb)
	}
	if b.TimeMillis < 3*a.TimeMillis {
		t.Errorf("time %.2f → %.2f ms", a.TimeMillis, b.TimeMillis)
	}
	if w := item(scanned, results.DiagnosticWait, "wait/io/table/sql/handler"); w == nil || w.Calls < 300 {
		t.Errorf("the table's I/O waits: %+v", w)
	}
}

// TestPostgresWindowProfilesTheServer: pgbench's select-only script in a
// window with an on-CPU profile of the local server, then the same with
// one more session running a CPU-heavy query (md5 of numbers) beside it:
// the second profile's stacks have the query's function, the first's not,
// and md5's work per transaction (PostgreSQL's function, OpenSSL's library
// under it) grew many times over, among the second's functions.
func TestPostgresWindowProfilesTheServer(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Fatalf("perf is needed (hack/install-deps.sh installs linux-perf): %v", err)
	}
	bin, srv := pgbenchServer(t)
	ctx := context.Background()
	window := func(heavy bool) *results.Diagnostics {
		src, err := NewPostgres(ctx, dbstats.Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		w, err := Start(ctx, src, Options{Profile: &profile.Options{Host: "127.0.0.1", Port: srv.Port}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		if heavy {
			go func() {
				_, err := srv.Query("SET jit = off; SELECT count(*) FROM generate_series(1, 1200000) i WHERE md5(i::text) LIKE 'ab%'")
				done <- err
			}()
		} else {
			done <- nil
		}
		load := exec.Command(bin, "-n", "-S", "-M", "prepared", "-c", "2", "-j", "1", "-T", "2")
		load.Env = append(os.Environ(), srv.Env()...)
		if out, err := load.CombinedOutput(); err != nil {
			t.Fatalf("pgbench: %v\n%s", err, out)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		d, warnings := w.Stop(ctx)
		if d == nil || d.Profile == nil {
			t.Fatalf("no profile: %v %+v", warnings, d)
		}
		return d
	}
	a, b := window(false), window(true)
	// md5's work per transaction: the stacks through PostgreSQL's md5
	// function or OpenSSL's library (SCRAM's connection handshake uses
	// it too, once per connection).
	md5 := func(d *results.Diagnostics) float64 {
		var ms float64
		for _, st := range d.Profile.Stacks {
			if strings.Contains(st.Stack, "md5") || strings.Contains(st.Stack, "libcrypto") {
				ms += d.Profile.Millis(st.Samples)
			}
		}
		return d.Per(ms)
	}
	inStacks := func(d *results.Diagnostics) bool {
		for _, st := range d.Profile.Stacks {
			if strings.Contains(st.Stack, "pg_md5_hash") {
				return true
			}
		}
		return false
	}
	t.Logf("A: %d samples, %.0f tx, md5's work %.5f ms/tx; B: %d samples, %.0f tx, %.5f ms/tx", a.Profile.Samples, a.Transactions, md5(a), b.Profile.Samples, b.Transactions, md5(b))
	// The query's own function is in B's stacks only (its self time is
	// small beside OpenSSL's under it: it need not be among the top
	// functions kept as items), and md5's work per transaction grew
	// many times over.
	if inStacks(a) || !inStacks(b) {
		t.Errorf("pg_md5_hash in A's stacks %v, in B's %v: want only in B", inStacks(a), inStacks(b))
	}
	if md5(b) < 3*md5(a) || md5(b) <= 0 {
		t.Errorf("md5's work: %.5f ms/tx in A, %.5f in B: want it grown many times", md5(a), md5(b))
	}
	if item(b, results.DiagnosticFunction, "[libcrypto.so.3]") == nil && item(b, results.DiagnosticFunction, "pg_md5_hash") == nil {
		t.Errorf("neither OpenSSL's nor PostgreSQL's md5 among B's functions: %+v", b.Items)
	}
}
