package queryengine

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
)

// Measure runs each query runs times in a row on one connection and
// reports every run; a failed run is recorded with its message and the
// next one goes on. It logs a line per run to log.
func Measure(ctx context.Context, t Target, queries []query.Statement, runs int, log io.Writer) *query.Report {
	rep := &query.Report{Version: query.ReportVersion, Driver: string(t.Driver), RunsPerQuery: runs, Start: time.Now().UTC(), Queries: []query.QueryRuns{}}
	defer func() { rep.End = time.Now().UTC() }()
	if t.TLS.Enabled {
		verified := t.TLS.Verifies()
		rep.ServerCertificateVerified = &verified
	}
	c, err := Connect(ctx, t)
	if err == nil {
		defer c.Close()
		// Opens the connection: the first query's time must not include it.
		rep.ServerVersion, err = c.ServerVersion(ctx)
	}
	if err != nil {
		rep.Error = fmt.Sprintf("while connecting to the target: %v", err)
		return rep
	}
	fmt.Fprintf(log, "[query] %s server %s%s: %d queries, %d runs each\n", t.Driver, rep.ServerVersion, tlsNote(t.TLS), len(queries), runs)
	prefix := "dbperf-" + randomHex(4)
	for _, q := range queries {
		qr := query.QueryRuns{Name: q.Name, Runs: make([]query.Run, 0, runs)}
		for i := 1; i <= runs; i++ {
			if ctx.Err() != nil {
				rep.Error = fmt.Sprintf("stopped before query %s run %d: %v", q.Name, i, ctx.Err())
				rep.Queries = append(rep.Queries, qr)
				return rep
			}
			run := timeRun(ctx, c, t.Timeout, q.SQL, fmt.Sprintf("%s-%s-%d", prefix, q.Name, i))
			qr.Runs = append(qr.Runs, run)
			if run.Failed() {
				fmt.Fprintf(log, "[query] %s run %d/%d failed after %.1f ms: %s\n", q.Name, i, runs, run.Millis, run.Error)
			} else {
				fmt.Fprintf(log, "[query] %s run %d/%d: %.3f ms, %d rows\n", q.Name, i, runs, run.Millis, run.Rows)
			}
		}
		rep.Queries = append(rep.Queries, qr)
	}
	return rep
}

// timeRun times one run: from sending the statement until the last byte
// of its result was read.
func timeRun(ctx context.Context, c Client, timeout time.Duration, sql, id string) query.Run {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	rows, err := c.Exec(ctx, sql, id)
	run := query.Run{Millis: float64(time.Since(start).Microseconds()) / 1000, Rows: rows, QueryID: id}
	if c, ok := c.(interface{ QueryIDs() bool }); ok && !c.QueryIDs() {
		run.QueryID = ""
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("past the query timeout of %s: %w", timeout, err)
		}
		run.Error = oneLine(err.Error())
	}
	return run
}

// Prepare runs the scripts' statements in order, then the loads; it stops
// at the first error, which names the statement or file.
func Prepare(ctx context.Context, t Target, scripts []string, loads []pod.Load, log io.Writer) error {
	c, err := Connect(ctx, t)
	if err != nil {
		return fmt.Errorf("while connecting to the target: %w", err)
	}
	defer c.Close()
	if _, err := c.ServerVersion(ctx); err != nil {
		return fmt.Errorf("while connecting to the target: %w", err)
	}
	for _, file := range scripts {
		if err := runScript(ctx, c, t.Driver, file, log); err != nil {
			return err
		}
	}
	for _, l := range loads {
		start := time.Now()
		if err := load(ctx, c, l); err != nil {
			return fmt.Errorf("while loading %s into %s: %w", query.RedactURL(l.Source), l.Table, err)
		}
		fmt.Fprintf(log, "[query] loaded %s into %s in %s\n", query.RedactURL(l.Source), l.Table, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func runScript(ctx context.Context, c Client, d benchv1.QueryDriver, file string, log io.Writer) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("while reading the prepare script: %w", err)
	}
	stmts, err := query.Split(string(text), query.DialectOf(d))
	if err != nil {
		return fmt.Errorf("the prepare script %s: %w", file, err)
	}
	for i, s := range stmts {
		if _, err := c.Exec(ctx, s.SQL, ""); err != nil {
			return fmt.Errorf("statement %d of %s (%s): %w", i+1, file, firstLine(s.SQL), err)
		}
	}
	fmt.Fprintf(log, "[query] ran %d statements of %s\n", len(stmts), file)
	return nil
}

// load streams one file into its table.
func load(ctx context.Context, c Client, l pod.Load) error {
	var body io.ReadCloser
	if strings.HasPrefix(l.Source, "http://") || strings.HasPrefix(l.Source, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.Source, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return unwrapURLError(err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("the download answered %s", resp.Status)
		}
		body = resp.Body
	} else {
		f, err := os.Open(l.Source)
		if err != nil {
			return err
		}
		body = f
	}
	defer body.Close()
	r := io.Reader(body)
	if strings.HasSuffix(strings.SplitN(l.Source, "?", 2)[0], ".gz") {
		gz, err := gzip.NewReader(body)
		if err != nil {
			return fmt.Errorf("not gzip-compressed: %w", err)
		}
		defer gz.Close()
		r = gz
	}
	return c.Load(ctx, l.Table, l.Format, r)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tlsNote says how the connection is encrypted, for the log.
func tlsNote(c pod.TLSClient) string {
	switch {
	case c.Verifies():
		return " over TLS (certificate verified)"
	case c.Enabled:
		return " over TLS (certificate not verified: no CA)"
	}
	return ""
}
