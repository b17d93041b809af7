package prometheus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestRelabelledClusterNeedsItsSettings: a real Prometheus scrapes a real
// node_exporter whose series carry the node's name in a label of this
// cluster's own (`nodename`, their `instance` left as host:port) under
// a job of its own. With the defaults the node's figures come back
// empty, each a warning naming the query, never a zero; with the install's
// settings as the chart's values give them (labels.node: nodename,
// selectors.node: job="hosts", read by LoadFile) the node's CPU agrees
// with /proc/stat over the window: within 0.3–0.6 % on a quiet machine
// over 6 s, but 8.1 % off once in CI, the other packages' load changing
// between the window's edges and the scrapes nearest them; over 12 s
// within 10 %. A wrong label finds nothing, a selector matching more
// than the node is off by a factor.
func TestRelabelledClusterNeedsItsSettings(t *testing.T) {
	testutil.RequirePrometheus(t)
	url := testutil.StartPrometheus(t, time.Second,
		testutil.ScrapeTarget{Job: "hosts", Address: testutil.StartNodeExporter(t), Labels: map[string]string{"nodename": testNode}})
	waitForSamples(t, url, `count_over_time(up{job="hosts"}[1m]) >= 2`)
	startBurner(t, 500) // a busy node, so that a wrong figure shows
	start, statStart := time.Now(), testutil.ReadProcStat(t)
	// The window ends once Prometheus has scraped the node 12 s after its
	// start: a poll for that scrape, within waitForSamples' deadline.
	waitForSamples(t, url, fmt.Sprintf(`timestamp(up{job="hosts"}) >= %d`, start.Add(12*time.Second).Unix()))
	end, statEnd := time.Now(), testutil.ReadProcStat(t)
	procBusy := testutil.BusyPercent(statStart, statEnd)
	node := []telemetry.Subject{{Role: telemetry.RoleNode, Name: testNode}}
	collect := func(cfg Config) *telemetry.Report {
		t.Helper()
		cfg.Lag, cfg.Step, cfg.RateRange = 2500*time.Millisecond, time.Second, 3*time.Second
		src, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := src.Collect(ctx, telemetry.Window{Start: start, End: end}, node)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	defaults := collect(Config{Address: url, Namespace: testNamespace})
	if _, ok := figures(defaults)[testutil.FigureKey{Name: "cpuBusyPercent", Subject: "node/" + testNode}]; ok {
		t.Errorf("the defaults found the relabelled node's CPU: %+v", defaults.Figures)
	}
	if !hasWarning(defaults, "no data for cpuBusyPercent: ") {
		t.Errorf("the defaults: no warning naming the empty query in %q", defaults.Warnings)
	}

	cfg, err := LoadFile([]byte("labels: {node: nodename}\nselectors: {node: 'job=\"hosts\"'}\n"), url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Namespace = testNamespace
	set := collect(cfg)
	busy := figures(set).Get(t, "cpuBusyPercent", "node/"+testNode)
	t.Logf("relabelled node with its settings: cpuBusyPercent %.1f, /proc/stat %.1f (%+.1f %%); defaults' warnings %d",
		busy, procBusy, 100*(busy-procBusy)/procBusy, len(defaults.Warnings))
	within(t, "cpuBusyPercent with the install's settings against /proc/stat", busy, procBusy, 0.10)
	if hasWarning(set, "no data for cpuBusyPercent") {
		t.Errorf("with the settings: %q", set.Warnings)
	}
	// Every core and device has its series, so a rule over time can judge
	// one hot core or a stalled disk.
	perMember := map[string]int{}
	for _, sr := range set.Series {
		if sr.Subject == "node/"+testNode && len(sr.Samples) > 1 {
			base, part := SplitPart(sr.Name)
			if part != "" || base == "cpuUserPercent" { // by mode: the node's
				perMember[base]++
			}
		}
	}
	for _, base := range []string{"cpuBusyPercent", "cpuUserPercent", "diskWriteBytesPerSecond", "diskWritesPerSecond", "networkReceiveBytesPerSecond"} {
		if perMember[base] == 0 {
			t.Errorf("no per-core or per-device series of %s: %v", base, perMember)
		}
	}
}
