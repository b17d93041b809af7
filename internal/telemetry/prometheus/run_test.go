package prometheus

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestRunAsksItsOwnQueriesAndHosts: a real Prometheus scrapes a real
// node_exporter standing for a database host outside the cluster (job
// "appliances"). A run that names the host by its selector gets the node
// figures under host/db-01, its CPU agreeing within 10 % with /proc/stat
// read every 100 ms over the window (its edges within a scrape);
// the run's own queries are asked after the install's: one answered, one
// with no data and one Prometheus refuses are warnings naming them, one
// named like an install query is not asked, and none of them costs the
// other figures.
func TestRunAsksItsOwnQueriesAndHosts(t *testing.T) {
	testutil.RequirePrometheus(t)
	procs := testutil.StartProcSampler(t, 100*time.Millisecond)
	url := testutil.StartPrometheus(t, time.Second, testutil.ScrapeTarget{Job: "appliances", Address: testutil.StartNodeExporter(t)})
	waitForSamples(t, url, `count_over_time(up{job="appliances"}[1m]) >= 2`)
	startBurner(t, 500)
	start := time.Now()
	waitForSamples(t, url, fmt.Sprintf(`timestamp(up{job="appliances"}) >= %d`, start.Add(12*time.Second).Unix()))
	end := time.Now()
	// The figure is rate() over the window: between its first and last
	// scrape (1 s apart), extrapolated to its edges. /proc/stat, read
	// every 100 ms beside it, gives the host's busy share over the window
	// with its edges anywhere within a scrape of them: the figure agrees
	// within 10 % with one of those (on a machine whose load changes by
	// the second, the edges alone moved it by 10 % in CI).
	if err := testutil.Poll(context.Background(), 2*time.Second, 50*time.Millisecond, "/proc/stat sampled past the window", func() error {
		if _, ok := procs.BusyPercent(end.Add(-time.Millisecond), end); !ok {
			return fmt.Errorf("no sample after %s", end.Format("15:04:05.000"))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for a := time.Duration(0); a <= 1500*time.Millisecond; a += 250 * time.Millisecond {
		for b := time.Duration(0); b <= 1500*time.Millisecond; b += 250 * time.Millisecond {
			if v, ok := procs.BusyPercent(start.Add(a), end.Add(-b)); ok {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	procBusy, _ := procs.BusyPercent(start, end)

	src, err := New(Config{Address: url, Namespace: testNamespace, Lag: 2500 * time.Millisecond, Step: time.Second, RateRange: 3 * time.Second,
		Queries: []Query{{Name: "scrapedSeries", Query: `sum(scrape_samples_scraped{job="appliances"})`, Unit: "series"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := src.CollectRun(ctx, telemetry.Window{Start: start, End: end}, nil, telemetry.RunQueries{
		Hosts: []telemetry.HostSelector{{Name: "db-01", Selector: `job="appliances"`}},
		Queries: []telemetry.Query{
			{Name: "appliancesUp", Query: `sum(up{job="appliances"})`, Unit: "targets", Subject: "host/db-01"},
			{Name: "missingSeries", Query: `sum(no_such_metric{job="appliances"})`},
			{Name: "brokenQuery", Query: `sum(up{job=})`},
			{Name: "scrapedSeries", Query: `vector(1)`},
		}})
	if err != nil {
		t.Fatal(err)
	}
	f := figures(rep)
	busy := f.Get(t, "cpuBusyPercent", "host/db-01")
	t.Logf("host db-01 by selector: cpuBusyPercent %.1f, /proc/stat %.1f over the window (%.1f to %.1f with its edges within a scrape); warnings %q", busy, procBusy, lo, hi, rep.Warnings)
	if busy < 0.9*lo || busy > 1.1*hi {
		t.Errorf("the host's cpuBusyPercent %.1f: /proc/stat says %.1f to %.1f over the window, edges within a scrape, and 10 %% more either way", busy, lo, hi)
	}
	if up := f.Get(t, "appliancesUp", "host/db-01"); up != 1 {
		t.Errorf("the run's query appliancesUp = %v, want 1", up)
	}
	if v := f.Get(t, "scrapedSeries", "server"); v <= 1 {
		t.Errorf("the install's scrapedSeries = %v: the run's query of that name replaced it", v)
	}
	for _, want := range []string{"no data for the query missingSeries", "the run's query brokenQuery failed", "the run's query scrapedSeries is not asked"} {
		found := false
		for _, w := range rep.Warnings {
			found = found || strings.Contains(w, want)
		}
		if !found {
			t.Errorf("no warning %q in %q", want, rep.Warnings)
		}
	}
	series := 0
	for _, s := range rep.Series {
		if s.Subject == "host/db-01" {
			series++
		}
	}
	if series < 10 {
		t.Errorf("%d series of host/db-01: its CPU, memory, disks and interfaces over time", series)
	}
}
