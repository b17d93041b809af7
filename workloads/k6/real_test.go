package k6

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// runReal runs the operator's k6 invocation with the real k6 (built from the
// Go module proxy by hack/build-k6.sh; K6 names it) through dbperf-runner,
// with the pod's paths mapped to a temporary directory.
func runReal(t *testing.T, spec *benchv1.WorkloadSpec, ep pod.Endpoint, scriptFile string) (*results.Result, string) {
	return runRealAPDEX(t, spec, ep, scriptFile, nil)
}

func localPath(p, dir string) string {
	if p == "" {
		return ""
	}
	return strings.ReplaceAll(p, pod.OutputDir, dir)
}

// runRealAPDEX is runReal with APDEX targets for the runner's windows.
func runRealAPDEX(t *testing.T, spec *benchv1.WorkloadSpec, ep pod.Endpoint, scriptFile string, apdex map[string]time.Duration) (*results.Result, string) {
	t.Helper()
	k6 := testutil.NeedEnv(t, "K6") // built from the Go module proxy by hack/build-k6.sh
	dir := t.TempDir()
	inv := K6{}.Run(spec, ep, K6{}.Steps(spec)[0])
	for name, content := range inv.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := localCommand(inv.Command, k6, dir, scriptFile)
	var out bytes.Buffer
	r := runner.Exec(context.Background(), runner.Options{Parser: K6{}, Command: cmd, SummaryFile: filepath.Join(dir, "summary"), Stdout: &out,
		ResultFiles: []string{filepath.Join(dir, "k6-summary.json")}, Timeout: 2 * time.Minute,
		SampleStream: localPath(inv.SampleStream, dir), Samples: workloads.SampleOptions{Metrics: inv.Metrics, APDEX: apdex}})
	return r, out.String()
}

// localCommand maps the pod's paths of a k6 command line to the local k6
// binary, a temporary directory and the script file.
func localCommand(command []string, k6, dir, scriptFile string) []string {
	var cmd []string
	for _, a := range command {
		switch {
		case a == "k6":
			a = k6
		case strings.HasPrefix(a, pod.FilesDir):
			a = filepath.Join(dir, strings.TrimPrefix(a, pod.FilesDir))
		case strings.HasPrefix(a, pod.ConfigMapFilesDir):
			a = scriptFile
		case strings.Contains(a, pod.OutputDir): // also json=/dbperf/out/...
			a = strings.ReplaceAll(a, pod.OutputDir, dir)
		}
		cmd = append(cmd, a)
	}
	return cmd
}

// The real k6 against a local HTTP server: a passing run and a run whose
// threshold is crossed (exit 99: Invalid, thresholds named, not a crash).
func TestRealK6HTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(30 * time.Millisecond)
		}
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	host, port, _ := strings.Cut(addr, ":")
	ep := pod.Endpoint{Host: host, Port: int32(mustAtoi(t, port))}
	script := `import http from 'k6/http';
import { check } from 'k6';
export const options = { thresholds: { http_req_duration: [__ENV.LIMIT] } };
export default function () {
  const r = http.get('http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT + __ENV.PATH_);
  check(r, { 'status 200': (x) => x.status === 200 });
}`
	for _, c := range []struct {
		name, path, limit string
		verdict           results.Verdict
	}{
		{"pass", "/", "p(95)<1000", results.Succeeded},
		{"thresholds crossed", "/slow", "p(95)<5", results.Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: script, VUs: []int32{4},
				Duration: &metav1Duration{Duration: 2 * time.Second}, Env: map[string]string{"PATH_": c.path, "LIMIT": c.limit}}}
			r, out := runReal(t, spec, ep, "")
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s %v\n%s", r.Verdict, r.Reasons, out)
			}
			rps, ok := r.Get(results.Key{Name: "requestsPerSecond", Operation: "http_reqs"})
			if !ok || rps.Value <= 0 {
				t.Errorf("requests per second %v", rps)
			}
			if c.verdict == results.Invalid && !strings.Contains(strings.Join(r.Reasons, " "), "p(95)<5") {
				t.Errorf("reasons %v do not name the crossed threshold", r.Reasons)
			}
		})
	}
}

// The sample's session state machine script runs for real against a local
// redis-server and reports business operations and per-phase latency.
func TestRealK6SessionSampleAgainstRedis(t *testing.T) {
	testutil.NeedEnv(t, "K6")
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "samples", "k6-session-valkey.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(strings.Split(string(raw), "\n---\n")[0]), &cm); err != nil || cm.Data["session.js"] == "" {
		t.Fatalf("sample ConfigMap: %v", err)
	}
	script := filepath.Join(t.TempDir(), "session.js")
	if err := os.WriteFile(script, []byte(cm.Data["session.js"]), 0o644); err != nil {
		t.Fatal(err)
	}
	redis := testutil.StartRedis(t)
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{ScriptConfigMap: &corev1ConfigMapKeySelector, VUs: []int32{4},
		Duration: &metav1Duration{Duration: 2 * time.Second}}}
	r, out := runReal(t, spec, pod.Endpoint{Host: "127.0.0.1", Port: int32(redis.Port)}, script)
	if r.Verdict != results.Succeeded {
		t.Fatalf("verdict %s %v\n%s", r.Verdict, r.Reasons, out)
	}
	ops, ok := r.Get(results.Key{Name: "ratePerSecond", Operation: "business_ops"})
	if !ok || ops.Value <= 0 {
		t.Errorf("business_ops rate %v\n%s", ops, out)
	}
	for _, phase := range []string{"phase_start", "phase_continue", "phase_end"} {
		if _, ok := r.Get(results.Key{Name: "latencyP99Millis", Operation: phase}); !ok {
			t.Errorf("no p99 for %s", phase)
		}
	}
}

type metav1Duration = metav1.Duration

var corev1ConfigMapKeySelector = corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "session-script"}, Key: "session.js"}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two real k6 processes as two load generators of one measurement: each
// runs its execution segment (half the VUs and iterations), both wait at
// the start barrier until it is opened, and the merge adds their requests.
func TestRealK6ParallelSegmentsAndBarrier(t *testing.T) {
	k6 := testutil.NeedEnv(t, "K6") // built from the Go module proxy by hack/build-k6.sh
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	ep := pod.Endpoint{Host: host, Port: int32(mustAtoi(t, port))}
	script := `import http from 'k6/http';
export default function () { http.get('http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT + '/'); }`
	spec := &benchv1.WorkloadSpec{Parallelism: 2, K6: &benchv1.K6Workload{Script: script, VUs: []int32{4}, Args: []string{"--iterations", "40"}}}
	inv := K6{}.Run(spec, ep, K6{}.Steps(spec)[0])
	if !strings.Contains(strings.Join(inv.Command, " "), "--execution-segment "+workloads.SegmentPlaceholder) {
		t.Fatalf("command %v", inv.Command)
	}
	barrier := filepath.Join(t.TempDir(), "start-at")
	type part struct {
		r   *results.Result
		out string
	}
	parts := make([]part, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		dir := t.TempDir()
		for name, content := range inv.Files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := localCommand(runner.ForGenerator(inv.Command, i, 2), k6, dir, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			if _, err := runner.WaitForStart(context.Background(), barrier, time.Minute, &out, nil); err != nil {
				parts[i] = part{out: err.Error()}
				return
			}
			r := runner.Exec(context.Background(), runner.Options{Parser: K6{}, Command: cmd, Stdout: &out,
				ResultFiles: []string{filepath.Join(dir, "k6-summary.json")}, Timeout: 2 * time.Minute,
				SampleStream: localPath(inv.SampleStream, dir)})
			parts[i] = part{r, out.String()}
		}()
	}
	time.Sleep(time.Second)
	mu.Lock()
	early := hits
	mu.Unlock()
	if early != 0 {
		t.Fatalf("%d requests before the barrier opened", early)
	}
	if err := os.WriteFile(barrier, []byte(time.Now().Add(500*time.Millisecond).UTC().Format(time.RFC3339Nano)), 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	var rs []*results.Result
	for i, p := range parts {
		if p.r == nil || p.r.Verdict != results.Succeeded {
			t.Fatalf("generator %d: %+v\n%s", i, p.r, p.out)
		}
		if got := testutil.MetricValue(t, p.r, "count", "iterations"); got != 20 {
			t.Errorf("generator %d ran %v iterations, want its segment's 20\n%s", i, got, p.out)
		}
		if !strings.Contains(p.out, "all load generators are running") {
			t.Errorf("generator %d did not report the barrier:\n%s", i, p.out)
		}
		rs = append(rs, p.r)
	}
	m := results.Merge(rs)
	if got := testutil.MetricValue(t, m, "count", "http_reqs"); got != 40 || hits != 40 {
		t.Errorf("merged %v requests, server saw %d, want 40", got, hits)
	}
	// Both generators' histograms from their sample streams: the merged
	// percentiles are exact, not upper bounds.
	if _, ok := m.Get(results.Key{Name: "latencyP95Millis", Operation: "http_req_duration"}); !ok {
		t.Errorf("no exact merged p95: %+v", m.Metrics)
	}
	var merged float64
	prev := 0.0
	for _, p := range m.TimeSeries {
		merged += p.Values["requestsPerSecond"] * (p.ElapsedSeconds - prev)
		prev = p.ElapsedSeconds
	}
	if math.Abs(merged-40) > 0.5 {
		t.Errorf("the merged series adds up to %.2f requests, want 40: %+v %v", merged, m.TimeSeries, m.Warnings)
	}
}

// An exception in a script's iterations is logged by k6 at level error
// and the iteration counted complete: the real k6 with a script that throws
// every time fails the measurement, one that throws now and then makes it
// not valid; both quote the first error.
func TestRealK6ScriptErrors(t *testing.T) {
	for _, c := range []struct {
		name, body string
		verdict    results.Verdict
		reason     string
	}{
		{"every iteration", `throw new Error('WRONGPASS invalid username-password pair');`, results.Failed, "every iteration logged an error"},
		{"some iterations", `if (exec.vu.iterationInScenario % 10 === 3) { throw new Error('WRONGPASS invalid username-password pair'); } sleep(0.01);`, results.Invalid, "the script logged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := "import exec from 'k6/execution';\nimport { sleep } from 'k6';\nexport default function () { " + c.body + " }\n"
			spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: script, VUs: []int32{1}, Duration: &metav1Duration{Duration: time.Second}}}
			r, out := runReal(t, spec, pod.Endpoint{Host: "127.0.0.1", Port: 1}, "")
			why := strings.Join(r.Reasons, "; ")
			if r.Verdict != c.verdict || !strings.Contains(why, c.reason) || !strings.Contains(why, "the first: Error: WRONGPASS invalid username-password pair") {
				t.Fatalf("%s: %s\n%s", r.Verdict, why, out)
			}
		})
	}
}
