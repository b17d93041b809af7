package profile

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

func needPerf(t *testing.T) string {
	t.Helper()
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Fatalf("perf is needed (hack/install-deps.sh installs linux-perf): %v", err)
	}
	return perf
}

// TestProfileOfTheLocalPostgres: a CPU-heavy query (md5 of 1.5 million
// numbers) run by the local PostgreSQL in a backend started after the
// profile (the server's process found from the port it listens on, its
// backend from perf's record of the fork) is in the profile, by its
// function's name, and nothing of the processes beside it (the test's own
// busy loop) is.
func TestProfileOfTheLocalPostgres(t *testing.T) {
	perf := needPerf(t)
	srv, err := localdb.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	root, err := ServerProcess("", "127.0.0.1", srv.Port)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := Start(ctx, Options{Perf: perf, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	busy, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	go func() { // a process that is not the server's, busy beside it
		for busy.Err() == nil {
		}
	}()
	began := time.Now()
	if _, err := srv.Query("SET jit = off; SELECT count(*) FROM generate_series(1, 1500000) i WHERE md5(i::text) LIKE 'ab%'"); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	p, err := rec.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fns := Functions(p)
	var top []string
	for _, f := range fns[:min(8, len(fns))] {
		top = append(top, f.Name)
	}
	t.Logf("query %s; %d samples of the server (%d processes), %d of the host; %d stacks; top self time: %s",
		took.Round(time.Millisecond), p.Samples, p.Processes, p.HostSamples, len(p.Stacks), strings.Join(top, ", "))
	// The query's backend ran for `took` of CPU at most: its samples are
	// a share of it at the frequency — less what a machine busy with other
	// tests took away (a third of it with four busy processes on two
	// cores), never more.
	if want := took.Seconds() * DefaultFrequencyHz; float64(p.Samples) < 0.15*want || float64(p.Samples) > 1.3*want+20 {
		t.Errorf("%d samples of the server over a %s query at %d Hz: want about %.0f", p.Samples, took, DefaultFrequencyHz, want)
	}
	for _, s := range p.Stacks {
		if !strings.HasPrefix(s.Stack, "postgres;") {
			t.Errorf("a stack not of the server's processes: %q", s.Stack)
		}
	}
	// The busy loop beside the server is in the host's samples only.
	if p.HostSamples <= p.Samples {
		t.Errorf("%d samples of the host, %d of the server: the test's busy loop is not told apart", p.HostSamples, p.Samples)
	}
	// Self times add up to the server's samples, and the query's own
	// function (PostgreSQL's md5 over OpenSSL's) is named, on the stacks
	// of its samples: its self time is small beside OpenSSL's, so it can
	// miss the top of a short profile on a loaded machine (a run of
	// ./internal/... at once had 113 samples and none of its own), while
	// every sample of the hashing passes through it.
	var sum float64
	named := false
	for _, f := range fns {
		sum += f.TimeMillis
	}
	for _, s := range p.Stacks {
		named = named || strings.Contains(s.Stack, ";pg_md5_hash;") || strings.HasSuffix(s.Stack, ";pg_md5_hash")
	}
	if total := p.Millis(p.Samples - p.OtherSamples); math.Abs(sum-total) > 1e-6 {
		t.Errorf("the functions' self times add up to %.1f ms, the samples to %.1f", sum, total)
	}
	if !named {
		t.Errorf("pg_md5_hash is on none of the server's stacks (top self time: %s)", strings.Join(top, ", "))
	}
}
