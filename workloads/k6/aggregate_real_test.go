package k6

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// TestAggregatedInK6ReportsWhatTheStreamDoes: the same real k6 scenario
// (three request names, a group, a custom trend named like a request, a
// custom counter, three ramp stages, APDEX targets) measured twice through
// dbperf-runner, its samples once streamed to the runner (--sample-
// aggregation stream) and once aggregated in k6 by dbperf's output
// extension (the k6 hack/build-k6.sh builds). Both results hold the same
// figures (every metric and operation), histograms, time-series keys,
// APDEX windows and stages, each histogram counts its operation's
// requests exactly, and each says where its samples were aggregated. A k6
// without the extension (a plain k6, simulated by a k6 whose `version`
// does not list it) is run with the stream, and a k6 whose extension
// wrote nothing says what is missing.
func TestAggregatedInK6ReportsWhatTheStreamDoes(t *testing.T) {
	k6 := testutil.NeedEnv(t, "K6")
	if !hasExtension(k6) {
		t.Fatalf("K6=%s lacks the dbperf output extension: build it with hack/build-k6.sh", k6)
	}
	srv := newKneeServer(t, 4, 2*time.Millisecond)
	script := `import http from 'k6/http';
import { group } from 'k6';
import { Trend, Counter } from 'k6/metrics';
const login = new Trend('login', true);
const orders = new Counter('orders');
export default function () {
  const base = 'http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT;
  const r = http.get(base + '/login', { tags: { name: 'login' } });
  login.add(r.timings.duration);
  group('shop', function () {
    http.get(base + '/items', { tags: { name: 'items' } });
    http.get(base + '/cart', { tags: { name: 'cart' } });
    orders.add(2);
  });
}`
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: script, Stages: []benchv1.K6Stage{
		{Duration: metav1.Duration{Duration: time.Second}, Target: 2},
		{Duration: metav1.Duration{Duration: time.Second}, Target: 4},
		{Duration: metav1.Duration{Duration: time.Second}, Target: 4},
	}}}
	apdex := map[string]time.Duration{results.AllOperations: 10 * time.Millisecond, "items": 5 * time.Millisecond}
	inv := K6{}.Run(spec, srv.ep, K6{}.Steps(spec)[0])
	run := func(k6 string, streamOnly bool) (*results.Result, string) {
		dir := t.TempDir()
		for name, content := range inv.Files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		r := runner.Exec(context.Background(), runner.Options{Parser: K6{}, Command: localCommand(inv.Command, k6, dir, ""),
			Stdout: &out, ResultFiles: []string{filepath.Join(dir, "k6-summary.json")}, Timeout: time.Minute,
			SampleStream: localPath(inv.SampleStream, dir), SamplesFromStreamOnly: streamOnly,
			Samples: workloads.SampleOptions{Metrics: inv.Metrics, Stages: inv.Stages, APDEX: apdex}})
		if r.Verdict != results.Succeeded {
			t.Fatalf("%s %v\n%s", r.Verdict, r.Reasons, out.String())
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "k6-samples.json*")); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		return r, out.String()
	}
	stream, _ := run(k6, true)
	inK6, out := run(k6, false)
	if a := stream.Parameters[SampleAggregationParam]; a != AggregatedFromStream {
		t.Errorf("streamed: aggregation %q", a)
	}
	if a := inK6.Parameters[SampleAggregationParam]; a != AggregatedInK6 || !strings.Contains(out, "aggregates its samples itself") {
		t.Errorf("in k6: aggregation %q\n%s", a, out)
	}
	if got, want := figureKeys(inK6), figureKeys(stream); !slices.Equal(got, want) {
		t.Errorf("figures in k6:\n%v\nstreamed:\n%v", got, want)
	}
	if got, want := seriesKeys(inK6), seriesKeys(stream); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("time-series keys in k6 %v, streamed %v", got, want)
	}
	for _, r := range []*results.Result{stream, inK6} {
		how := r.Parameters[SampleAggregationParam]
		if len(r.Stages) != 3 {
			t.Fatalf("%s: stages %+v", how, r.Stages)
		}
		for _, op := range []string{"login", "items", "cart", "login (trend)", "http_req_duration"} {
			h, err := results.DecodeHistogram(r.Histograms[op])
			if r.Histograms[op] == "" || err != nil {
				t.Errorf("%s: no histogram of %s (%v)", how, op, err)
				continue
			}
			n := "requests"
			key := results.Key{Name: n, Operation: op}
			switch op {
			case "login (trend)":
				key.Operation = "login" // one trend sample per login request
			case "http_req_duration":
				key = results.Key{Name: "count", Operation: "http_reqs"}
			}
			if want, ok := r.Get(key); !ok || float64(h.TotalCount()) != want.Value {
				t.Errorf("%s: the histogram of %s counts %d, its requests %v", how, op, h.TotalCount(), want)
			}
		}
		for _, w := range r.Warnings {
			if strings.Contains(w, "sample") {
				t.Errorf("%s: warning %q", how, w)
			}
		}
	}

	// A k6 without the extension: its `version` does not list it.
	plain := filepath.Join(t.TempDir(), "k6")
	wrapper := "#!/bin/sh\nif [ \"$1\" = version ]; then echo 'k6 v1.0.0'; exit 0; fi\nexec " + k6 + " \"$@\"\n"
	if err := os.WriteFile(plain, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	if r, _ := run(plain, false); r.Parameters[SampleAggregationParam] != AggregatedFromStream || len(r.Stages) != 3 {
		t.Errorf("a k6 without the extension: aggregation %q, %d stages", r.Parameters[SampleAggregationParam], len(r.Stages))
	}

	// An extension that wrote nothing (the file removed as k6 ends): the
	// summary's figures stay, and the result says what is missing.
	lost := filepath.Join(t.TempDir(), "k6")
	wrapper = "#!/bin/sh\n" + k6 + " \"$@\"; rc=$?\nfor a in \"$@\"; do case \"$a\" in dbperf=*) rm -f \"${a#dbperf=}\";; esac; done\nexit $rc\n"
	if err := os.WriteFile(lost, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	r, _ := run(lost, false)
	if _, ok := r.Get(results.Key{Name: "requestsPerSecond", Operation: "http_reqs"}); !ok || !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, "are missing") && strings.Contains(w, "wrote no")
	}) {
		t.Errorf("aggregates lost: warnings %q", r.Warnings)
	}
}

// figureKeys lists a result's figures (name and operation), sorted.
func figureKeys(r *results.Result) []string {
	var keys []string
	for _, m := range r.Metrics {
		keys = append(keys, m.Name+" "+m.Operation)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// seriesKeys lists the keys of a result's time series, sorted.
func seriesKeys(r *results.Result) []string {
	var keys []string
	for _, p := range r.TimeSeries {
		for k := range p.Values {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
