package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

func fakeCluster(t *testing.T, objs ...client.Object) *cluster {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&benchv1.BenchmarkComparison{}, &benchv1.BenchmarkRun{}).Build()
	return &cluster{c: c, namespace: "perf"}
}

func comparisonWith(name string, v benchv1.OverallVerdict, phase benchv1.ComparisonPhase, report string) *benchv1.BenchmarkComparison {
	c := &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf"}}
	c.Status.Verdict, c.Status.Phase, c.Status.ReportConfigMap, c.Status.Progress = v, phase, report, "10/10"
	if v != "" {
		c.Status.Headline = "v4a vs v3: " + strings.ToUpper(string(v)) + " — transactionsPerSecond -12.0 %"
	}
	return c
}

// reportMap is a report ConfigMap with one comparison: tps Worse, p99
// Inconclusive, errors NoChange.
func reportMap(t *testing.T, name string) *corev1.ConfigMap {
	rep := &compare.Report{Baseline: "v3", Candidate: "v4a", Primary: "transactionsPerSecond", Rows: []compare.Row{
		{Step: "clients=20", Metric: "transactionsPerSecond", Unit: "tx/s", Verdict: stats.Worse, DeltaPercent: -12, CILowPercent: -14, CIHighPercent: -10, Reason: "Δ -12 %"},
		{Step: "clients=20", Metric: "latencyP99Millis", Unit: "ms", Verdict: stats.Inconclusive, DeltaPercent: 3, CILowPercent: -4, CIHighPercent: 9, Reason: "not significant"},
		{Step: "clients=20", Metric: "errorPercent", Unit: "%", Verdict: stats.NoChange, Reason: "the same"},
	}}
	raw, err := json.Marshal([]*compare.Report{rep})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf"}, Data: map[string]string{compare.ReportJSONKey: string(raw)}}
}

// wait's exit code is its verdict's, at once with --no-wait, and the
// JUnit file parses with a test case per judged row.
func TestWaitExitCodesAndJUnit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := func(name string, state string) *benchv1.BenchmarkRun {
		r := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf"}}
		r.Status.Phase = benchv1.Phase(state)
		r.Status.Steps = []benchv1.StepStatus{{Name: "clients=20", Repetitions: []benchv1.RepetitionStatus{
			{Index: 1, Verdict: benchv1.VerdictSucceeded}, {Index: 2, Verdict: benchv1.VerdictInvalid, Reasons: []string{"load generator saturated"}}}}}
		return r
	}
	k := fakeCluster(t,
		comparisonWith("regressed", benchv1.OverallRegression, benchv1.ComparisonSucceeded, "regressed-report"), reportMap(t, "regressed-report"),
		comparisonWith("same", benchv1.OverallPass, benchv1.ComparisonSucceeded, ""),
		comparisonWith("better", benchv1.OverallImprovement, benchv1.ComparisonSucceeded, ""),
		comparisonWith("nothing", benchv1.OverallInvalid, benchv1.ComparisonFailed, ""),
		comparisonWith("unsure", benchv1.OverallInconclusive, benchv1.ComparisonSucceeded, ""),
		comparisonWith("running", "", benchv1.ComparisonRunning, ""),
		comparisonWith("conflict", "", benchv1.ComparisonFailed, ""),
		run("ok-run", string(benchv1.PhaseSucceeded)), run("bad-run", string(benchv1.PhaseInvalid)), run("busy-run", string(benchv1.PhaseRunning)))
	for _, c := range []struct {
		name string
		o    waitOptions
		code int
		out  string
	}{
		{"regressed", waitOptions{junit: filepath.Join(dir, "regressed.xml")}, exitRegression, "REGRESSION"},
		{"same", waitOptions{}, exitPass, "PASS"},
		{"better", waitOptions{}, exitPass, "IMPROVEMENT"},
		{"nothing", waitOptions{junit: filepath.Join(dir, "nothing.xml")}, exitNotTrusted, "Invalid"},
		{"unsure", waitOptions{}, exitNotTrusted, "INCONCLUSIVE"},
		{"running", waitOptions{noWait: true}, exitPending, ""},
		{"running", waitOptions{timeout: 300 * time.Millisecond, poll: 100 * time.Millisecond}, exitError, ""},
		{"conflict", waitOptions{}, exitError, "without a verdict"},
		{"ok-run", waitOptions{}, exitPass, "Succeeded"},
		{"bad-run", waitOptions{junit: filepath.Join(dir, "bad-run.xml")}, exitNotTrusted, "Invalid"},
		{"busy-run", waitOptions{noWait: true}, exitPending, ""},
	} {
		var out bytes.Buffer
		if c.o.poll == 0 {
			c.o.poll = time.Second
		}
		err := k.wait(ctx, c.name, c.o, &out)
		code := exitPass
		if err != nil {
			var es exitStatus
			if !errors.As(err, &es) {
				t.Errorf("%s: %v, want an exit status", c.name, err)
				continue
			}
			code = es.code
		}
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("%s %+v: exit %d (%v), printed %q; want exit %d printing %q", c.name, c.o, code, err, out.String(), c.code, c.out)
		}
	}
	if err := k.wait(ctx, "missing", waitOptions{poll: time.Second}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "neither a BenchmarkComparison nor a BenchmarkRun missing") {
		t.Errorf("a name that is nothing: %v", err)
	}
	for file, want := range map[string][3]int{"regressed.xml": {3, 1, 1}, "nothing.xml": {1, 1, 0}, "bad-run.xml": {2, 1, 0}} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var doc junitSuites
		if err := xml.Unmarshal(raw, &doc); err != nil || len(doc.Suites) != 1 {
			t.Fatalf("%s does not parse as JUnit: %v\n%s", file, err, raw)
		}
		s := doc.Suites[0]
		if s.Tests != want[0] || s.Failures != want[1] || s.Skipped != want[2] || len(s.Cases) != s.Tests {
			t.Errorf("%s: %d tests, %d failures, %d skipped; want %v\n%s", file, s.Tests, s.Failures, s.Skipped, want, raw)
		}
	}
}

// Waiting sees the verdict appear: the comparison ends only after wait
// has read it without one (a positive sign it is polling), and wait
// returns the verdict's code.
func TestWaitSeesTheVerdictArrive(t *testing.T) {
	cmp := comparisonWith("late", "", benchv1.ComparisonRunning, "")
	k := fakeCluster(t, cmp)
	var reads atomic.Int32
	k.c = interceptor.NewClient(k.c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*benchv1.BenchmarkComparison); ok {
				reads.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		done <- k.wait(ctx, "late", waitOptions{timeout: 30 * time.Second, poll: 20 * time.Millisecond}, &bytes.Buffer{})
	}()
	for deadline := time.Now().Add(10 * time.Second); reads.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("wait never read the comparison")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("wait returned before the comparison had a verdict: %v", err)
	default:
	}
	var c benchv1.BenchmarkComparison
	if err := k.c.Get(ctx, client.ObjectKeyFromObject(cmp), &c); err != nil {
		t.Fatal(err)
	}
	c.Status.Verdict, c.Status.Phase, c.Status.Headline = benchv1.OverallRegression, benchv1.ComparisonSucceeded, "v4a vs v3: REGRESSION — x"
	if err := k.c.Status().Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var es exitStatus
	if !errors.As(err, &es) || es.code != exitRegression {
		t.Errorf("wait: %v, want exit %d", err, exitRegression)
	}
}
