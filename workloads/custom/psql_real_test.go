package custom

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// psqlStatements is the example's spec as docs/workloads/custom.md shows
// it: the script's prepare step, then a sweep of its repeat count.
func psqlStatements(repeats ...int32) *benchv1.WorkloadSpec {
	return &benchv1.WorkloadSpec{Image: "registry.example/dbperf-psql-statements:1", Custom: &benchv1.CustomWorkload{
		Command:       []string{"psql-statements.sh"},
		Args:          []string{"run", "{{repeat}}"},
		Prepare:       &benchv1.CustomPrepare{Command: []string{"psql-statements.sh"}, Args: []string{"prepare"}},
		Parameters:    []benchv1.CustomParameter{{Name: "repeat", Values: repeats}},
		Format:        benchv1.CustomLines,
		PrimaryMetric: benchv1.CustomMetricKey{Name: "statementsPerSecond"},
		Database:      benchv1.CustomPostgres,
	}}
}

// The psql-statements example, a POSIX shell script driving the real
// psql, through the runner with the invocations the operator builds,
// against a real PostgreSQL with a password: its prepare step builds its
// tables, and each step of the sweep times every statement repeat times.
// What it reports is checked against the database: the rows its inserts
// added, the sum its updates raised (each adds 1 to one account), and the
// transactions the server counted (pg_stat_database).
func TestRealPsqlStatementsExample(t *testing.T) {
	pg := testutil.StartPostgres(t)
	t.Setenv("PATH", examplesDir(t, "psql-statements")+string(os.PathListSeparator)+pg.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	spec := psqlStatements(5, 12)
	valid(t, spec)
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(pg.Port), Database: pg.Database, Username: secretKey("username"), Password: secretKey("password")}
	secrets := map[string]string{"username": pg.User, "password": pg.Password}
	ctx := context.Background()
	connect := func(db string) *pgx.Conn {
		t.Helper()
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", pg.User, pg.Password, pg.Port, db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		return conn
	}
	queryOn := func(conn *pgx.Conn, sql string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	// A connection of its own for each query of the target's database: a
	// backend reports its statistics when it exits, while an idle one may
	// hold them for ten seconds, into the next measurement.
	query := func(sql string) int64 {
		t.Helper()
		conn := connect(pg.Database)
		defer conn.Close(ctx)
		return queryOn(conn, sql)
	}
	exec := func(sql string) {
		t.Helper()
		conn := connect(pg.Database)
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	// Autovacuum's transactions would count in the server's statistics.
	exec("ALTER SYSTEM SET autovacuum = off")
	exec("SELECT pg_reload_conf()")
	prep, out := execLocal(t, *(Custom{}).Prepare(spec, ep), secrets, true)
	if prep.Verdict != results.Succeeded {
		t.Fatalf("prepare: %s %v\n%s", prep.Verdict, prep.Reasons, out)
	}
	if n := query("SELECT count(*) FROM dbperf_accounts"); n != 10000 {
		t.Fatalf("the prepare step left %d accounts, want 10000", n)
	}
	// The server's count of the transactions in the target's database,
	// read from another database, whose own transactions it does not count.
	exec("CREATE DATABASE observer")
	observer := connect("observer")
	commits := func() int64 {
		return queryOn(observer, "SELECT xact_commit FROM pg_stat_database WHERE datname = '"+pg.Database+"'")
	}
	// settled is the count once the backends that ended have reported.
	settled := func() int64 {
		t.Helper()
		last := commits()
		for range 50 {
			time.Sleep(300 * time.Millisecond)
			n := commits()
			if n == last {
				return n
			}
			last = n
		}
		t.Fatal("the server's count of transactions never settled")
		return 0
	}
	for _, step := range (Custom{}).Steps(spec) {
		repeat := int64(step.Params["repeat"])
		rows0, sum0 := query("SELECT count(*) FROM dbperf_history"), query("SELECT sum(balance) FROM dbperf_accounts")
		xact0 := settled()
		r, out := execLocal(t, (Custom{}).Run(spec, ep, step), secrets, false)
		if r.Verdict != results.Succeeded || len(r.Warnings) > 0 {
			t.Fatalf("%s: %s %v %v\n%s", step.Name, r.Verdict, r.Reasons, r.Warnings, out)
		}
		var statements float64
		for _, op := range []string{"point_select", "update", "insert", "aggregate"} {
			statements += testutil.MetricValue(t, r, "operations", op)
		}
		// Each session commits its statements, two clock readings and the
		// transaction in which PostgreSQL starts a connection; the script
		// asks the server's version once more, in a connection of its own.
		// Nothing else ran in the database meanwhile.
		want := int64(statements) + 4*(2+1) + 2
		testutil.Eventually(t, 10*time.Second, "the server's count of the transactions", func() error {
			if got := commits() - xact0; got != want {
				return fmt.Errorf("%s: the server committed %d transactions, the script reports %g statements (%d with its clock readings, connections and version)", step.Name, got, statements, want)
			}
			return nil
		})
		if got := query("SELECT count(*) FROM dbperf_history") - rows0; got != repeat || testutil.MetricValue(t, r, "operations", "insert") != float64(repeat) {
			t.Errorf("%s: the script reports %g inserts, the table gained %d rows, want %d", step.Name, testutil.MetricValue(t, r, "operations", "insert"), got, repeat)
		}
		if got := query("SELECT sum(balance) FROM dbperf_accounts") - sum0; got != repeat || testutil.MetricValue(t, r, "operations", "update") != float64(repeat) {
			t.Errorf("%s: the script reports %g updates, the balances rose by %d, want %d", step.Name, testutil.MetricValue(t, r, "operations", "update"), got, repeat)
		}
		for _, op := range []string{"point_select", "update", "insert", "aggregate"} {
			lo, p50, p95, hi := testutil.MetricValue(t, r, "latencyMinMillis", op), testutil.MetricValue(t, r, "latencyP50Millis", op),
				testutil.MetricValue(t, r, "latencyP95Millis", op), testutil.MetricValue(t, r, "latencyMaxMillis", op)
			if !(0 < lo && lo <= p50 && p50 <= p95 && p95 <= hi) {
				t.Errorf("%s %s: latencies min %g p50 %g p95 %g max %g are not in order", step.Name, op, lo, p50, p95, hi)
			}
		}
		m, _ := r.Get(r.Primary)
		if m.Name != "statementsPerSecond" || m.Value <= 0 || m.Unit != "statements/s" || m.Direction != results.HigherIsBetter {
			t.Errorf("%s: primary %+v", step.Name, m)
		}
		if r.Parameters["repeat"] != strconv.Itoa(int(repeat)) || r.Parameters["tool"] != "psql-statements" {
			t.Errorf("%s: parameters %v", step.Name, r.Parameters)
		}
	}
}
