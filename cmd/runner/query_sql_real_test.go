package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
	"github.com/dbperf-io/dbperf-operator/workloads/query/ssbgen"
)

// sqlTables are the SSB tables the joined queries read.
var sqlTables = []string{"customer", "supplier", "part", "date", "lineorder"}

// TestRealPostgresQueries prepares SSB's tables in a local PostgreSQL
// (schema script, then COPY of each table's CSV from a claim, then a
// generator command that reaches the server through the DBPERF_TARGET_*
// variables) and times the 13 joined queries, inline in the spec, twice
// each, and a query of a missing table.
func TestRealPostgresQueries(t *testing.T) {
	pg := testutil.StartPostgres(t)
	data := ssbgen.Generate(2, ssbgen.Sizes{LineOrders: 5000, Customers: 100, Suppliers: 40, Parts: 300})
	claim := t.TempDir()
	var loads []benchv1.QueryLoad
	for _, table := range sqlTables {
		f, err := os.Create(filepath.Join(claim, "ssb", table+".csv"))
		if os.IsNotExist(err) {
			_ = os.MkdirAll(filepath.Join(claim, "ssb"), 0o755)
			f, err = os.Create(filepath.Join(claim, "ssb", table+".csv"))
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := data.WriteCSV(table, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		loads = append(loads, benchv1.QueryLoad{Table: tableName(table), Claim: &benchv1.QueryLoadClaim{ClaimName: "ssb-data", Path: "ssb/" + table + ".csv"}})
	}
	stmts, err := query.ParseQueries(example(t, "ssb.sql"), query.DialectOf(benchv1.QueryDriverPostgres))
	if err != nil {
		t.Fatal(err)
	}
	var inline []benchv1.NamedQuery
	for _, s := range stmts {
		inline = append(inline, benchv1.NamedQuery{Name: s.Name, SQL: s.SQL})
	}
	inline = append(inline, benchv1.NamedQuery{Name: "missing-table", SQL: "SELECT count(*) FROM no_such_table"})
	psql := filepath.Join(pg.BinDir, "psql")
	spec := &benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{
		Driver: benchv1.QueryDriverPostgres, Queries: inline, RunsPerQuery: 2,
		Settings: map[string]benchv1.QuerySettingValue{"work_mem": "8MB"},
		Prepare: &benchv1.QueryPrepare{Script: example(t, "ssb-schema.sql"), Loads: loads, Command: []string{"sh", "-c",
			`PGPASSWORD="$DBPERF_TARGET_PASSWORD" ` + psql + ` -h "$DBPERF_TARGET_HOST" -p "$DBPERF_TARGET_PORT" -U "$DBPERF_TARGET_USERNAME" -d "$DBPERF_TARGET_DATABASE" -v ON_ERROR_STOP=1 -c "ANALYZE"`}},
	}}
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(pg.Port), Database: pg.Database}
	credentials(&ep)
	p := &podDirs{dir: t.TempDir(), secrets: map[string]string{"username": pg.User, "password": pg.Password},
		claims: map[string]string{"ssb-data": claim}}
	w := query.Query{}
	if errs := w.Validate(spec, nil); len(errs) > 0 {
		t.Fatalf("the spec is not valid: %v", errs)
	}
	if _, code := p.run(t, *w.Prepare(spec, ep), nil); code != 0 {
		t.Fatalf("the prepare step exited with %d", code)
	}
	for _, table := range sqlTables {
		got, err := pg.Query("SELECT count(*) FROM " + tableName(table))
		if err != nil || got != strconv.Itoa(len(data.Rows(table))) {
			t.Fatalf("table %s has %q rows (%v), want %d", table, got, err, len(data.Rows(table)))
		}
	}
	if got, err := pg.Query("SELECT count(*) FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL"); err != nil || got == "0" {
		t.Errorf("the prepare command's ANALYZE did not run: %q (%v)", got, err)
	}
	in, code := p.run(t, w.Run(spec, ep, w.Steps(spec)[0]), nil)
	if code != 0 {
		t.Fatalf("the query subcommand exited with %d", code)
	}
	r := w.Parse(in)
	checkQueries(t, r, ssbQueries, 2)
	checkMissingTable(t, r, `relation "no_such_table" does not exist`)
	if v := r.Parameters["serverVersion"]; v == "" {
		t.Errorf("no server version in %v", r.Parameters)
	}
}

// TestRealMySQLQueries prepares SSB's tables in a local MariaDB (LOAD
// DATA LOCAL INFILE of each gzip-compressed CSV downloaded from a local
// HTTP server) and times the 13 joined queries from a ConfigMap once
// each, and a query of a missing table.
func TestRealMySQLQueries(t *testing.T) {
	// Not t.TempDir(): the server runs as the mysql user, who must reach it.
	dir, err := os.MkdirTemp("", "dbperf-query-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	db := testutil.StartMariaDB(t, dir)
	password := "pw-" + strconv.Itoa(os.Getpid())
	if out, err := db.Client("--socket="+db.Socket, "-e",
		"CREATE USER 'bench'@'%' IDENTIFIED BY '"+password+"'; GRANT ALL ON *.* TO 'bench'@'%'; CREATE DATABASE ssb;"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data := ssbgen.Generate(3, ssbgen.Sizes{LineOrders: 5000, Customers: 100, Suppliers: 40, Parts: 300})
	srv := serveSSB(t, data)
	var loads []benchv1.QueryLoad
	for _, table := range sqlTables {
		loads = append(loads, benchv1.QueryLoad{Table: tableName(table), URL: srv.URL + "/" + table + ".csv.gz"})
	}
	spec := ssbSpec(benchv1.QueryDriverMySQL, example(t, "ssb-schema.sql"), loads, 1)
	spec.QueryBench.Database = "ssb"
	spec.QueryBench.Settings = map[string]benchv1.QuerySettingValue{"sql_mode": "ANSI_QUOTES", "max_join_size": "1000000000000"}
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(db.Port)}
	credentials(&ep)
	p := &podDirs{dir: t.TempDir(), secrets: map[string]string{"username": "bench", "password": password}}
	w := query.Query{}
	if errs := w.Validate(spec, nil); len(errs) > 0 {
		t.Fatalf("the spec is not valid: %v", errs)
	}
	if _, code := p.run(t, *w.Prepare(spec, ep), nil); code != 0 {
		t.Fatalf("the prepare step exited with %d", code)
	}
	for _, table := range sqlTables {
		out, err := db.Client("--socket="+db.Socket, "-N", "-e", "SELECT count(*) FROM ssb."+tableName(table))
		if err != nil || strings.TrimSpace(out) != strconv.Itoa(len(data.Rows(table))) {
			t.Fatalf("table %s has %q rows (%v), want %d", table, out, err, len(data.Rows(table)))
		}
	}
	queries := example(t, "ssb.sql") + "\n-- name: missing-table\nSELECT count(*) FROM no_such_table;\n"
	in, code := p.run(t, w.Run(spec, ep, w.Steps(spec)[0]), map[string]string{"ssb/queries.sql": queries})
	if code != 0 {
		t.Fatalf("the query subcommand exited with %d", code)
	}
	r := w.Parse(in)
	checkQueries(t, r, ssbQueries, 1)
	checkMissingTable(t, r, "doesn't exist")
	if _, ok := r.Get(results.Key{Name: query.MetricHot, Operation: "Q1.1"}); ok {
		t.Errorf("one run per query has no hot time: %+v", r.Metrics)
	}
}

// checkMissingTable: the query of a missing table failed every run, is
// named with the server's message and counted.
func checkMissingTable(t *testing.T, r *results.Result, message string) {
	t.Helper()
	if got := testutil.MetricValue(t, r, query.MetricFailedQueries, ""); got != 1 {
		t.Errorf("failedQueries = %v, want 1", got)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "query missing-table failed") ||
		!strings.Contains(strings.Join(r.Warnings, "\n"), message) {
		t.Errorf("the warnings do not name missing-table with %q: %q", message, r.Warnings)
	}
	if _, ok := r.Get(results.Key{Name: query.MetricGeometricMean}); !ok {
		t.Errorf("no geometric mean: %v", r.Reasons)
	}
}
