package workloads_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/custom"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// goodOutput is, for every registered tool, a real output its parser calls
// Succeeded.
func goodOutput(t *testing.T, tool string) workloads.ParseInput {
	fixture := func(dir, name string) []byte { return testutil.ReadFixture(t, dir, name) }
	switch tool {
	case "pgbench":
		return workloads.ParseInput{Output: fixture("pgbench", "pg16-380c-prepared-rate-progress-ok.txt")}
	case "memtier":
		return workloads.ParseInput{Output: fixture("memtier", "vc-redis-text-1.txt")}
	case "redis-benchmark":
		// redis-benchmark 7.0.15 against redis-server 7.0.15 on 127.0.0.1.
		return workloads.ParseInput{Output: []byte(`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","37037.04","0.144","0.040","0.135","0.239","0.319","4.671"
`)}
	case "ycsb":
		return workloads.ParseInput{Output: fixture("ycsb", "vc-mongodb-0.17.0-workloada-8threads.txt")}
	case "k6":
		return workloads.ParseInput{Files: map[string][]byte{"summary.json": fixture("k6", "legacy-summary-export-p99-p999-493k-reqs.json")}}
	case "osb":
		return workloads.ParseInput{Output: fixture("osb", "docs-quickstart-percolator-test-mode-summary.txt")}
	case "hammerdb":
		return workloads.ParseInput{Output: fixture("hammerdb", "pkb-mysql-v4.0-cli-4vu-20wh.txt")}
	case "custom":
		// The line format, with the parser configuration the operator
		// writes for the spec.
		spec := &benchv1.WorkloadSpec{Image: "x", Custom: &benchv1.CustomWorkload{Command: []string{"bench"}, Format: benchv1.CustomLines,
			PrimaryMetric: benchv1.CustomMetricKey{Name: "opsPerSecond"}}}
		inv := custom.Custom{}.Run(spec, pod.Endpoint{Host: "db", Port: 5432}, workloads.Step{Name: "default"})
		return workloads.ParseInput{Output: []byte(custom.LinesHeader + "\nmetric opsPerSecond - 1200 ops/s HigherIsBetter\n"),
			Config: []byte(inv.Files[path.Base(inv.ParserConfig)])}
	case "query-bench":
		// A report of `dbperf-runner query`: two queries, 3 runs each.
		b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "workloads", "query", "testdata", "clean-3-runs.json"))
		if err != nil {
			t.Fatal(err)
		}
		return workloads.ParseInput{Files: map[string][]byte{query.ResultFileName: b}}
	}
	t.Fatalf("no good output for tool %s: add one", tool)
	return workloads.ParseInput{}
}

// Every parser honours the exit code: a complete summary followed by a
// crash (134, SIGABRT, as after "alloc: invalid block") or an error exit is
// Failed and says the code; exit 0 leaves the good output Succeeded.
func TestEveryParserHonoursTheExitCode(t *testing.T) {
	for _, tool := range registry.Names() {
		t.Run(tool, func(t *testing.T) {
			w, err := registry.ByName(tool)
			if err != nil {
				t.Fatal(err)
			}
			in := goodOutput(t, tool)
			for code, want := range map[int]results.Verdict{0: results.Succeeded, 1: results.Failed, 134: results.Failed} {
				in.ExitCode = &code
				r := w.Parse(in)
				if r.Verdict != want {
					t.Errorf("exit %d: verdict %s %v, want %s", code, r.Verdict, r.Reasons, want)
				}
				if r.ExitCode == nil || *r.ExitCode != code {
					t.Errorf("exit %d: the result keeps exit code %v", code, r.ExitCode)
				}
				if code != 0 && !strings.Contains(strings.Join(r.Reasons, "|"), "exited with code "+strconv.Itoa(code)) {
					t.Errorf("exit %d: reasons %q do not name the code", code, r.Reasons)
				}
			}
		})
	}
}

func TestJudgeExitCodeNamesTheSignal(t *testing.T) {
	cases := map[string]struct {
		code   *int
		want   results.Verdict
		reason string
	}{
		"unknown":    {nil, results.Succeeded, ""},
		"zero":       {ptr(0), results.Succeeded, ""},
		"error":      {ptr(2), results.Failed, "tool exited with code 2"},
		"abort":      {ptr(134), results.Failed, "tool exited with code 134 (killed by signal 6, aborted)"},
		"terminated": {ptr(143), results.Failed, "signal 15, terminated"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := results.New("tool")
			workloads.JudgeExitCode(r, "tool", c.code)
			testutil.CheckVerdict(t, r, c.want, c.reason)
		})
	}
}

func ptr(i int) *int { return &i }

// testdata reads a file a tool package keeps of real runs (its
// testdata/README.md says how each was produced); .gz files are unpacked.
func testdata(t *testing.T, tool, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(tool, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

// A measurement that measured nothing is never Succeeded, whatever the
// tool and whatever its exit code (all of these exited 0).
func TestNothingMeasuredIsNeverSucceeded(t *testing.T) {
	// Real YCSB 0.17.0 exception traces of threads that died, before the
	// summary of a run whose other threads went on.
	ycsbDied := testdata(t, "ycsb", "ycsb-0.17.0-basicdb-init-exception-all-threads.txt")
	trace := ycsbDied[bytes.Index(ycsbDied, []byte("Exception in thread")):bytes.Index(ycsbDied, []byte("Exception in thread \"Thread-2\""))]
	someDied := append(append([]byte{}, trace...), testutil.ReadFixture(t, "ycsb", "vc-mongodb-0.17.0-workloada-8threads.txt")...)
	hammer := string(testutil.ReadFixture(t, "hammerdb", "pkb-mysql-v4.0-cli-4vu-20wh.txt"))
	osbOut := string(testutil.ReadFixture(t, "osb", "docs-quickstart-percolator-test-mode-summary.txt"))
	cases := map[string]struct {
		tool   string
		in     workloads.ParseInput
		want   results.Verdict
		reason string
	}{
		"pgbench 15, rate-limited to no transaction": {"pgbench", workloads.ParseInput{Output: testdata(t, "pgbench", "pg15-rate-limited-zero-transactions.txt")},
			results.Failed, "no transaction completed"},
		"redis-benchmark 7, -n 0": {"redis-benchmark", workloads.ParseInput{Output: testdata(t, "redisbenchmark", "redis7-zero-requests-csv.txt")},
			results.Failed, "no request of test SET completed"},
		"YCSB 0.17.0, every client thread died": {"ycsb", workloads.ParseInput{Output: ycsbDied},
			results.Failed, "no operation"},
		"YCSB 0.17.0, one client thread died": {"ycsb", workloads.ParseInput{Output: someDied},
			results.Invalid, "client thread stopped on an exception, so fewer threads ran than asked: Exception in thread \"Thread-1\" java.lang.NumberFormatException"},
		"memtier, a table of zeros": {"memtier", workloads.ParseInput{Output: testutil.ReadFixture(t, "memtier", "issue149-tls-connection-refused-zero-table-TRUNCATED.txt")},
			results.Failed, ""},
		"k6, every request failed": {"k6", workloads.ParseInput{Output: testutil.ReadFixture(t, "k6", "v1-compact-http-req-failed-100pct-admin-1000vus.txt")},
			results.Failed, "every request failed"},
		"OpenSearch Benchmark, every request of a task failed": {"osb",
			workloads.ParseInput{Output: []byte(strings.Replace(osbOut, "|                                      index |           0 |      % |",
				"|                                      index |         100 |      % |", 1))},
			results.Failed, "every request of index failed"},
		"HammerDB, 0 NOPM from 0 TPM": {"hammerdb", workloads.ParseInput{Output: []byte(strings.Replace(hammer, "8153 NOPM from 24772", "0 NOPM from 0", 1))},
			results.Failed, "no transaction"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w, err := registry.ByName(c.tool)
			if err != nil {
				t.Fatal(err)
			}
			testutil.CheckVerdict(t, w.Parse(c.in), c.want, c.reason)
		})
	}
}

// Prepare steps whose tool exits 0 although the data was not written are
// judged by their output. pgbench -i needs no parser: it exits 1 on any
// error (checked with pgbench 15: "must be owner of table", exit 1).
func TestPrepareStepsWhoseExitCodeLies(t *testing.T) {
	ycsbDied := testdata(t, "ycsb", "ycsb-0.17.0-basicdb-init-exception-all-threads.txt")
	cases := map[string]struct {
		tool   string
		out    []byte
		reason string // "" when the step succeeded
	}{
		"memtier load, server out of memory": {"memtier", testdata(t, "memtier", "redis7-load-oom-18582-of-20000-refused.txt.gz"),
			"92.9% of the prepare step's writes failed"},
		"memtier load":                 {"memtier", testdata(t, "memtier", "redis7-load-2000-keys.txt"), ""},
		"YCSB load, every thread died": {"ycsb", ycsbDied, "no operation"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w, err := registry.ByName(c.tool)
			if err != nil {
				t.Fatal(err)
			}
			pp, ok := w.(workloads.PrepareParser)
			if !ok {
				t.Fatalf("%s has no prepare parser", c.tool)
			}
			zero := 0
			reasons := pp.ParsePrepare(workloads.ParseInput{Output: c.out, ExitCode: &zero})
			switch {
			case c.reason == "" && len(reasons) > 0:
				t.Errorf("a good prepare step failed: %q", reasons)
			case c.reason != "" && !strings.Contains(strings.Join(reasons, "|"), c.reason):
				t.Errorf("reasons %q do not mention %q", reasons, c.reason)
			}
		})
	}
}
