package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A finished run publishes its headline medians per step with bounded
// labels; deleting the run removes its series; runs are counted by phase.
func TestRunMetrics(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.MeasureOnly("metered", 4, 1)
	run.Labels = map[string]string{benchv1.LabelRelease: "v1.2.3"}
	h.Create(run)
	h.Replay(h.WaitJob(specs.MeasureJobName(h.Run("metered"), 0, 1)), node, "pgbench", kit.Fixture(t, "pgbench", "pg14plus-tpcb-scale50-haproxy.txt"))
	done := h.WaitPhase("metered", 20*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid)
	var median float64
	for _, s := range done.Status.Steps[0].Summary {
		if s.Name == "transactionsPerSecond" {
			median = s.Median
		}
	}
	want := map[string]string{"namespace": h.NS, "run": "metered", "metric": "transactionsPerSecond", "step": "clients=4",
		"workload": "pgbench", "pool": "loadgen", "release": "v1.2.3", "unit": "tx/s"}
	testutil.Eventually(t, 10*time.Second, "dbperf_run_result published", func() error {
		got := kit.Series(t, "dbperf_run_result", want)
		if len(got) != 1 || got[0].GetGauge().GetValue() != median {
			return fmt.Errorf("series %v, want one with value %v", got, median)
		}
		return nil
	})
	if n := kit.Series(t, "dbperf_runs", map[string]string{"phase": string(done.Status.Phase)}); len(n) != 1 || n[0].GetGauge().GetValue() < 1 {
		t.Errorf("dbperf_runs{phase=%s}: %v", done.Status.Phase, n)
	}
	if err := k8s.Delete(context.Background(), done); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "series removed with the run", func() error {
		if got := kit.Series(t, "dbperf_run_result", map[string]string{"namespace": h.NS, "run": "metered"}); len(got) != 0 {
			return fmt.Errorf("%d series left", len(got))
		}
		return nil
	})
}

// The Grafana dashboard (the chart's dashboards/, which it ships for
// Grafana's sidecar) parses and queries only metrics the manager exports
// and, in its Hosts row, node_exporter's.
func TestGrafanaDashboardUsesOurMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator", "dashboards", "dbperf-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	known := []string{"dbperf_run_result", "dbperf_run_valid", "dbperf_runs", "dbperf_comparison_verdicts", "dbperf_schedule_regressed",
		"node_cpu_seconds_total", "node_memory_MemTotal_bytes", "node_memory_MemAvailable_bytes", "node_disk_read_bytes_total",
		"node_disk_written_bytes_total", "node_disk_read_time_seconds_total", "node_disk_reads_completed_total",
		"node_disk_write_time_seconds_total", "node_disk_writes_completed_total", "node_network_receive_bytes_total",
		"node_network_transmit_bytes_total"}
	if len(dash.Panels) < 5 {
		t.Fatalf("%d panels", len(dash.Panels))
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			names := regexp.MustCompile(`\b(dbperf|node)_[A-Za-z_]+`).FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q queries no dbperf or node_exporter metric: %s", p.Title, tg.Expr)
			}
			for _, n := range names {
				if !slices.Contains(known, n) {
					t.Errorf("panel %q queries %s, which the manager does not export", p.Title, n)
				}
			}
		}
	}
}
