package compare

import (
	"fmt"
	"path"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Build compares candidate against baseline in three steps: collect every
// kept metric of every measurement of both sides into a sample per step,
// metric and operation; test each sample within its family; assemble the
// rows and their counts. It refuses sides whose workload settings differ in
// anything but the allowed paths.
func Build(baseline, candidate Side, o Options) (*Report, error) {
	if len(baseline.Runs) == 0 || len(candidate.Runs) == 0 {
		return nil, fmt.Errorf("nothing to compare: %d baseline and %d candidate runs", len(baseline.Runs), len(candidate.Runs))
	}
	ref := baseline.Runs[0]
	for _, side := range []Side{baseline, candidate} {
		for _, r := range side.Runs {
			if err := Comparable(ref.Spec, r.Spec, o.IgnorePaths); err != nil {
				return nil, fmt.Errorf("run %s (%s) cannot be compared with %s (%s): %w", r.Name, side.Name, ref.Name, baseline.Name, err)
			}
		}
	}
	rep := &Report{Baseline: baseline.Name, Candidate: candidate.Name, Workload: workloadName(baseline, candidate), Criteria: o.Criteria}
	primary, primaryOp := primaryMetric(ref)
	c := collect(rep, baseline, candidate, o, func(name, op string) bool { return name == primary && op == primaryOp })
	assemble(rep, test(rep, c, o), o)
	rep.Primary, rep.PrimaryOperation = primary, primaryOp
	orderTrends(rep, o.Criteria.WithDefaults().Alpha)
	covariatePools(rep, baseline, candidate)
	rep.Timelines = timelines([]Side{baseline, candidate})
	rep.Hosts = hostViews([]Side{baseline, candidate})
	rep.HostTable = hostTable(baseline, candidate)
	rep.Curves = curves([]Side{baseline, candidate})
	linkTargetCPU(rep)
	rep.Environment = environmentDiff(baseline, candidate)
	rep.Steps = stepsOf(rep)
	rep.Suspects = suspects(rep, baseline, candidate, o)
	rep.Flames = flames(rep, baseline, candidate, o)
	summarize(rep)
	rep.Distributions = distributions(rep, baseline, candidate)
	return rep, nil
}

type sampleKey struct{ step, metric, op string }

// sample is one metric of one step (and operation) over the measurements
// of both sides.
type sample struct {
	unit, src, candStep string
	dir                 benchv1.Direction
	params              map[string]string
	base, cand          []float64
	// baseRounds and candRounds are the values by round (Run.Round), for
	// the paired analysis.
	baseRounds, candRounds map[int32][]float64
	primary                bool
}

// collection is what collect gathered, the samples in the order first
// met, and what it needs to gather them.
type collection struct {
	samples   map[sampleKey]*sample
	order     []sampleKey
	o         Options
	isPrimary func(name, op string) bool
}

// collect gathers the kept metrics of every measurement of both sides, and
// records on the report the runs, the measurements left out and those
// compared on their headline alone.
func collect(rep *Report, baseline, candidate Side, o Options, isPrimary func(name, op string) bool) *collection {
	c := &collection{samples: map[sampleKey]*sample{}, o: o, isPrimary: isPrimary}
	rep.BaselineRuns = c.side(rep, baseline, true)
	rep.CandidateRuns = c.side(rep, candidate, false)
	return c
}

// side gathers one side's measurements and returns its runs' names.
func (c *collection) side(rep *Report, side Side, isBase bool) []string {
	var names []string
	for _, r := range side.Runs {
		names = append(names, r.Name)
		for _, st := range r.Steps {
			for _, m := range st.Repetitions {
				if !rep.exclude(side.Name, r, st.Name, m) {
					c.measurement(rep, r, st, m, isBase)
				}
			}
		}
	}
	return names
}

// exclude records a measurement left out, rejected by a person or not
// Succeeded, and says whether it was.
func (rep *Report) exclude(side string, r Run, step string, m benchv1.RepetitionStatus) bool {
	if rj, ok := benchv1.Rejected(r.Rejections, step, m.Index); ok {
		rep.Excluded = append(rep.Excluded, Exclusion{Side: side, Run: r.Name, Step: step, Repetition: m.Index,
			Verdict: string(m.Verdict), Reasons: m.Reasons, Rejected: rj.String()})
		return true
	}
	if m.Verdict != benchv1.VerdictSucceeded {
		rep.Excluded = append(rep.Excluded, Exclusion{Side: side, Run: r.Name, Step: step, Repetition: m.Index,
			Verdict: string(m.Verdict), Reasons: m.Reasons})
		return true
	}
	return false
}

// measurement adds one measurement's kept metrics to their samples: a
// candidate's step under the baseline's step it is paired with.
func (c *collection) measurement(rep *Report, r Run, st benchv1.StepStatus, m benchv1.RepetitionStatus, isBase bool) {
	metrics, full := r.metrics(st.Name, m)
	if !full {
		rep.HeadlineOnly = append(rep.HeadlineOnly, fmt.Sprintf("%s %s #%d", r.Name, st.Name, m.Index))
	}
	step := st.Name
	if paired, ok := c.o.StepPairs[step]; ok && !isBase {
		step = paired
	}
	for _, mv := range metrics {
		primary := c.isPrimary(mv.Name, mv.Operation)
		if !primary && !c.o.keeps(mv.Name, mv.Operation) && (mv.Name != c.o.Covariate || mv.Source != results.SourceCanary) {
			continue
		}
		k := sampleKey{step, mv.Name, mv.Operation}
		s, ok := c.samples[k]
		if !ok {
			s = &sample{unit: mv.Unit, src: mv.Source, dir: mv.Direction, params: st.Parameters, primary: primary,
				baseRounds: map[int32][]float64{}, candRounds: map[int32][]float64{}}
			c.samples[k] = s
			c.order = append(c.order, k)
		}
		if isBase {
			s.base = append(s.base, mv.Value)
			if r.Round > 0 {
				s.baseRounds[r.Round] = append(s.baseRounds[r.Round], mv.Value)
			}
			continue
		}
		s.cand = append(s.cand, mv.Value)
		if r.Round > 0 {
			s.candRounds[r.Round] = append(s.candRounds[r.Round], mv.Value)
		}
		if st.Name != step {
			s.candStep = st.Name
		}
	}
}

// tested is a sample measured on both sides, its family and its verdict.
type tested struct {
	key    sampleKey
	sample *sample
	family int
	stats.Comparison
}

// test judges every sample measured on both sides within its family of
// tests (family), in the order collected, and records each family's test
// and correction on the report.
func test(rep *Report, c *collection, o Options) []tested {
	var out []tested
	families := map[int][]int{}
	for _, k := range c.order {
		s := c.samples[k]
		if len(s.base) == 0 || len(s.cand) == 0 {
			continue // measured on one side only: nothing to compare
		}
		f := family(s.primary, s.src, k.metric)
		families[f] = append(families[f], len(out))
		out = append(out, tested{key: k, sample: s, family: f})
	}
	for _, f := range []int{familyHeadline, familyOperations, familyEfficiency, familyDisturbance, familyDescribed} {
		members := families[f]
		if len(members) == 0 {
			continue
		}
		part := make([]stats.Sample, len(members))
		for j, i := range members {
			part[j] = out[i].statsSample()
		}
		crit := o.familyCriteria(f)
		for j, cmp := range stats.Compare(part, crit) {
			out[members[j]].Comparison = cmp
		}
		if f != familyDescribed {
			rep.Families = append(rep.Families, FamilyNote{Name: familyNames[f], Tests: len(members), Test: crit.Test, Correction: crit.Correction})
		}
	}
	return out
}

// statsSample is the sample as internal/stats tests it. The servers' side
// is described (Δ % and its interval) but never tested, so that a dozen
// telemetry figures per step cost the tool's metrics no power.
func (t tested) statsSample() stats.Sample {
	k, s := t.key, t.sample
	dir := s.dir
	if t.family == familyDescribed {
		dir = stats.Neutral
	}
	return stats.Sample{Key: k.step + "/" + k.metric + "/" + k.op, Direction: dir, Baseline: s.base, Candidate: s.cand}
}

// assemble writes a row per tested sample, and counts the verdicts of
// those judged. A sequential comparison's headline rows are judged by
// their look (sequentialRow).
func assemble(rep *Report, all []tested, o Options) {
	crit := o.Criteria.WithDefaults()
	headlines := 0
	for _, t := range all {
		if t.family == familyHeadline {
			headlines++
		}
	}
	var look *sequentialLooker
	if o.Sequential != nil && headlines > 0 {
		look = newSequentialLooker(*o.Sequential, headlines)
	}
	canaries := canarySamples(all, o.Covariate)
	for _, t := range all {
		k, s, c := t.key, t.sample, t.Comparison
		row := Row{Step: k.step, CandidateStep: s.candStep, Metric: k.metric, Operation: k.op, Unit: s.unit, Direction: s.dir, Source: s.src,
			Baseline: c.Baseline, Candidate: c.Candidate, BaselineVals: s.base, CandidateVals: s.cand,
			DeltaPercent: Num(c.DeltaPercent), CILowPercent: Num(c.CILowPercent), CIHighPercent: Num(c.CIHighPercent), CILevel: Num(c.Level),
			P: Num(c.P), PAdjusted: Num(c.PAdjusted), Unstable: c.Unstable, Verdict: c.Verdict, Reason: c.Reason, Parameters: s.params}
		if t.family == familyHeadline || t.family == familyEfficiency || t.family == familyDisturbance {
			row.Paired = paired(s, crit)
		}
		if t.family == familyHeadline {
			row.Detectable = detectableRow(stats.DetectableIndependent(s.base, s.cand, crit.Alpha, crit.MinEffectPercent))
			row.Covariate = covariateRow(s, canaries[k.step], row.Paired, o.Covariate, crit.Alpha)
			if look != nil {
				look.judge(&row, s)
			}
		}
		rep.Rows = append(rep.Rows, row)
		if t.family == familyDescribed {
			continue // described, not judged: not counted
		}
		switch c.Verdict {
		case stats.Better:
			rep.Better++
		case stats.Worse:
			rep.Worse++
		case stats.NoChange:
			rep.NoChange++
		default:
			rep.Inconclusive++
		}
	}
}

// The families of tests of a report. A correction for many tests keeps its
// promise within a family; the families are chosen so that the verdicts a
// reader acts on keep their power at the repetition counts people use
// (docs/statistics.md, BenchmarkOperationFamilies):
//   - the headline: the primary metric of every step, on its own, by the
//     criteria's test and correction (the exact rank test and Holm unless
//     set): a handful of tests, so its verdict is as strong as a single
//     metric's;
//   - the operations: every other metric of the tool (each operation's
//     throughput, percentiles, errors; tens to hundreds of tests), by
//     Welch's t on logarithms, whose p-value has no floor, with the
//     Benjamini-Hochberg false-discovery-rate correction (a rank test's
//     smallest p at 5 vs 5, 2/252, cannot survive any correction over 20
//     operations), and the same minimum effect;
//   - the efficiency, the throughput per target core, on its own;
//   - the disturbances' cards (time to recover, unavailability, dip, lost
//     operations and writes: docs/disturbances.md), judged with the
//     headline's test and correction in a family of their own: what a
//     failover costs is a verdict of its own, not a telemetry figure;
//   - the rest of the servers' side, described (Δ % and its interval)
//     but never tested.
const (
	familyHeadline = iota
	familyOperations
	familyEfficiency
	familyDisturbance
	familyDescribed
)

// SourceDisturbance is the source of a disturbance card's figures
// (internal/disturb).
const SourceDisturbance = "disturbance"

var familyNames = map[int]string{familyHeadline: "headline", familyOperations: "operations", familyEfficiency: "efficiency", familyDisturbance: "disturbance cards"}

// family sorts a metric into its family of tests.
func family(primary bool, source, metric string) int {
	switch {
	case source == "" && primary:
		return familyHeadline
	case source == "":
		return familyOperations
	case metric == telemetry.FigureEfficiency:
		return familyEfficiency
	case source == SourceDisturbance:
		return familyDisturbance
	}
	return familyDescribed
}

// keeps says whether the filters keep a metric of an operation.
func (o Options) keeps(metric, op string) bool {
	return matchesAny(o.Metrics, metric) && (op == "" || matchesAny(o.Operations, op))
}

func matchesAny(patterns []string, s string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok || p == s {
			return true
		}
	}
	return false
}
