package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/queryengine"
	"github.com/dbperf-io/dbperf-operator/internal/version"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
)

const queryUsage = `usage:
  dbperf-runner query --driver clickhouse|postgres|mysql --host H --port P [--database D] [TLS flags]
      --queries FILE [--runs N] [--timeout D] [--setting NAME=VALUE]... [--output FILE]
  dbperf-runner query --prepare --driver … --host H --port P [--script FILE]... [--load TABLE:FORMAT:URL-OR-PATH]... [-- COMMAND ARGS...]
The target's credentials come from ` + pod.EnvUsername + ` and ` + pod.EnvPassword + `.`

// cmdQuery is the query workload's client: it times each query of a
// queries file, or (--prepare) runs the prepare step.
func cmdQuery(args []string, stdout, stderr io.Writer) int {
	c, err := pod.ParseQuery(args, stderr)
	if err != nil {
		return runner.ExitUsage
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner query: %v\n%s\n", err, queryUsage)
		return runner.ExitUsage
	}
	t := queryengine.Target{Driver: c.Driver, Host: c.Host, Port: c.Port, Database: c.Database,
		Username: os.Getenv(pod.EnvUsername), Password: os.Getenv(pod.EnvPassword),
		TLS: c.TLS}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if c.Prepare {
		return queryPrepare(ctx, t, c.Scripts, c.Loads, c.Command, stdout, stderr)
	}
	t.Timeout, t.Settings = c.Timeout, c.Settings
	rep := measureQueries(ctx, t, c.Queries, c.Runs, stdout)
	if err := writeReport(rep, c.Output, stdout); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner query: %v\n", err)
		return runner.ExitUsage
	}
	if rep.Error != "" {
		fmt.Fprintf(stderr, "dbperf-runner query: %s\n", rep.Error)
		return 1
	}
	return 0
}

// measureQueries reads the queries and times them; a queries file it
// cannot read is the report's error.
func measureQueries(ctx context.Context, t queryengine.Target, file string, runs int, log io.Writer) *query.Report {
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
		rep = queryengine.Measure(ctx, t, stmts, runs, log)
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
func queryPrepare(ctx context.Context, t queryengine.Target, scripts []string, loads []pod.Load, command []string, stdout, stderr io.Writer) int {
	if err := queryengine.Prepare(ctx, t, scripts, loads, stdout); err != nil {
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
