package ycsb

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

func parseFixture(t *testing.T, name string) *results.Result {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.FixturesDir(t, "ycsb"), name))
	if err != nil {
		t.Fatal(err)
	}
	return YCSB{}.Parse(workloads.ParseInput{Output: raw})
}

var metric = testutil.MetricValue

// Every YCSB output in the fixtures: its verdict, its throughput and its
// share of failed operations, which the runner's error threshold judges.
func TestEveryFixture(t *testing.T) {
	type expect struct {
		verdict   results.Verdict
		ops       float64
		errPct    float64
		invalidAt bool // failed operations make it Invalid under maxErrorPercent 0
		reason    string
	}
	want := map[string]expect{
		"vc-mongodb-0.17.0-workloada-8threads.txt":       {results.Succeeded, 28246.19382538203, 0, false, ""},
		"pkb-ycsb-test-run.dat.txt":                      {results.Succeeded, 12500, 0, false, ""},
		"pkb-ycsb-test-run-2.dat.txt":                    {results.Succeeded, 2740.503428935472, 49.979, true, ""},
		"pkb-ycsb-test-run-3.dat.txt":                    {results.Failed, 0, 0, false, "JedisConnectionException"},
		"pkb-ycsb-test-run-4.dat.txt":                    {results.Succeeded, 33590.86328518643, 96, true, ""},
		"pkb-ycsb-test-run-5.dat.txt":                    {results.Succeeded, 33590.86328518643, 65.333, true, ""},
		"pkb-ycsb-time-series.dat.txt":                   {results.Succeeded, 1666.8995807546416, 0, false, ""},
		"pkb-ycsb-time-series-2.dat.txt":                 {results.Succeeded, 1537.9317228987823, 0, false, ""},
		"scylla-ycsb-lwt-workloada-md-return-error.txt":  {results.Succeeded, 4875.385155427279, 0.1818, true, ""},
		"scylla-ycsb-workloada-md-with-return-error.txt": {results.Succeeded, 149454.1560585352, 17.8586, true, ""},
		"scylla-ycsb-workloadb-md.txt":                   {results.Succeeded, 149605.11729290537, 0, false, ""},
		"scylla-ycsb-workloadf-md.txt":                   {results.Succeeded, 99664.87685158654, 0.0000767, true, ""},
	}
	testutil.EachFixture(t, "ycsb", want, func(t *testing.T, name string, raw []byte, w expect) {
		r := YCSB{}.Parse(workloads.ParseInput{Output: raw})
		testutil.CheckVerdict(t, r, w.verdict, w.reason)
		if r.Verdict != w.verdict || w.verdict == results.Failed {
			return
		}
		if got := metric(t, r, "opsPerSecond", "OVERALL"); got != w.ops {
			t.Errorf("throughput %v, want %v", got, w.ops)
		}
		if got := metric(t, r, "errorPercent", ""); math.Abs(got-w.errPct) > 0.001*math.Max(1, w.errPct) {
			t.Errorf("errorPercent %v, want %v", got, w.errPct)
		}
		results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: 0})
		if got := r.Verdict == results.Invalid; got != w.invalidAt {
			t.Errorf("invalid under maxErrorPercent 0: %v (%v), want %v", got, r.Reasons, w.invalidAt)
		}
	})
}

// The numbers of one complete report, operation by operation.
func TestMongoDBReport(t *testing.T) {
	r := parseFixture(t, "vc-mongodb-0.17.0-workloada-8threads.txt")
	for _, c := range []struct {
		name, op string
		want     float64
	}{
		{"runtimeSeconds", "OVERALL", 177.015},
		{"operations", "READ", 2498425},
		{"latencyAverageMillis", "READ", 0.20270430571259894},
		{"latencyMinMillis", "READ", 0.129},
		{"latencyMaxMillis", "READ", 1556.479},
		{"latencyP95Millis", "READ", 0.231},
		{"latencyP99Millis", "READ", 0.256},
		{"returnOK", "READ", 2498425},
		{"operations", "UPDATE", 2501575},
		{"latencyP99Millis", "UPDATE", 0.294},
	} {
		if got := metric(t, r, c.name, c.op); math.Abs(got-c.want) > 1e-9*math.Max(1, c.want) {
			t.Errorf("%s[%s] = %v, want %v", c.name, c.op, got, c.want)
		}
	}
	if _, ok := r.Get(results.Key{Name: "operations", Operation: "CLEANUP"}); ok {
		t.Error("CLEANUP is closing connections, not a database operation")
	}
	if r.Primary != (results.Key{Name: "opsPerSecond", Operation: "OVERALL"}) {
		t.Errorf("primary %v", r.Primary)
	}
}

// Workload F's READ-MODIFY-WRITE, failed-operation series and NOT_FOUND-free
// error returns are read; old reports in ms with Return=0 are read too.
func TestOperationsAndReturnCodes(t *testing.T) {
	f := parseFixture(t, "scylla-ycsb-workloadf-md.txt")
	if metric(t, f, "operations", "READ-MODIFY-WRITE") <= 0 || metric(t, f, "latencyP99Millis", "READ-MODIFY-WRITE") <= 0 {
		t.Error("READ-MODIFY-WRITE not read")
	}
	e := parseFixture(t, "pkb-ycsb-test-run-5.dat.txt")
	for _, op := range []string{"READ", "INSERT", "UPDATE"} {
		if metric(t, e, "returnError", op) <= 0 {
			t.Errorf("%s: no Return=ERROR count", op)
		}
	}
	old := parseFixture(t, "pkb-ycsb-test-run.dat.txt")
	if metric(t, old, "returnOK", "UPDATE") != 531 || metric(t, old, "latencyP95Millis", "READ") != 0 {
		t.Errorf("old format: %+v", old.Metrics)
	}
	ts := parseFixture(t, "pkb-ycsb-time-series.dat.txt")
	if len(ts.TimeSeries) < 10 || ts.TimeSeries[5].Values["opsPerSecond"] != 2138 || ts.TimeSeries[5].ElapsedSeconds != 5 {
		t.Errorf("time series %+v", ts.TimeSeries)
	}
}

func TestExtraPercentilesAndExitCode(t *testing.T) {
	out := "[OVERALL], RunTime(ms), 1000\n[OVERALL], Throughput(ops/sec), 500\n[READ], Operations, 500\n" +
		"[READ], 50thPercentileLatency(us), 100\n[READ], 99.9PercentileLatency(us), 900\n[READ], 99.99PercentileLatency(us), 1900\n[READ], Return=OK, 490\n[READ], Return=NOT_FOUND, 10\n"
	r := YCSB{}.Parse(workloads.ParseInput{Output: []byte(out)})
	if metric(t, r, "latencyP50Millis", "READ") != 0.1 || metric(t, r, "latencyP999Millis", "READ") != 0.9 || metric(t, r, "latencyP9999Millis", "READ") != 1.9 {
		t.Errorf("percentiles %+v", r.Metrics)
	}
	if metric(t, r, "returnNotFound", "READ") != 10 || metric(t, r, "errorPercent", "") != 0 {
		t.Error("NOT_FOUND is an answer, not an error")
	}
	code := 1
	if r := (YCSB{}).Parse(workloads.ParseInput{Output: []byte(out), ExitCode: &code}); r.Verdict != results.Failed {
		t.Errorf("exit code 1: %s", r.Verdict)
	}
}
