package kit

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A test that checks something did not happen waits for a sign that it
// had its chance to: that the controller has reconciled what the test did,
// from controller-runtime's own metrics, rather than for a while in the
// hope that it has.

// ReconcileCount is how many reconciles the controller (benchmarkrun,
// benchmarkcomparison, benchmarkschedule) has finished in this process.
func ReconcileCount(t testing.TB, controller string) float64 {
	t.Helper()
	return Counter(t, "controller_runtime_reconcile_total")[controller]
}

// WaitReconciled waits for the sign that the controller has reconciled
// what the test did since it read since (ReconcileCount): a reconcile
// finished after it, and none in flight. What that reconcile would have
// written is then written.
func WaitReconciled(t testing.TB, controller string, since float64) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, controller+" reconciled", func() error {
		done := Counter(t, "controller_runtime_reconcile_total")[controller]
		busy := Gauge(t, "controller_runtime_active_workers")[controller]
		if done <= since || busy > 0 {
			return fmt.Errorf("%.0f reconciles since, %.0f in flight", done-since, busy)
		}
		return nil
	})
}

// Counter sums a controller-runtime counter by controller.
func Counter(t testing.TB, name string) map[string]float64 {
	t.Helper()
	return byController(t, name, func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
}

// Gauge sums a controller-runtime gauge by controller.
func Gauge(t testing.TB, name string) map[string]float64 {
	t.Helper()
	return byController(t, name, func(m *dto.Metric) float64 { return m.GetGauge().GetValue() })
}

func byController(t testing.TB, name string, value func(*dto.Metric) float64) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range Series(t, name, nil) {
		for _, l := range m.GetLabel() {
			if l.GetName() == "controller" {
				out[l.GetValue()] += value(m)
			}
		}
	}
	return out
}

// Series returns the samples of a metric family of the manager's registry
// whose labels include want.
func Series(t testing.TB, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue next
				}
			}
			out = append(out, m)
		}
	}
	return out
}
