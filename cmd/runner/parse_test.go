package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// parseRunner runs `dbperf-runner parse` in-process and decodes the result
// it prints.
func parseRunner(t *testing.T, args ...string) (int, *results.Result) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"parse"}, args...), strings.NewReader(""), &stdout, &stderr)
	if code == runner.ExitUsage {
		t.Fatalf("usage error: %s", stderr.String())
	}
	var r results.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("no result printed: %v\n%s", err, stdout.String())
	}
	if want := runner.ExitCodeFor(r.Verdict); code != want {
		t.Fatalf("exit code %d for verdict %s, want %d", code, r.Verdict, want)
	}
	return code, &r
}

// copyAs copies a fixture into a temporary directory under the name the
// tool gives its result file.
func copyAs(t *testing.T, src, name string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Parsers find result files by base name (as exec hands them over), so a
// file given on the command line must reach them by its base name, or by
// the NAME of NAME=PATH when it was saved under another one.
func TestParseResultFiles(t *testing.T) {
	hammerdb := testutil.FixturesDir(t, "hammerdb")
	memtier := testutil.FixturesDir(t, "memtier")
	profile := filepath.Join(hammerdb, "mysql-v4.1-xtprof-hdbxtprofile.txt")
	cases := map[string]struct {
		args       []string
		metric, op string
		want       float64
	}{
		"HammerDB time profile by its path": {
			args:   []string{"--workload", "hammerdb", "--input", filepath.Join(hammerdb, "vc-mysql-v4.12-timed-allwh-xtprof-1vu.txt"), "--result-file", copyAs(t, profile, "hdbxtprofile.log")},
			metric: "latencyP95Millis", op: "PAYMENT", want: 68.851,
		},
		"HammerDB time profile saved under another name": {
			args:   []string{"--workload", "hammerdb", "--input", filepath.Join(hammerdb, "vc-mysql-v4.12-timed-allwh-xtprof-1vu.txt"), "--result-file", "hdbxtprofile.log=" + profile},
			metric: "latencyP95Millis", op: "PAYMENT", want: 68.851,
		},
		"memtier JSON beside its text output": {
			args:   []string{"--workload", "memtier", "--input", filepath.Join(memtier, "vc-redis-text-4.txt"), "--result-file", copyAs(t, filepath.Join(memtier, "pkb-redis-4t8c-1KiB-ratio1-9-800s.json"), "memtier.json")},
			metric: "opsPerSecond", op: "Totals", want: 90018.1,
		},
		"memtier JSON saved under another name": {
			args:   []string{"--workload", "memtier", "--input", filepath.Join(memtier, "vc-redis-text-4.txt"), "--result-file", "memtier.json=" + filepath.Join(memtier, "pkb-redis-4t8c-1KiB-ratio1-9-800s.json")},
			metric: "opsPerSecond", op: "Totals", want: 90018.1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, r := parseRunner(t, tc.args...)
			if got := testutil.MetricValue(t, r, tc.metric, tc.op); got != tc.want {
				t.Fatalf("%s %s = %v, want %v: the result file was not read", tc.op, tc.metric, got, tc.want)
			}
		})
	}
}

// `parse --prepare` judges a prepare step's output as exec --prepare does:
// its exit code and, for tools whose exit code can lie, its parser's check.
func TestParsePrepare(t *testing.T) {
	hammerdb := testutil.FixturesDir(t, "hammerdb")
	// The last lines of a real pgbench 15 `--initialize --scale 1`.
	pgbenchInit := filepath.Join(t.TempDir(), "pgbench-init.txt")
	if err := os.WriteFile(pgbenchInit, []byte("dropping old tables...\ncreating tables...\ngenerating data (client-side)...\n100000 of 100000 tuples (100%) done (elapsed 0.05 s, remaining 0.00 s)\nvacuuming...\ncreating primary keys...\ndone in 0.26 s (drop tables 0.00 s, create tables 0.01 s, client-side generate 0.12 s, vacuum 0.06 s, primary keys 0.07 s).\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args    []string
		verdict results.Verdict
		reason  string
	}{
		"HammerDB schema build refused a setting, exit 0": {
			args:    []string{"--workload", "hammerdb", "--exit-code", "0", "--input", filepath.Join(hammerdb, "mysql-v4.1-buildschema-1wh-diset-errors.txt")},
			verdict: results.Failed, reason: "HammerDB refused a configuration command",
		},
		"exit code not zero": {
			args:    []string{"--workload", "pgbench", "--exit-code", "1", "--input", pgbenchInit},
			verdict: results.Failed, reason: "the prepare step exited with code 1",
		},
		"exit code zero, no parser check": {
			args:    []string{"--workload", "pgbench", "--exit-code", "0", "--input", pgbenchInit},
			verdict: results.Succeeded,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, r := parseRunner(t, append([]string{"--prepare"}, tc.args...)...)
			testutil.CheckVerdict(t, r, tc.verdict, tc.reason)
			if r.Primary.Name != "prepareSeconds" {
				t.Errorf("primary %v: a prepare step is not a measurement", r.Primary)
			}
		})
	}
}
