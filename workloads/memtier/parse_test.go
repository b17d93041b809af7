package memtier

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

type want struct {
	verdict results.Verdict
	reason  string
	// Totals row, when the run has one.
	ops, avg, p99, kbs float64
	gets               float64
	points             int
}

// Every memtier fixture must be listed here.
var fixtures = map[string]want{
	"issue149-tls-connection-refused-zero-table-TRUNCATED.txt": {verdict: results.Failed, reason: "no Totals row"},
	"issue180-network-unreachable-test-aborted.txt":            {verdict: results.Failed, reason: "test aborted"},
	"local-load-10k-keys-under-1s.txt":                         {verdict: results.Invalid, reason: "under a second", avg: 2.56691, p99: 14.591},
	"pkb-redis-4t8c-1KiB-ratio1-9-800s.json":                   {verdict: results.Succeeded, ops: 90018.1, avg: 0.355, p99: 1.415, kbs: 28951.87, gets: 81016.28, points: 801},
	"vc-invalid-text-1.txt":                                    {verdict: results.Failed, reason: "no Totals row"},
	"vc-memcached-text-1.txt":                                  {verdict: results.Succeeded, ops: 48271.29, avg: 2.62213, p99: 7.423, kbs: 4053.46, gets: 43444.12},
	"vc-redis-text-1.txt":                                      {verdict: results.Succeeded, ops: 355987.03, avg: 0.34301, p99: 0.839, kbs: 25860.83, gets: 320388.28},
	"vc-redis-text-2.txt":                                      {verdict: results.Succeeded, ops: 62133.15, avg: 25.70197, p99: 51.711, kbs: 3187.02, gets: 31066.57},
	"vc-redis-text-4.txt":                                      {verdict: results.Succeeded, ops: 132291.67, avg: 1.44408, p99: 4.575, kbs: 168029.76, gets: 92604.15},
}

func TestParseFixtures(t *testing.T) {
	testutil.EachFixture(t, "memtier", fixtures, func(t *testing.T, name string, raw []byte, w want) {
		in := workloads.ParseInput{Output: raw}
		if strings.HasSuffix(name, ".json") {
			in = workloads.ParseInput{Files: map[string][]byte{"memtier.json": raw}}
		}
		check(t, Memtier{}.Parse(in), w)
	})
}

func check(t *testing.T, r *results.Result, w want) {
	t.Helper()
	testutil.CheckVerdict(t, r, w.verdict, w.reason)
	for name, v := range map[string]float64{"opsPerSecond": w.ops, "latencyAverageMillis": w.avg, "latencyP99Millis": w.p99, "kilobytesPerSecond": w.kbs} {
		if v == 0 {
			continue
		}
		if m, ok := r.Get(results.Key{Name: name, Operation: "Totals"}); !ok || m.Value != v {
			t.Errorf("Totals %s = %v (found %v), want %v", name, m.Value, ok, v)
		}
	}
	if w.gets != 0 {
		if m, ok := r.Get(results.Key{Name: "opsPerSecond", Operation: "Gets"}); !ok || m.Value != w.gets {
			t.Errorf("Gets ops/s = %v, want %v", m.Value, w.gets)
		}
	}
	if len(r.TimeSeries) != w.points {
		t.Errorf("%d time-series points, want %d", len(r.TimeSeries), w.points)
	}
	if w.verdict == results.Succeeded && r.Primary != (results.Key{Name: "opsPerSecond", Operation: "Totals"}) {
		t.Errorf("primary = %v", r.Primary)
	}
}

// Error responses are a share of requests, judged against
// validity.maxErrorPercent as every tool's are: a real memtier 2.1.1 run
// (testdata/README.md) in which 4 of 37,941 GETs hit a key of the wrong
// type. One error used to make any run Invalid whatever the threshold.
func TestErrorResponsesAreAShareOfRequests(t *testing.T) {
	in := workloads.ParseInput{Output: readTestdata(t, "redis7-wrongtype-4-of-37941.txt"),
		Files: map[string][]byte{"memtier.json": readTestdata(t, "redis7-wrongtype-4-of-37941.json")}}
	textOnly := workloads.ParseInput{Output: in.Output}
	const share = 100 * 4.0 / 37941
	cases := map[string]struct {
		in         workloads.ParseInput
		maxPercent float64
		want       results.Verdict
		share      float64
	}{
		"threshold 0 (the default)": {in, 0, results.Invalid, share},
		"threshold just below":      {in, 0.01, results.Invalid, share},
		"threshold 1":               {in, 1, results.Succeeded, share},
		"threshold 50":              {in, 50, results.Succeeded, share},
		// Without the JSON the request count is the Totals ops/s over the test time.
		"text only, threshold 1": {textOnly, 1, results.Succeeded, 100 * 4 / (18950.19 * 2)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := Memtier{}.Parse(c.in)
			if r.Verdict != results.Succeeded {
				t.Fatalf("the parser alone must leave the share to the threshold: %s %v", r.Verdict, r.Reasons)
			}
			if got := testutil.MetricValue(t, r, "errorPercent", ""); math.Abs(got-c.share) > 1e-9 {
				t.Errorf("errorPercent = %v, want %v", got, c.share)
			}
			if !strings.Contains(strings.Join(r.Warnings, "|"), "WRONGTYPE") {
				t.Errorf("warnings %q do not name the error", r.Warnings)
			}
			results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: c.maxPercent})
			testutil.CheckVerdict(t, r, c.want, "")
		})
	}
}

// Without a request count the share is unknown: any error response
// invalidates, as before.
func TestErrorResponsesWithoutARequestCountInvalidate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.FixturesDir(t, "memtier"), "vc-redis-text-4.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(string(raw), "120       Seconds\n", "", 1)
	out = "server 10.0.0.1:6379 handle error response: -NOAUTH Authentication required.\n" + out
	r := Memtier{}.Parse(workloads.ParseInput{Output: []byte(out)})
	testutil.CheckVerdict(t, r, results.Invalid, "share of requests is unknown")
	if m, ok := r.Get(results.Key{Name: "opsPerSecond", Operation: "Totals"}); !ok || m.Value != 132291.67 {
		t.Fatalf("the numbers must be kept, got %v", m)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestParseJSONWinsOverTextAndTextErrorsStillCount(t *testing.T) {
	dir := testutil.FixturesDir(t, "memtier")
	js, _ := os.ReadFile(filepath.Join(dir, "pkb-redis-4t8c-1KiB-ratio1-9-800s.json"))
	text, _ := os.ReadFile(filepath.Join(dir, "vc-redis-text-1.txt"))
	text = append([]byte("Connection error: Connection reset by peer\n"), text...)
	r := Memtier{}.Parse(workloads.ParseInput{Output: text, Files: map[string][]byte{"memtier.json": js}})
	if m, _ := r.Get(results.Key{Name: "opsPerSecond", Operation: "Totals"}); m.Value != 90018.1 {
		t.Errorf("Totals ops/s = %v, want the JSON's 90018.1", m.Value)
	}
	if r.Verdict != results.Invalid {
		t.Errorf("a connection error must invalidate, got %s", r.Verdict)
	}
}

func TestParseBrokenJSONFallsBackToText(t *testing.T) {
	text, _ := os.ReadFile(filepath.Join(testutil.FixturesDir(t, "memtier"), "vc-redis-text-4.txt"))
	r := Memtier{}.Parse(workloads.ParseInput{Output: text, Files: map[string][]byte{"memtier.json": []byte(`{"ALL STATS": {`)}})
	if r.Verdict != results.Succeeded || len(r.Warnings) == 0 {
		t.Fatalf("got %s %v %v", r.Verdict, r.Reasons, r.Warnings)
	}
}

func TestPercentileName(t *testing.T) {
	for in, want := range map[string]string{"50": "latencyP50Millis", "99.9": "latencyP999Millis", "99.90": "latencyP999Millis", "50.00": "latencyP50Millis", "99.99": "latencyP9999Millis"} {
		if got := PercentileName(in); got != want {
			t.Errorf("PercentileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkParseJSON(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join(testutil.FixturesDir(b, "memtier"), "pkb-redis-4t8c-1KiB-ratio1-9-800s.json"))
	if err != nil {
		b.Fatal(err)
	}
	in := workloads.ParseInput{Files: map[string][]byte{"memtier.json": raw}}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if r := (Memtier{}).Parse(in); r.Verdict != results.Succeeded {
			b.Fatal(r.Reasons)
		}
	}
}

// memtier 2.1.1 hangs after a failed AUTH, printing 0-ops status lines until
// it is killed (testdata/README.md): the parser names the failure from the
// output printed so far.
func TestParseAuthenticationFailure(t *testing.T) {
	code := 143 // stopped with SIGTERM
	r := Memtier{}.Parse(workloads.ParseInput{Output: readTestdata(t, "redis7-wrongpass-hung-killed.txt"), ExitCode: &code})
	testutil.CheckVerdict(t, r, results.Failed, "memtier could not authenticate (check the target's credentials): error: authentication failed [-WRONGPASS invalid username-password pair or user is disabled.]")
}

// memtier divides by whole seconds: a load done in under a second prints
// Totals ops/sec 0 beside its latencies. The load is done (no prepare
// reason); a measurement that short is not valid, and says why.
func TestSubSecondRunHasNoRate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.FixturesDir(t, "memtier"), "local-load-10k-keys-under-1s.txt"))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	in := workloads.ParseInput{Output: raw, ExitCode: &zero}
	if reasons := (Memtier{}).ParsePrepare(in); len(reasons) != 0 {
		t.Fatalf("a load done in under a second is done: %v", reasons)
	}
	r := Memtier{}.Parse(in)
	if r.Verdict != results.Invalid || len(r.Reasons) != 1 || r.Reasons[0] != subSecondRun {
		t.Fatalf("%s %v", r.Verdict, r.Reasons)
	}
}

// memtier's JSON carries each operation's HdrHistogram (microseconds): the
// result keeps it for every command but Totals (their sum, which a merge
// of all operations would count twice), so percentiles merge across load
// generators and repetitions, and latency rules and APDEX read it. Its
// percentiles agree with memtier's own to within its 8-µs buckets (its
// lowest discernible value is 10 µs) or 1 %.
func TestOperationsCarryMemtiersHistograms(t *testing.T) {
	r := Memtier{}.Parse(workloads.ParseInput{Output: readTestdata(t, "redis7-wrongtype-4-of-37941.txt"),
		Files: map[string][]byte{"memtier.json": readTestdata(t, "redis7-wrongtype-4-of-37941.json")}})
	if ops := r.HistogramOperations(); !slices.Equal(ops, []string{"Gets"}) {
		t.Fatalf("histograms of %v, want Gets alone (no Sets were sent; Totals is their sum)", ops)
	}
	h, err := results.DecodeHistogram(r.Histograms["Gets"])
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 37941 {
		t.Errorf("%d latencies, memtier counted 37941 GETs", h.TotalCount())
	}
	for pct, memtier := range map[float64]float64{50: 0.055, 90: 0.071, 99: 1.919, 99.9: 6.239} {
		got := float64(h.ValueAtPercentile(pct)) / 1000
		if d := math.Abs(got - memtier); d > 0.008 && d > 0.01*memtier {
			t.Errorf("p%g: %.3f ms from the histogram, memtier said %.3f ms", pct, got, memtier)
		}
	}
}
