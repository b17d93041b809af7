package ycsb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/workloads"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// realCommand adapts an invocation built for the image (/opt/ycsb,
// /etc/dbperf/workload) to the jars from Maven Central and a temporary
// directory, changing nothing else of the command line.
func realCommand(t *testing.T, inv pod.Invocation, lib string) []string {
	cmd, _ := realInvocation(t, inv, lib)
	return cmd
}

// realInvocation also moves the output directory (histogram logs) into the
// temporary directory and returns where the result files then are.
func realInvocation(t *testing.T, inv pod.Invocation, lib string) ([]string, []string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range inv.Files {
		content = strings.ReplaceAll(content, pod.OutputDir, out)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for _, f := range inv.ResultFiles {
		files = append(files, strings.Replace(f, pod.OutputDir, out, 1))
	}
	var cmd []string
	for _, a := range inv.Command {
		a = strings.ReplaceAll(a, ycsbHome+"/conf:"+ycsbHome+"/lib/*", filepath.Join(lib, "*"))
		a = strings.ReplaceAll(a, pod.FilesDir, dir)
		cmd = append(cmd, a)
	}
	return cmd, files
}

// The real YCSB 0.17.0 client (site.ycsb:core from Maven Central, fetched by
// hack/fetch-ycsb.sh) runs its client loop against BasicDB with the command
// line and property file the operator builds, through dbperf-runner; the
// parser reads its real report. YCSB_LIB names the jars (hack/test.sh sets it).
func TestRealYCSBClientThroughTheRunner(t *testing.T) {
	lib := testutil.NeedEnv(t, "YCSB_LIB") // YCSB 0.17.0 from Maven Central (hack/fetch-ycsb.sh)
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatal("java is not installed (bash hack/install-deps.sh installs default-jre-headless)")
	}
	spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "basic", CoreWorkload: "a", RecordCount: 1000, OperationCount: 20000,
		Threads: []int32{4}, Percentiles: []string{"99.9"}, Properties: map[string]string{"basicdb.verbose": "false"}}}
	for _, phase := range []struct {
		name    string
		inv     pod.Invocation
		prepare bool
	}{
		{"load", command(spec.YCSB, pod.Endpoint{}, "-load", 2), true},
		{"run", YCSB{}.Run(spec, pod.Endpoint{}, YCSB{}.Steps(spec)[0]), false},
	} {
		t.Run(phase.name, func(t *testing.T) {
			var out bytes.Buffer
			summary := filepath.Join(t.TempDir(), "summary")
			r := runner.Exec(context.Background(), runner.Options{Parser: YCSB{}, Prepare: phase.prepare,
				Command: realCommand(t, phase.inv, lib), SummaryFile: summary, Stdout: &out})
			if r.Verdict != results.Succeeded {
				t.Fatalf("verdict %s %v\n%s", r.Verdict, r.Reasons, out.String())
			}
			if phase.prepare {
				return
			}
			ops, _ := r.Get(results.Key{Name: "opsPerSecond", Operation: "OVERALL"})
			reads, _ := r.Get(results.Key{Name: "operations", Operation: "READ"})
			updates, _ := r.Get(results.Key{Name: "operations", Operation: "UPDATE"})
			_, p999 := r.Get(results.Key{Name: "latencyP999Millis", Operation: "READ"})
			errPct, _ := r.Get(results.Key{Name: "errorPercent"})
			if ops.Value <= 0 || reads.Value+updates.Value != 20000 || !p999 || errPct.Value != 0 {
				t.Errorf("throughput %v, %v reads + %v updates (want 20000), p99.9 present %v, errors %v %%\n%s",
					ops.Value, reads.Value, updates.Value, p999, errPct.Value, out.String())
			}
		})
	}
}

// Two real YCSB clients, each with its per-operation histogram log: the
// parser attaches each run's histogram (its percentiles agree with YCSB's own
// report), and the merge adds the operations and takes its percentiles from
// the merged histogram, between the two clients' values.
func TestRealYCSBHistogramsMerge(t *testing.T) {
	lib := testutil.NeedEnv(t, "YCSB_LIB") // YCSB 0.17.0 from Maven Central (hack/fetch-ycsb.sh)
	spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "basic", CoreWorkload: "a", RecordCount: 1000, OperationCount: 2000,
		Threads: []int32{8}, Properties: map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "4", "basicdb.randomizedelay": "true"}}}
	var parts []*results.Result
	for i := range 2 {
		inv := YCSB{}.Run(spec, pod.Endpoint{}, YCSB{}.Steps(spec)[0])
		cmd, files := realInvocation(t, inv, lib)
		var out bytes.Buffer
		r := runner.Exec(context.Background(), runner.Options{Parser: YCSB{}, Command: cmd, ResultFiles: files, Stdout: &out})
		if r.Verdict != results.Succeeded || r.Histograms["READ"] == "" || r.Histograms["UPDATE"] == "" {
			t.Fatalf("client %d: %s %v, histograms %v, warnings %v\n%s", i, r.Verdict, r.Reasons, r.HistogramOperations(), r.Warnings, out.String())
		}
		h, err := results.DecodeHistogram(r.Histograms["READ"])
		if err != nil {
			t.Fatal(err)
		}
		reported, _ := r.Get(results.Key{Name: "latencyP99Millis", Operation: "READ"})
		fromHist := float64(h.ValueAtPercentile(99)) / 1000
		// YCSB prints whole microseconds of its own histogram of the same samples.
		if d := fromHist - reported.Value; d > 0.002+fromHist*0.001 || d < -0.002-fromHist*0.001 {
			t.Errorf("client %d: READ p99 from the histogram log %v ms, YCSB reported %v ms", i, fromHist, reported.Value)
		}
		parts = append(parts, r)
	}
	m := results.Merge(parts)
	var reads float64
	var lo, hi float64 = 1e18, 0
	for _, p := range parts {
		v, _ := p.Get(results.Key{Name: "operations", Operation: "READ"})
		reads += v.Value
		q, _ := p.Get(results.Key{Name: "latencyP99Millis", Operation: "READ"})
		lo, hi = min(lo, q.Value), max(hi, q.Value)
	}
	got, _ := m.Get(results.Key{Name: "operations", Operation: "READ"})
	p99, ok := m.Get(results.Key{Name: "latencyP99Millis", Operation: "READ"})
	if got.Value != reads || !ok || p99.Value < lo*0.998 || p99.Value > hi*1.002 {
		t.Errorf("merged: %v reads (want %v), p99 %v (clients %v..%v), metrics %+v", got.Value, reads, p99.Value, lo, hi, m.Metrics)
	}
}

// The real YCSB client whose threads all die at start (the binding's init
// throws) prints a summary of zeros and exits 0: through the runner, the
// load phase and the run are Failed with the exception named, never
// Succeeded.
func TestRealYCSBClientWhoseThreadsDieIsNotASuccess(t *testing.T) {
	lib := testutil.NeedEnv(t, "YCSB_LIB") // YCSB 0.17.0 from Maven Central (hack/fetch-ycsb.sh)
	spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "basic", CoreWorkload: "a", RecordCount: 1000, OperationCount: 2000,
		Threads: []int32{2}, Properties: map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "not-a-number"}}}
	for name, phase := range map[string]struct {
		inv     pod.Invocation
		prepare bool
	}{
		"load": {command(spec.YCSB, pod.Endpoint{}, "-load", 2), true},
		"run":  {YCSB{}.Run(spec, pod.Endpoint{}, YCSB{}.Steps(spec)[0]), false},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			r := runner.Exec(context.Background(), runner.Options{Parser: YCSB{}, Prepare: phase.prepare,
				Command: realCommand(t, phase.inv, lib), Stdout: &out})
			if r.ExitCode == nil || *r.ExitCode != 0 {
				t.Fatalf("YCSB was expected to exit 0 (the lie under test), got %v\n%s", r.ExitCode, out.String())
			}
			testutil.CheckVerdict(t, r, results.Failed, "no operation")
			if !strings.Contains(strings.Join(r.Reasons, "|"), "NumberFormatException") {
				t.Errorf("reasons %q do not name the exception\n%s", r.Reasons, out.String())
			}
		})
	}
}

// A capacity level of the real YCSB client: offered 2000/s across two
// load generators (1000 each, the exact share), 2 threads against BasicDB
// with a delay of up to 2 ms run close to what they can sustain, and an
// operation that waits for a busy thread starts late. YCSB measures from
// each operation's intended start too (measurement.interval=both), and the
// parser reports those latencies and histograms: p99 from the intended
// start (40–59 ms here) is many times the service time's (1.4–1.7 ms),
// which stays as serviceLatency… (detail).
func TestRealYCSBAtARateReportsLatencyFromTheIntendedStart(t *testing.T) {
	lib := testutil.NeedEnv(t, "YCSB_LIB") // YCSB 0.17.0 from Maven Central (hack/fetch-ycsb.sh)
	spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "basic", CoreWorkload: "a", RecordCount: 1000, OperationCount: 3000,
		Threads: []int32{2}, TargetOpsPerSecond: 50, Properties: map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "2"}}}
	step := YCSB{}.Steps(spec)[0]
	step.Params[workloads.RateParameter] = 2000
	inv := YCSB{}.Run(spec, pod.Endpoint{}, step)
	inv.Command = runner.ForGenerator(inv.Command, 1, 2)
	if got := strings.Join(inv.Command, " "); !strings.Contains(got, "-target 1000 -p measurement.interval=both") || strings.Count(got, "-target") != 1 {
		t.Fatalf("command %q: want one -target of the generator's share", got)
	}
	cmd, files := realInvocation(t, inv, lib)
	var out bytes.Buffer
	r := runner.Exec(context.Background(), runner.Options{Parser: YCSB{}, Command: cmd, ResultFiles: files, Stdout: &out})
	if r.Verdict != results.Succeeded || r.Parameters["latencyMeasuredFrom"] != "intendedStart" || r.Histograms["READ"] == "" {
		t.Fatalf("%s %v, parameters %v, histograms %v, warnings %v\n%s", r.Verdict, r.Reasons, r.Parameters, r.HistogramOperations(), r.Warnings, out.String())
	}
	intended, _ := r.Get(results.Key{Name: "latencyP99Millis", Operation: "READ"})
	service, ok := r.Get(results.Key{Name: "serviceLatencyP99Millis", Operation: "READ"})
	if !ok || !service.Detail || intended.Value < 3*service.Value {
		t.Errorf("READ p99 %v ms from the intended start, %v ms service time (detail %v): a client behind its schedule shows in the first", intended.Value, service.Value, service.Detail)
	}
	if _, ok := r.Get(results.Key{Name: "operations", Operation: "Intended-READ"}); ok {
		t.Error("the intended measurements counted as operations of their own")
	}
	h, err := results.DecodeHistogram(r.Histograms["READ"])
	if err != nil {
		t.Fatal(err)
	}
	if fromHist := float64(h.ValueAtPercentile(99)) / 1000; fromHist < 0.99*intended.Value || fromHist > 1.01*intended.Value+0.002 {
		t.Errorf("READ's histogram is not the intended one: p99 %v ms, the report %v ms", fromHist, intended.Value)
	}
	t.Logf("READ p99: %.3g ms from the intended start, %.3g ms service time; %v ops/s", intended.Value, service.Value, r.Metrics[0].Value)
}
