package runner

import (
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Judge turns what a tool left behind into its result: exec calls it when
// the tool has exited, `parse` on a saved log, so both judge alike. A
// prepare step (schema build, data load) is not a measurement: it is judged
// by its exit code and, for tools whose exit code can lie, by its parser's
// check. took is the step's duration, zero when unknown.
func Judge(p workloads.Parser, in workloads.ParseInput, prepare bool, took time.Duration) *results.Result {
	if !prepare {
		r := p.Parse(in)
		r.ExitCode = in.ExitCode
		return r
	}
	r := results.New("prepare")
	r.Primary = results.Key{Name: "prepareSeconds"}
	if took > 0 {
		r.Add(results.Metric{Name: "prepareSeconds", Value: took.Seconds(), Unit: "s", Direction: results.LowerIsBetter})
	}
	if in.ExitCode != nil && *in.ExitCode != 0 {
		r.Fail("the prepare step exited with code %d", *in.ExitCode)
	}
	if pp, ok := p.(workloads.PrepareParser); ok {
		for _, reason := range pp.ParsePrepare(in) {
			r.Fail("%s", reason)
		}
	}
	r.ExitCode = in.ExitCode
	return r
}
