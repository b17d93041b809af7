package custom

import (
	"encoding/json"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// config is a parser configuration as Run writes it.
func config(t *testing.T, format benchv1.CustomResultFormat, primary results.Key, resultFile string, decl ...declaration) []byte {
	t.Helper()
	b, err := json.Marshal(parserConfig{Version: configVersion, Tool: "bench-tool", Format: format, ResultFile: resultFile, Primary: primary, Metrics: decl})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodedHistogram is what hdrhistogram-go's Encode writes of values (µs).
func encodedHistogram(t *testing.T, values ...int64) string {
	t.Helper()
	h := hdr.New(1, 60_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}

func exit(code int) *int { return &code }

// metricsOf lists a result's metrics as name[op]=value unit direction.
func metricsOf(r *results.Result) []string {
	var out []string
	for _, m := range r.Metrics {
		out = append(out, m.Key().String()+"="+strings.TrimRight(strings.TrimRight(formatFloat(m.Value), "0"), ".")+" "+m.Unit+" "+string(m.Direction))
	}
	return out
}

func formatFloat(v float64) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// A good result in the line format, after the tool's own log: every kind
// of record, units and directions given, declared and inferred.
func TestLinesGood(t *testing.T) {
	hist := encodedHistogram(t, 100, 200, 300, 400, 10_000)
	out := strings.Join([]string{
		"connecting to 127.0.0.1:5432",
		"warming up...",
		LinesHeader,
		"# the measurement",
		"tool bench-tool 2.1",
		"param scenario checkout flow",
		"metric opsPerSecond - 1234.5 - HigherIsBetter",
		"metric rowsScanned select 42 - -",
		"metric successPercent - 99.5 - Neutral",
		"metric errorPercent\tselect\t0.5\t%\tLowerIsBetter",
		"metric latencyP99Millis insert 12.5 ms -",
		"histogram select us " + hist,
		"progress 1 opsPerSecond 1200",
		"progress 2 opsPerSecond 1269",
		"progress 1 errorPercent 0.4",
		"",
	}, "\n")
	r := Custom{}.Parse(workloads.ParseInput{Output: []byte(out), ExitCode: exit(0),
		Config: config(t, benchv1.CustomLines, results.Key{Name: "opsPerSecond"}, "", declaration{Name: "rowsScanned", Unit: "rows", Direction: results.LowerIsBetter})})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	want := []string{
		"opsPerSecond=1234.5 ops/s HigherIsBetter",
		"rowsScanned[select]=42 rows LowerIsBetter",
		"successPercent=99.5 % HigherIsBetter",
		"errorPercent[select]=0.5 % LowerIsBetter",
		"latencyP99Millis[insert]=12.5 ms LowerIsBetter",
		"latencyP50Millis[select]=0.3 ms LowerIsBetter",
		"latencyP90Millis[select]=10.007 ms LowerIsBetter",
		"latencyP95Millis[select]=10.007 ms LowerIsBetter",
		"latencyP99Millis[select]=10.007 ms LowerIsBetter",
		"latencyP999Millis[select]=10.007 ms LowerIsBetter",
		"latencyAverageMillis[select]=2.2008 ms LowerIsBetter", // the histogram's mean
		"latencyMinMillis[select]=0.1 ms LowerIsBetter",
		"latencyMaxMillis[select]=10.007 ms LowerIsBetter",
		"operations[select]=5 count Neutral",
	}
	if diff := cmp.Diff(want, metricsOf(r)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"successPercent is a share of successes or failures, which is never Neutral: HigherIsBetter"}, warningsAfterColon(r)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if r.ToolVersion != "2.1" || r.Parameters["tool"] != "bench-tool" || r.Parameters["scenario"] != "checkout flow" {
		t.Errorf("tool %q %q, parameters %v", r.Parameters["tool"], r.ToolVersion, r.Parameters)
	}
	wantSeries := []results.Point{{ElapsedSeconds: 1, Values: map[string]float64{"opsPerSecond": 1200, "errorPercent": 0.4}},
		{ElapsedSeconds: 2, Values: map[string]float64{"opsPerSecond": 1269}}}
	if diff := cmp.Diff(wantSeries, r.TimeSeries); diff != "" {
		t.Errorf("time series (-want +got):\n%s", diff)
	}
	if got := histogramCount(t, r, "select"); got != 5 {
		t.Errorf("the histogram of select holds %d values, want 5", got)
	}
	if m, _ := r.Get(results.Key{Name: "latencyP99Millis", Operation: "select"}); m.Detail {
		t.Error("p99 is a headline figure")
	}
}

// warningsAfterColon drops the location from each warning.
func warningsAfterColon(r *results.Result) []string {
	var out []string
	for _, w := range r.Warnings {
		_, rest, _ := strings.Cut(w, ": ")
		out = append(out, rest)
	}
	return out
}

// Malformed results in the line format: the measurement is Invalid (or,
// without its header, its primary metric or its result file, Failed) with a
// reason naming the line and the field, and what could be read is kept.
func TestLinesMalformed(t *testing.T) {
	good := "metric opsPerSecond - 100 ops/s HigherIsBetter"
	cases := map[string]struct {
		out, file  string
		resultFile string
		exit       int
		verdict    results.Verdict
		reason     string
		keeps      []string // metrics still there
	}{
		"a record with a field missing": {out: LinesHeader + "\n" + good + "\nmetric latencyP99Millis - 3.5 ms\n",
			verdict: results.Invalid, reason: `output line 3: 5 fields, want "metric NAME OPERATION VALUE UNIT DIRECTION"`, keeps: []string{"opsPerSecond"}},
		"an unknown direction": {out: LinesHeader + "\n" + good + "\nmetric latencyP99Millis - 3.5 ms Lower\n",
			verdict: results.Invalid, reason: `output line 3, field 6 (direction): "Lower" is not HigherIsBetter, LowerIsBetter, Neutral or -`,
			keeps: []string{"opsPerSecond", "latencyP99Millis"}},
		"a value that is no number": {out: LinesHeader + "\n" + good + "\nmetric latencyP99Millis - 3,5 ms LowerIsBetter\n",
			verdict: results.Invalid, reason: `output line 3, field 4 (value): "3,5" is not a number`, keeps: []string{"opsPerSecond"}},
		"a unit neither given, declared nor in the name": {out: LinesHeader + "\n" + good + "\nmetric widgets - 7 - HigherIsBetter\n",
			verdict: results.Invalid, reason: "output line 3, field 5 (unit): widgets has no unit", keeps: []string{"opsPerSecond", "widgets"}},
		"no primary metric": {out: LinesHeader + "\nmetric latencyP99Millis - 3.5 ms LowerIsBetter\n",
			verdict: results.Failed, reason: "the primary metric opsPerSecond (spec.workload.custom.primaryMetric) is not in the results of bench-tool (output)",
			keeps: []string{"latencyP99Millis"}},
		"a Neutral primary metric": {out: LinesHeader + "\nmetric opsPerSecond - 100 ops/s Neutral\n",
			verdict: results.Invalid, reason: "the primary metric opsPerSecond is Neutral"},
		"no header": {out: good + "\n", verdict: results.Failed, reason: `no line "# dbperf-lines v1" in the output of bench-tool`},
		"a later version": {out: "# dbperf-lines v2\n" + good + "\n", verdict: results.Failed,
			reason: `output line 1: "# dbperf-lines v2": this dbperf-runner reads dbperf-lines v1`},
		"the tool's log after the header": {out: LinesHeader + "\n" + good + "\nWARNING: slow query\n",
			verdict: results.Invalid, reason: `output line 3, field 1 (kind): "WARNING:" is not a record of dbperf-lines v1`, keeps: []string{"opsPerSecond"}},
		"dbperf's own parameter": {out: LinesHeader + "\n" + good + "\nparam loadGenerators 1\n",
			verdict: results.Invalid, reason: `output line 3, field 2 (name): "loadGenerators" is a parameter of dbperf's own`, keeps: []string{"opsPerSecond"}},
		"a metric twice": {out: LinesHeader + "\n" + good + "\n" + strings.Replace(good, "100", "200", 1) + "\n",
			verdict: results.Invalid, reason: "output line 3: opsPerSecond was already reported (output line 2); the first is kept", keeps: []string{"opsPerSecond"}},
		"a histogram that is not one": {out: LinesHeader + "\n" + good + "\nhistogram GET us bm90IGEgaGlzdG9ncmFt\n",
			verdict: results.Invalid, reason: "output line 3, field 4 (histogram): not an HdrHistogram", keeps: []string{"opsPerSecond"}},
		"a histogram of milliseconds": {out: LinesHeader + "\n" + good + "\nhistogram GET ms " + encodedHistogram(t, 5) + "\n",
			verdict: results.Invalid, reason: `output line 3, field 3 (unit): histograms are of microseconds, written us, not "ms"`},
		"a progress point before the start": {out: LinesHeader + "\n" + good + "\nprogress -1 opsPerSecond 5\n",
			verdict: results.Invalid, reason: `output line 3, field 2 (seconds): "-1" is not a time in seconds from the start`},
		"the tool says the measurement failed": {out: LinesHeader + "\n" + good + "\nfailed 3 of 8 workers crashed\n",
			verdict: results.Failed, reason: "bench-tool says (output line 3): 3 of 8 workers crashed", keeps: []string{"opsPerSecond"}},
		"the tool exited 1": {out: LinesHeader + "\n" + good + "\n", exit: 1,
			verdict: results.Failed, reason: "bench-tool exited with code 1", keeps: []string{"opsPerSecond"}},
		"no result file": {resultFile: "results.txt", out: LinesHeader + "\n" + good + "\n",
			verdict: results.Failed, reason: "bench-tool wrote no result file results.txt"},
		"a result file that does not begin with the header": {resultFile: "results.txt", file: "opsPerSecond 100\n" + LinesHeader + "\n" + good + "\n",
			verdict: results.Failed, reason: `results.txt does not begin with the line "# dbperf-lines v1"`},
		"a result file": {resultFile: "results.txt", out: "metric opsPerSecond - 1 ops/s HigherIsBetter\n", file: LinesHeader + "\n" + good + "\n",
			verdict: results.Succeeded, keeps: []string{"opsPerSecond"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := workloads.ParseInput{Output: []byte(c.out), ExitCode: exit(c.exit), Files: map[string][]byte{},
				Config: config(t, benchv1.CustomLines, results.Key{Name: "opsPerSecond"}, c.resultFile)}
			if c.file != "" {
				in.Files[c.resultFile] = []byte(c.file)
			}
			r := Custom{}.Parse(in)
			testutil.CheckVerdict(t, r, c.verdict, c.reason)
			for _, name := range c.keeps {
				if _, ok := r.Get(results.Key{Name: name}); !ok {
					t.Errorf("%s was thrown away: %v", name, metricsOf(r))
				}
			}
		})
	}
}

// Many malformed lines: ten reasons, then how many more.
func TestLinesManyProblemsAreCounted(t *testing.T) {
	out := LinesHeader + "\nmetric opsPerSecond - 1 ops/s HigherIsBetter\n" + strings.Repeat("oops\n", 25)
	r := Custom{}.Parse(workloads.ParseInput{Output: []byte(out), Config: config(t, benchv1.CustomLines, results.Key{Name: "opsPerSecond"}, "")})
	testutil.CheckVerdict(t, r, results.Invalid, "15 more problems in output, not listed")
	if len(r.Reasons) != 11 {
		t.Errorf("%d reasons, want 10 and the count of the rest: %q", len(r.Reasons), r.Reasons)
	}
}

// Without its configuration the parser cannot tell the format or the
// primary metric: Failed, saying so, and judging the exit code still.
func TestParseWithoutConfiguration(t *testing.T) {
	cases := map[string]struct {
		config []byte
		reason string
	}{
		"none":            {nil, "no parser configuration"},
		"another version": {[]byte(`{"version":2,"format":"Lines","primary":{"name":"x"}}`), "the parser configuration is version 2; this dbperf-runner reads version 1"},
		"unreadable":      {[]byte(`{"version":1,"format":"Lines","primary":{"name":"x"},"extra":1}`), `unknown field "extra"`},
		"unknown format":  {[]byte(`{"version":1,"format":"CSV","primary":{"name":"x"}}`), `format "CSV"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := Custom{}.Parse(workloads.ParseInput{Output: []byte(LinesHeader + "\nmetric x - 1 ops/s HigherIsBetter\n"), ExitCode: exit(2), Config: c.config})
			testutil.CheckVerdict(t, r, results.Failed, c.reason)
			testutil.CheckVerdict(t, r, results.Failed, "exited with code 2")
		})
	}
}
