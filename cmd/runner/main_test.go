package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// execRunner runs `dbperf-runner exec` in-process and returns its exit code,
// its stdout, and the result decoded from the block at the end of its log,
// after checking that the termination message agrees with it.
func execRunner(t *testing.T, args ...string) (int, string, *results.Result) {
	t.Helper()
	summary := filepath.Join(t.TempDir(), "termination-log")
	var stdout, stderr bytes.Buffer
	all := append([]string{"exec", "--summary-file", summary, "--cpu-sample-interval", "200ms"}, args...)
	code := run(all, nil, &stdout, &stderr)
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	full, err := results.DecodeBlock(stdout.Bytes())
	if err != nil {
		t.Fatalf("no result block in the log: %v\n%s", err, stdout.String())
	}
	raw, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > results.MaxCompactBytes {
		t.Fatalf("termination message is %d bytes, over %d", len(raw), results.MaxCompactBytes)
	}
	compact, err := results.DecodeCompact(raw)
	if err != nil {
		t.Fatal(err)
	}
	if compact.Verdict != full.Verdict || compact.Primary != full.Primary {
		t.Fatalf("termination message %+v disagrees with the log block %+v", compact, full)
	}
	if want := runner.ExitCodeFor(full.Verdict); code != want {
		t.Fatalf("exit code %d for verdict %s, want %d", code, full.Verdict, want)
	}
	return code, stdout.String(), full
}

func setEnv(t *testing.T, env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

func TestExecPgbenchAgainstRealPostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	setEnv(t, pg.Env())

	code, out, r := execRunner(t, "--workload", "pgbench", "--prepare", "--redact-env", "PGPASSWORD", "--",
		"pgbench", "--initialize", "--quiet", "--scale", "1")
	if code != runner.ExitValid {
		t.Fatalf("init: exit %d, %v\n%s", code, r.Reasons, out)
	}
	// No saturation check (TestExecSaturatedLoadGeneratorIsInvalid has
	// it): the cgroup here is the whole machine, which CI keeps busy.
	code, out, r = execRunner(t, "--workload", "pgbench", "--redact-env", "PGPASSWORD", "--max-cpu-percent", "0", "--",
		"pgbench", "--client", "4", "--jobs", "2", "--time", "3", "--progress", "1", "--report-per-command", "--builtin", "tpcb-like")
	if code != runner.ExitValid {
		t.Fatalf("run: exit %d, %v\n%s", code, r.Reasons, out)
	}
	tps, ok := r.Get(results.Key{Name: "transactionsPerSecond"})
	if !ok || tps.Value <= 0 {
		t.Fatalf("no tps in %+v", r.Metrics)
	}
	// A rate level's share placeholder, with one load generator (no
	// --generators): the whole rate. It was once left for pgbench to read.
	rcode, rout, rr := execRunner(t, "--workload", "pgbench", "--redact-env", "PGPASSWORD", "--max-cpu-percent", "0", "--",
		"pgbench", "--client", "2", "--time", "2", "--rate", workloads.SharePlaceholder(100), "--builtin", "select-only")
	if rtps, _ := rr.Get(results.Key{Name: "transactionsPerSecond"}); rcode != runner.ExitValid || rtps.Value < 50 || rtps.Value > 200 {
		t.Fatalf("at --rate 100: exit %d, %.0f tps, %v\n%s", rcode, rtps.Value, rr.Reasons, rout)
	}
	if r.Parameters["clients"] != "4" || len(r.TimeSeries) < 2 {
		t.Errorf("parameters %v, %d progress points", r.Parameters, len(r.TimeSeries))
	}
	if r.LoadGenerator == nil || r.LoadGenerator.Source == "" || r.LoadGenerator.CPUSeconds <= 0 {
		t.Errorf("no load-generator CPU figures: %+v", r.LoadGenerator)
	}
	if strings.Contains(out, pg.Password) {
		t.Fatal("the password appears in the runner's log")
	}
}

func TestExecPgbenchUnreachableIsFailed(t *testing.T) {
	setEnv(t, []string{"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(testutil.FreePort(t)), "PGCONNECT_TIMEOUT=2", "PGUSER=nobody"})
	code, _, r := execRunner(t, "--workload", "pgbench", "--", "pgbench", "--client", "2", "--time", "2")
	if code != runner.ExitFailed || r.Verdict != results.Failed || len(r.Reasons) == 0 {
		t.Fatalf("exit %d verdict %s reasons %v", code, r.Verdict, r.Reasons)
	}
}

func TestExecRedisBenchmarkAgainstRealRedis(t *testing.T) {
	rd := testutil.StartRedis(t)
	// No saturation check: the cgroup here is the whole machine, which CI
	// keeps busy (it read 100.0 % of 2 CPUs once, above a 100 % limit).
	code, out, r := execRunner(t, "--workload", "redis-benchmark", "--max-cpu-percent", "0", "--",
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "10", "-n", "20000", "-t", "set,get", "--csv")
	if code != runner.ExitValid {
		t.Fatalf("exit %d, %v\n%s", code, r.Reasons, out)
	}
	for _, op := range []string{"SET", "GET"} {
		if m, ok := r.Get(results.Key{Name: "opsPerSecond", Operation: op}); !ok || m.Value <= 0 {
			t.Errorf("no %s ops/s in %+v", op, r.Metrics)
		}
		if m, ok := r.Get(results.Key{Name: "latencyP99Millis", Operation: op}); !ok || m.Value <= 0 {
			t.Errorf("no %s p99 in %+v", op, r.Metrics)
		}
	}
}

// exec --canary measures the node before the tool starts: its figures are
// in the result, described (source canary), and in the log.
func TestExecCanaryBeforeTheTool(t *testing.T) {
	rd := testutil.StartRedis(t)
	code, out, r := execRunner(t, "--workload", "redis-benchmark", "--max-cpu-percent", "0", "--canary", "400ms", "--canary-dir", t.TempDir(), "--",
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "4", "-n", "5000", "-t", "get", "--csv")
	if code != runner.ExitValid {
		t.Fatalf("exit %d, %v\n%s", code, r.Reasons, out)
	}
	for _, name := range []string{results.CanaryCPUMegabytesPerSecond, results.CanaryDiskWriteMegabytesPerSecond, results.CanaryDiskSyncMillis} {
		if m, ok := r.Get(results.Key{Name: name}); !ok || m.Value <= 0 || m.Source != results.SourceCanary {
			t.Errorf("%s: %+v %v", name, m, ok)
		}
	}
	canary, tool := strings.Index(out, "[dbperf-runner] canary of this node: "+results.CanaryCPUMegabytesPerSecond), strings.Index(out, "[dbperf-runner] running:")
	if canary < 0 || canary > tool {
		t.Errorf("the canary's line (at %d) is not before the tool's start (at %d):\n%s", canary, tool, out)
	}
}

func TestExecRedisBenchmarkAuthErrorIsFailed(t *testing.T) {
	rd := testutil.StartRedis(t, "--requirepass", "hunter2-secret")
	code, _, r := execRunner(t, "--workload", "redis-benchmark", "--",
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-n", "1000", "-t", "get", "--csv")
	if code != runner.ExitFailed || !strings.Contains(strings.Join(r.Reasons, ""), "NOAUTH") {
		t.Fatalf("exit %d reasons %v", code, r.Reasons)
	}
}

func TestExecRedactsSecretsFromTheLog(t *testing.T) {
	t.Setenv("DBPERF_TARGET_PASSWORD", "pa55-w0rd-value")
	code, out, _ := execRunner(t, "--workload", "pgbench", "--redact-env", "DBPERF_TARGET_PASSWORD", "--max-cpu-percent", "0", "--",
		"sh", "-c", `printf 'connecting with %s\n' "$DBPERF_TARGET_PASSWORD"; echo 'tps = 10.0 (without initial connection time)'`)
	if code != runner.ExitValid {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(out, "pa55-w0rd-value") || !strings.Contains(out, "connecting with [REDACTED]") {
		t.Fatalf("secret not redacted:\n%s", out)
	}
}

// A load generator that uses more CPU than allowed measured itself: the
// numbers stay, the verdict is Invalid. The busy loop is bounded to 1.5 s.
func TestExecSaturatedLoadGeneratorIsInvalid(t *testing.T) {
	fixture := filepath.Join(testutil.FixturesDir(t, "pgbench"), "pg14plus-tpcb-scale50-haproxy.txt")
	script := fmt.Sprintf(`end=$(($(date +%%s%%N) + 1500000000)); while [ $(date +%%s%%N) -lt $end ]; do :; done; cat %q`, fixture)
	code, _, r := execRunner(t, "--workload", "pgbench", "--max-cpu-percent", "5", "--", "sh", "-c", script)
	if code != runner.ExitInvalid || !strings.Contains(strings.Join(r.Reasons, ""), "saturated") {
		t.Fatalf("exit %d reasons %v load generator %+v", code, r.Reasons, r.LoadGenerator)
	}
	if m, ok := r.Get(results.Key{Name: "transactionsPerSecond"}); !ok || m.Value != 4413.657304 {
		t.Fatalf("numbers must be kept: %+v", m)
	}
}

func TestExecMissingToolIsFailed(t *testing.T) {
	code, _, r := execRunner(t, "--workload", "memtier", "--", "/nonexistent/memtier_benchmark")
	if code != runner.ExitFailed || !strings.Contains(strings.Join(r.Reasons, ""), "could not be run") {
		t.Fatalf("exit %d reasons %v", code, r.Reasons)
	}
}

func TestExecTimeoutStopsTheTool(t *testing.T) {
	code, _, r := execRunner(t, "--workload", "pgbench", "--timeout", "1s", "--", "sleep", "30")
	if code != runner.ExitFailed || !strings.Contains(strings.Join(r.Reasons, ""), "timeout") {
		t.Fatalf("exit %d reasons %v", code, r.Reasons)
	}
}

func TestParseCommandOnFixtures(t *testing.T) {
	cases := map[string]struct {
		workload, file string
		code           int
	}{
		"memtier json":       {"memtier", "memtier/pkb-redis-4t8c-1KiB-ratio1-9-800s.json", runner.ExitValid},
		"memtier aborted":    {"memtier", "memtier/issue180-network-unreachable-test-aborted.txt", runner.ExitFailed},
		"pgbench ok":         {"pgbench", "pgbench/pg16-380c-prepared-rate-progress-ok.txt", runner.ExitValid},
		"pgbench aborted":    {"pgbench", "pgbench/pg16-rdsproxy-600c-prepared-rate-progress-client-aborted.txt", runner.ExitFailed},
		"hammerdb ok":        {"hammerdb", "hammerdb/pkb-mysql-v4.0-cli-4vu-20wh.txt", runner.ExitValid},
		"hammerdb vu failed": {"hammerdb", "hammerdb/pg-400wh-100vu-raiseerror-vuser-failed.txt", runner.ExitInvalid},
		"hammerdb no result": {"hammerdb", "hammerdb/vc-pg-v4.5-incorrect-no-result.txt", runner.ExitFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir, tool, _ := strings.Cut(tc.file, "/")
			path := filepath.Join(testutil.FixturesDir(t, dir), tool)
			var stdout, stderr bytes.Buffer
			code := run([]string{"parse", "--workload", tc.workload, "--input", path}, nil, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), `"verdict"`) {
				t.Fatalf("no result printed: %s", stdout.String())
			}
		})
	}
	// Judged as exec would: YCSB's Return=ERROR operations make it Invalid.
	ycsb := filepath.Join(testutil.FixturesDir(t, "ycsb"), "pkb-ycsb-test-run-4.dat.txt")
	var out, errOut bytes.Buffer
	if code := run([]string{"parse", "--workload", "ycsb", "--input", ycsb, "--max-error-percent", "0"}, nil, &out, &errOut); code != runner.ExitInvalid ||
		!strings.Contains(out.String(), "of requests failed") {
		t.Errorf("ycsb with errors, --max-error-percent 0: exit %d\n%s", code, out.String())
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"parse", "--workload", "sysbench"}, strings.NewReader(""), &stdout, &stderr); code != runner.ExitUsage {
		t.Fatalf("unknown workload: exit %d", code)
	}
}

// memtier writes its JSON result into a directory that does not exist yet in
// a fresh pod; the runner makes it and reads the file after the tool exits.
func TestExecReadsResultFiles(t *testing.T) {
	dir := testutil.FixturesDir(t, "memtier")
	out := filepath.Join(t.TempDir(), "out", "memtier.json")
	script := fmt.Sprintf("cp %q %q && cat %q", filepath.Join(dir, "pkb-redis-4t8c-1KiB-ratio1-9-800s.json"), out, filepath.Join(dir, "vc-redis-text-4.txt"))
	code, _, r := execRunner(t, "--workload", "memtier", "--max-cpu-percent", "0", "--result-file", out, "--", "sh", "-c", script)
	if code != runner.ExitValid {
		t.Fatalf("exit %d %v", code, r.Reasons)
	}
	if m, _ := r.Get(results.Key{Name: "opsPerSecond", Operation: "Totals"}); m.Value != 90018.1 {
		t.Fatalf("Totals ops/s %v: the JSON file must win over the text", m.Value)
	}
	if len(r.TimeSeries) != 801 {
		t.Fatalf("%d points", len(r.TimeSeries))
	}
}
