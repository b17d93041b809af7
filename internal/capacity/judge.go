package capacity

import (
	"fmt"
	"math"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// Names of the figures a tool's result gives for the rules: pgbench's
// counts under --latency-limit (workloads/pgbench).
const (
	MetricProcessed        = "transactionsProcessed"
	MetricSkipped          = "transactionsSkipped"
	MetricOverLatencyLimit = "transactionsOverLatencyLimit"
	ParamLatencyLimit      = "latencyLimitMillis"
	MetricErrorPercent     = "errorPercent"
	// MetricOffered is what a tool whose rate limit is not exactly the
	// level says it offered (memtier: a whole rate per connection).
	MetricOffered = "offeredRatePerSecond"
)

// Input is one level to judge.
type Input struct {
	Value int32
	// Rate: the level is an offered rate per second (open loop).
	Rate bool
	// Results are the level's succeeded measurements.
	Results []*results.Result
	// Previous is the largest passing level below this one, if any, for
	// the gain rule.
	Previous *Previous
}

// Previous is a lower passing level and its throughput.
type Previous struct {
	Value      int32
	Throughput float64
}

// Judgement is a judged level.
type Judgement struct {
	Passed bool
	// Reasons name every failing rule with its figure; the generators'
	// (achieved rate) first.
	Reasons []string
	// Unjudgeable says why a rule could not be judged at all (a figure
	// no measurement recorded): the search cannot go on.
	Unjudgeable    string
	Throughput     *float64
	Achieved       *float64
	LatencyMillis  *float64
	OverLimitShare *float64
	// GeneratorCPUMicrosPerOp is the load generators' CPU time per
	// operation of the primary throughput, in microseconds: what the
	// pre-flight check of the next level (GeneratorsNeeded) reads.
	GeneratorCPUMicrosPerOp *float64
}

// Judge decides whether a level passed rules.
func Judge(rules *benchv1.CapacityRules, in Input) Judgement {
	var j Judgement
	if len(in.Results) == 0 {
		j.Unjudgeable = "no measurement of the level succeeded"
		return j
	}
	tput, unit := medianPrimary(in.Results)
	j.Throughput = &tput
	j.GeneratorCPUMicrosPerOp = generatorCost(in.Results)
	if in.Rate {
		a := round(tput/float64(in.Value)*100, 2)
		what := fmt.Sprintf("%.4g %s of %d/s offered", tput, unit, in.Value)
		if done, scheduled, ok := scheduledCounts(in.Results); ok {
			// A Poisson schedule (pgbench --rate) offers its rate only on
			// average: 2 s at 50/s may schedule 92. What the schedule
			// offered and was not sent (skipped, already late) is exact.
			a = round(done/scheduled*100, 2)
			what = fmt.Sprintf("%.0f of the %.0f requests their schedule offered at %d/s", done, scheduled, in.Value)
		} else if offered, ok := meanMetric(in.Results, results.Key{Name: MetricOffered}); ok && offered > 0 && math.Abs(offered-float64(in.Value)) >= 0.005*float64(in.Value) {
			// Achieved stays against the level: what the tool could not be
			// told to offer was not offered.
			what += fmt.Sprintf(" (the generators were set to offer %.4g/s of it)", offered)
		}
		j.Achieved = &a
		if m := rules.MinAchievedPercent; m != nil && a < float64(*m) {
			j.Reasons = append(j.Reasons, fmt.Sprintf("the generators achieved %s (%.4g %%, below minAchievedPercent %.4g %%)", what, a, float64(*m)))
		}
	}
	for i, r := range rules.Latency {
		v, over, fail, why := judgeLatency(r, in.Results)
		if why != "" {
			j.Unjudgeable = why
			return j
		}
		if i == 0 {
			j.LatencyMillis, j.OverLimitShare = v, over
		}
		if fail != "" {
			j.Reasons = append(j.Reasons, fail)
		}
	}
	if m := rules.MaxErrorPercent; m != nil {
		e, ok := meanMetric(in.Results, results.Key{Name: MetricErrorPercent})
		switch {
		case !ok:
			j.Unjudgeable = "the rule maxErrorPercent: no measurement of the level recorded errorPercent"
			return j
		case e > float64(*m):
			j.Reasons = append(j.Reasons, fmt.Sprintf("errors %.4g %% (above maxErrorPercent %.4g %%)", e, float64(*m)))
		}
	}
	if g := rules.MinGainPercent; g != nil && in.Previous != nil && in.Previous.Throughput > 0 && in.Value > in.Previous.Value {
		gain := (tput/in.Previous.Throughput - 1) / (float64(in.Value)/float64(in.Previous.Value) - 1) * 100
		if gain < float64(*g) {
			j.Reasons = append(j.Reasons, fmt.Sprintf("past the knee: %.4g %s at %d against %.4g at %d, a gain of %.3g %% of the load added (below minGainPercent %.4g %%)",
				tput, unit, in.Value, in.Previous.Throughput, in.Previous.Value, gain, float64(*g)))
		}
	}
	for _, r := range rules.Metrics {
		fail, why := judgeMetric(r, in.Results)
		if why != "" {
			j.Unjudgeable = why
			return j
		}
		if fail != "" {
			j.Reasons = append(j.Reasons, fail)
		}
	}
	j.Passed = len(j.Reasons) == 0
	return j
}

// JudgeTrials judges each of the level's measurements on its own (a trial)
// and passes the level when at most exceedRatio percent of them fail
// (MLRsearch's exceed ratio); its figures are those of the trials together.
func JudgeTrials(rules *benchv1.CapacityRules, in Input, exceedRatio float64) Judgement {
	all := Judge(rules, in)
	if all.Unjudgeable != "" {
		return all
	}
	failed, first := 0, ""
	for i, r := range in.Results {
		one := in
		one.Results = []*results.Result{r}
		j := Judge(rules, one)
		if j.Unjudgeable != "" {
			return j
		}
		if !j.Passed {
			failed++
			if first == "" {
				first = fmt.Sprintf("trial %d: %s", i+1, strings.Join(j.Reasons, "; "))
			}
		}
	}
	share := float64(failed) / float64(len(in.Results)) * 100
	all.Passed, all.Reasons = share <= exceedRatio, nil
	if !all.Passed {
		all.Reasons = []string{fmt.Sprintf("%d of %d trials failed (%.3g %%, above the exceed ratio of %.3g %%); %s", failed, len(in.Results), share, exceedRatio, first)}
	}
	return all
}

// scheduledCounts are the requests a level's generators completed and
// those their schedule offered (completed plus skipped), when every
// measurement counts its skipped ones.
func scheduledCounts(rs []*results.Result) (done, scheduled float64, ok bool) {
	for _, r := range rs {
		d, okDone := r.Get(results.Key{Name: MetricProcessed})
		s, okSkipped := r.Get(results.Key{Name: MetricSkipped})
		if !okDone || !okSkipped {
			// An arrival-rate executor's iterations, and those it dropped
			// for want of a free virtual user (absent: none).
			it, okIt := r.Get(results.Key{Name: "count", Operation: "iterations"})
			if !okIt {
				return 0, 0, false
			}
			dropped, _ := r.Get(results.Key{Name: "count", Operation: "dropped_iterations"})
			d, s = it, dropped
		}
		done, scheduled = done+d.Value, scheduled+d.Value+s.Value
	}
	return done, scheduled, scheduled > 0
}

// judgeLatency judges one latency rule on the level's merged histograms,
// else on pgbench's count of transactions over its latency limit.
func judgeLatency(r benchv1.LatencyRule, rs []*results.Result) (millis, overShare *float64, fail, unjudgeable string) {
	pct, limit := float64(r.Percentile), float64(r.Max.Microseconds())/1000
	name := fmt.Sprintf("p%g of %s", pct, opName(r.Operation))
	if h, err := mergedHistogram(rs, r.Operation); err != nil {
		return nil, nil, "", fmt.Sprintf("the latency rule on %s: %v", opName(r.Operation), err)
	} else if h != nil {
		v := round(float64(h.ValueAtPercentile(pct))/1000, 3)
		if v > limit {
			fail = fmt.Sprintf("%s %.4g ms (above %s, from %d requests' merged histograms)", name, v, r.Max.Duration, h.TotalCount())
		}
		return &v, nil, fail, ""
	}
	var over, total float64
	for _, res := range rs {
		lim, ok := res.Parameters[ParamLatencyLimit]
		late, okLate := res.Get(results.Key{Name: MetricOverLatencyLimit})
		done, okDone := res.Get(results.Key{Name: MetricProcessed})
		if !ok || !okLate || !okDone {
			return nil, nil, "", fmt.Sprintf("the latency rule on %s: the %s results carry no latency histogram and no count over a latency limit", opName(r.Operation), res.Tool)
		}
		if !sameMillis(lim, limit) {
			return nil, nil, "", fmt.Sprintf("the latency rule on %s: %s counted transactions over %s ms, not over the rule's %s: set its latency limit to the rule's max",
				opName(r.Operation), res.Tool, lim, r.Max.Duration)
		}
		skipped, _ := res.Get(results.Key{Name: MetricSkipped})
		over += late.Value + skipped.Value
		total += done.Value + skipped.Value
	}
	if total == 0 {
		return nil, nil, "", "the latency rule: no transaction was counted"
	}
	share := round(over/total*100, 4)
	if share > 100-pct {
		fail = fmt.Sprintf("%s above %s: %.4g %% of %.0f transactions were over it (skipped ones, already late at their scheduled start, included), more than %.4g %%",
			name, r.Max.Duration, share, total, 100-pct)
	}
	return nil, &share, fail, ""
}

// mergedHistogram merges the level's histograms of an operation (every
// operation when op is empty); nil when no result carries one.
func mergedHistogram(rs []*results.Result, op string) (*hdr.Histogram, error) {
	var out *hdr.Histogram
	for _, res := range rs {
		ops := res.HistogramOperations()
		if len(ops) == 0 {
			if out != nil {
				return nil, fmt.Errorf("some of the level's measurements carry no histogram")
			}
			continue
		}
		found := false
		for _, o := range ops {
			if op != "" && o != op {
				continue
			}
			h, err := results.DecodeHistogram(res.Histograms[o])
			if err != nil {
				return nil, fmt.Errorf("an unreadable histogram of %s: %w", o, err)
			}
			if out == nil {
				out = results.NewHistogram()
			}
			out.Merge(h)
			found = true
		}
		if !found {
			return nil, fmt.Errorf("no histogram of operation %q; the measurements have %s", op, strings.Join(ops, ", "))
		}
	}
	return out, nil
}

func judgeMetric(r benchv1.MetricRule, rs []*results.Result) (fail, unjudgeable string) {
	k := results.Key{Name: r.Name, Operation: r.Operation}
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, res := range rs {
		if m, ok := res.Get(k); ok {
			lo, hi, n = min(lo, m.Value), max(hi, m.Value), n+1
		}
	}
	label := r.Name
	if r.Operation != "" {
		label += " of " + r.Operation
	}
	if n == 0 {
		return "", fmt.Sprintf("the rule on %s: no measurement of the level recorded it", label)
	}
	var fails []string
	if r.Max != nil && hi > *r.Max {
		fails = append(fails, fmt.Sprintf("%s %.4g (above its max %.4g)", label, hi, *r.Max))
	}
	if r.Min != nil && lo < *r.Min {
		fails = append(fails, fmt.Sprintf("%s %.4g (below its min %.4g)", label, lo, *r.Min))
	}
	return strings.Join(fails, "; "), ""
}

func medianPrimary(rs []*results.Result) (float64, string) {
	var vs []float64
	unit := ""
	for _, r := range rs {
		if m, ok := r.Get(r.Primary); ok {
			vs, unit = append(vs, m.Value), m.Unit
		}
	}
	return stats.Summarize(vs).Median, unit
}

func meanMetric(rs []*results.Result, k results.Key) (float64, bool) {
	sum, n := 0.0, 0
	for _, r := range rs {
		if m, ok := r.Get(k); ok {
			sum, n = sum+m.Value, n+1
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

func opName(op string) string {
	if op == "" {
		return "the whole load"
	}
	return op
}

func sameMillis(text string, ms float64) bool {
	var v float64
	if _, err := fmt.Sscan(text, &v); err != nil {
		return false
	}
	return math.Abs(v-ms) <= 0.05 // pgbench prints its limit to 0.1 ms
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// generatorCost is the mean over rs of the load generators' CPU time per
// operation (µs); nil when no result says both.
func generatorCost(rs []*results.Result) *float64 {
	var costs []float64
	for _, r := range rs {
		lg := r.LoadGenerator
		m, ok := r.Get(r.Primary)
		if lg == nil || !ok || lg.CPUSeconds <= 0 || lg.WallSeconds <= 0 || m.Value <= 0 {
			continue
		}
		costs = append(costs, lg.CPUSeconds*1e6/(m.Value*lg.WallSeconds))
	}
	if len(costs) == 0 {
		return nil
	}
	v := round(stats.Summarize(costs).Mean, 3)
	return &v
}

// GeneratorsNeeded is how many load generators a level of rate operations
// a second needs when each costs microsPerOp of generator CPU and a
// generator may use cpus CPUs up to maxPercent of them, and the operations
// a second one generator offers.
func GeneratorsNeeded(rate int32, microsPerOp, cpus, maxPercent float64) (need int, perGenerator float64) {
	perGenerator = cpus * maxPercent / 100 * 1e6 / microsPerOp
	if perGenerator <= 0 {
		return 0, 0
	}
	return int(math.Ceil(float64(rate) / perGenerator)), perGenerator
}
