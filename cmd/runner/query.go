package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/version"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
)

const queryUsage = `usage:
  dbperf-runner query --driver clickhouse|postgres|mysql --host H --port P [--database D] [TLS flags]
      --queries FILE [--runs N] [--timeout D] [--setting NAME=VALUE]... [--output FILE]
  dbperf-runner query --prepare --driver … --host H --port P [--script FILE]... [--load TABLE:FORMAT:URL-OR-PATH]... [-- COMMAND ARGS...]
The target's credentials come from ` + workloads.EnvUsername + ` and ` + workloads.EnvPassword + `.`

// cmdQuery is the query workload's client: it times each query of a
// queries file, or (--prepare) runs the prepare step.
func cmdQuery(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var t query.Target
	driver := fs.String("driver", "", "clickhouse (HTTP interface), postgres or mysql")
	fs.StringVar(&t.Host, "host", "", "the target's host")
	fs.IntVar(&t.Port, "port", 0, "the target's port (ClickHouse: its HTTP port)")
	fs.StringVar(&t.Database, "database", "", "the database the statements run in")
	fs.BoolVar(&t.TLS.Enabled, "tls", false, "connect over TLS")
	fs.StringVar(&t.TLS.CAFile, "ca-file", "", "CA bundle the server's certificate is checked against (none: not checked)")
	fs.StringVar(&t.TLS.CertFile, "cert-file", "", "client certificate of two-way TLS")
	fs.StringVar(&t.TLS.KeyFile, "key-file", "", "client key of two-way TLS")
	fs.StringVar(&t.TLS.ServerName, "server-name", "", "the name the server's certificate must have (default: --host)")
	queries := fs.String("queries", "", "queries file: statements ended by semicolons, each named by a `-- name: X` line before it")
	runs := fs.Int("runs", query.DefaultRunsPerQuery, "runs of each query in a row")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound of one run of one query (0: none)")
	output := fs.String("output", "-", "where the JSON report goes (- is stdout)")
	prepare := fs.Bool("prepare", false, "run the prepare step (scripts, loads, then the command after --) instead of the queries")
	var settings, scripts, loads listFlag
	fs.Var(&settings, "setting", "NAME=VALUE: a server setting of every query (repeatable)")
	fs.Var(&scripts, "script", "prepare: a SQL script to run, statements ended by semicolons (repeatable)")
	fs.Var(&loads, "load", "prepare: TABLE:FORMAT:SOURCE, a CSV or TSV file (URL or path; .gz is decompressed) to insert (repeatable)")
	if err := fs.Parse(args); err != nil {
		return runner.ExitUsage
	}
	t.Driver = benchv1.QueryDriver(*driver)
	t.Username, t.Password = os.Getenv(workloads.EnvUsername), os.Getenv(workloads.EnvPassword)
	if err := checkQueryFlags(t, *prepare, *queries, *runs, fs.NArg()); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner query: %v\n%s\n", err, queryUsage)
		return runner.ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *prepare {
		return queryPrepare(ctx, t, scripts, loads, fs.Args(), stdout, stderr)
	}
	t.Timeout = *timeout
	for _, s := range settings {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			fmt.Fprintf(stderr, "dbperf-runner query: --setting %q is not NAME=VALUE\n", s)
			return runner.ExitUsage
		}
		if t.Settings == nil {
			t.Settings = map[string]string{}
		}
		t.Settings[k] = v
	}
	rep := measureQueries(ctx, t, *queries, *runs, stdout)
	if err := writeReport(rep, *output, stdout); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner query: %v\n", err)
		return runner.ExitUsage
	}
	if rep.Error != "" {
		fmt.Fprintf(stderr, "dbperf-runner query: %s\n", rep.Error)
		return 1
	}
	return 0
}

func checkQueryFlags(t query.Target, prepare bool, queries string, runs, args int) error {
	switch {
	case t.Driver != benchv1.QueryDriverClickHouse && t.Driver != benchv1.QueryDriverPostgres && t.Driver != benchv1.QueryDriverMySQL:
		return fmt.Errorf("--driver %q: want clickhouse, postgres or mysql", t.Driver)
	case t.Host == "" || t.Port <= 0:
		return errors.New("--host and --port are required")
	case !prepare && queries == "":
		return errors.New("--queries is required")
	case !prepare && (runs < 1 || runs > 100):
		return fmt.Errorf("--runs %d: want 1 to 100", runs)
	case !prepare && args > 0:
		return errors.New("a command after -- is for --prepare only")
	}
	return nil
}

// measureQueries reads the queries and times them; a queries file it
// cannot read is the report's error.
func measureQueries(ctx context.Context, t query.Target, file string, runs int, log io.Writer) *query.Report {
	text, err := os.ReadFile(file)
	var stmts []query.Statement
	if err == nil {
		stmts, err = query.ParseQueries(string(text), query.DialectOf(t.Driver))
	}
	var rep *query.Report
	if err != nil {
		now := time.Now().UTC()
		rep = &query.Report{Version: query.ReportVersion, Driver: string(t.Driver), RunsPerQuery: runs, Start: now, End: now,
			Queries: []query.QueryRuns{}, Error: fmt.Sprintf("while reading the queries file %s: %v", file, err)}
	} else {
		rep = query.Measure(ctx, t, stmts, runs, log)
	}
	rep.ClientVersion = version.Version
	return rep
}

func writeReport(rep *query.Report, output string, stdout io.Writer) error {
	raw, err := rep.Encode()
	if err != nil {
		return err
	}
	raw = append(raw, '\n')
	if output == "-" {
		_, err = stdout.Write(raw)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(output+".tmp", raw, 0o644); err != nil {
		return err
	}
	return os.Rename(output+".tmp", output)
}

// queryPrepare runs the scripts and loads, then the generator command
// (with this process's environment: the target's DBPERF_TARGET_*
// variables), whose exit code is the step's.
func queryPrepare(ctx context.Context, t query.Target, scripts, loadFlags, command []string, stdout, stderr io.Writer) int {
	var loads []query.Load
	for _, f := range loadFlags {
		parts := strings.SplitN(f, ":", 3)
		if len(parts) != 3 || parts[0] == "" || parts[2] == "" || (parts[1] != "CSV" && parts[1] != "TSV") {
			fmt.Fprintf(stderr, "dbperf-runner query: --load %q is not TABLE:CSV|TSV:SOURCE\n", f)
			return runner.ExitUsage
		}
		loads = append(loads, query.Load{Table: parts[0], Format: benchv1.QueryLoadFormat(parts[1]), Source: parts[2]})
	}
	if err := query.Prepare(ctx, t, scripts, loads, stdout); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner query: prepare: %v\n", err)
		return 1
	}
	if len(command) == 0 {
		return 0
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		fmt.Fprintf(stderr, "dbperf-runner query: the prepare command exited with code %d\n", exit.ExitCode())
		return max(exit.ExitCode(), 1)
	case err != nil:
		fmt.Fprintf(stderr, "dbperf-runner query: the prepare command: %v\n", err)
		return 1
	}
	return 0
}
