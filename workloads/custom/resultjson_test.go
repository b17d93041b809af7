package custom

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// document is a tool's result document, indented as json.MarshalIndent
// writes it.
func document(t *testing.T, r *results.Result) string {
	t.Helper()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func goodDocument(t *testing.T) *results.Result {
	t.Helper()
	r := results.New("order-service-harness")
	r.ToolVersion = "3.4"
	r.Metrics = []results.Metric{
		{Name: "ordersPerSecond", Value: 812},
		{Name: "latencyP99Millis", Operation: "checkout", Value: 41.5, Unit: "ms", Direction: results.LowerIsBetter},
		{Name: "cartItems", Value: 3.2, Unit: "items", Direction: results.Neutral},
	}
	r.TimeSeries = []results.Point{{ElapsedSeconds: 10, Values: map[string]float64{"ordersPerSecond": 800}}}
	r.SetParam("region", "eu-1")
	h := results.NewHistogram()
	for _, v := range []int64{1000, 2000, 3000} {
		_ = h.RecordValue(v)
	}
	if err := r.SetHistogram("payment", h); err != nil {
		t.Fatal(err)
	}
	return r
}

// dbperf's own result document, after the tool's log: the tool's metrics,
// parameters, series and histograms; units and directions inferred where
// the document leaves them out.
func TestResultJSONGood(t *testing.T) {
	out := "loading fixtures\n" + document(t, goodDocument(t))
	r := Custom{}.Parse(workloads.ParseInput{Output: []byte(out), ExitCode: exit(0),
		Config: config(t, benchv1.CustomResultJSON, results.Key{Name: "ordersPerSecond"}, "")})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	want := []string{
		"ordersPerSecond=812 orders/s HigherIsBetter",
		"latencyP99Millis[checkout]=41.5 ms LowerIsBetter",
		"cartItems=3.2 items Neutral",
		"latencyP50Millis[payment]=2 ms LowerIsBetter",
		"latencyP90Millis[payment]=3.001 ms LowerIsBetter",
		"latencyP95Millis[payment]=3.001 ms LowerIsBetter",
		"latencyP99Millis[payment]=3.001 ms LowerIsBetter",
		"latencyP999Millis[payment]=3.001 ms LowerIsBetter",
		"latencyAverageMillis[payment]=2.0003333333333333 ms LowerIsBetter", // the histogram's mean
		"latencyMinMillis[payment]=1 ms LowerIsBetter",
		"latencyMaxMillis[payment]=3.001 ms LowerIsBetter",
		"operations[payment]=3 count Neutral",
	}
	if diff := cmp.Diff(want, metricsOf(r)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if len(r.Warnings) > 0 || r.Parameters["tool"] != "order-service-harness" || r.Parameters["region"] != "eu-1" || r.ToolVersion != "3.4" {
		t.Errorf("warnings %q, parameters %v, tool version %q", r.Warnings, r.Parameters, r.ToolVersion)
	}
	if len(r.TimeSeries) != 1 || r.TimeSeries[0].Values["ordersPerSecond"] != 800 {
		t.Errorf("time series %+v", r.TimeSeries)
	}
}

func TestResultJSONMalformed(t *testing.T) {
	good := document(t, goodDocument(t))
	withVersion := func(v string) string {
		return strings.Replace(good, `"schemaVersion": 1`, `"schemaVersion": `+v, 1)
	}
	cases := map[string]struct {
		out     string
		verdict results.Verdict
		reason  string
	}{
		"a later schema version":   {withVersion("2"), results.Failed, "output, schemaVersion: 2; this dbperf-runner reads schemaVersion 1"},
		"no schema version":        {strings.Replace(good, `"schemaVersion": 1,`, "", 1), results.Failed, "schemaVersion: 0"},
		"a syntax error":           {"log line\n" + strings.Replace(good, `"value": 812`, `"value": 812,,`, 1), results.Failed, "the result document is unreadable: line 13: invalid character ','"},
		"a number as a string":     {strings.Replace(good, `"value": 812`, `"value": "812"`, 1), results.Failed, "line 12: json: cannot unmarshal string"},
		"a field it does not have": {strings.Replace(good, `"toolVersion"`, `"version"`, 1), results.Failed, `json: unknown field "version"`},
		"an unknown direction": {strings.Replace(good, `"direction": "LowerIsBetter"`, `"direction": "Down"`, 1), results.Invalid,
			`output metrics[1].direction: "Down" is not HigherIsBetter, LowerIsBetter or Neutral`},
		"a unit neither given, declared nor in the name": {strings.Replace(good, `"unit": "items"`, `"unit": ""`, 1), results.Invalid,
			"output metrics[2], output metrics[2].unit: cartItems has no unit"},
		"the tool's own verdict": {strings.Replace(good, `"verdict": "Succeeded"`, `"verdict": "Invalid", "reasons": ["the cache was cold"]`, 1),
			results.Invalid, "order-service-harness says: the cache was cold"},
		"text after the document": {good + "done.\n", results.Invalid, `output line 45: text after the result document: "done."`},
		"no document":             {"ordersPerSecond 812\n", results.Failed, "no result document in the output"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := Custom{}.Parse(workloads.ParseInput{Output: []byte(c.out), Config: config(t, benchv1.CustomResultJSON, results.Key{Name: "ordersPerSecond"}, "")})
			testutil.CheckVerdict(t, r, c.verdict, c.reason)
			if c.verdict == results.Invalid {
				if _, ok := r.Get(results.Key{Name: "ordersPerSecond"}); !ok {
					t.Errorf("the primary metric was thrown away: %v", metricsOf(r))
				}
			}
		})
	}
}
