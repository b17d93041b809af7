package workloads_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
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
