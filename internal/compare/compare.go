// Package compare turns the results of two sets of BenchmarkRuns — a
// baseline and a candidate — into a per-step, per-metric comparison: both
// summaries, Δ %, its confidence interval, the p-value and a verdict
// (internal/stats), and renders it as a table, Markdown, CSV, JSON or a
// self-contained HTML page with SVG charts. Used by the BenchmarkComparison
// controller and by kubectl-dbperf, online and from exported files.
package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Run is what a comparison needs of one BenchmarkRun: its spec, its
// measurements and where it ran. `kubectl dbperf results -o json` writes it.
type Run struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	// Workload is the tool's name as the run's status gives it (the
	// workload registry's name), so that a report names every tool without
	// knowing any.
	Workload    string                   `json:"workload,omitempty"`
	Spec        benchv1.BenchmarkRunSpec `json:"spec"`
	Phase       benchv1.Phase            `json:"phase,omitempty"`
	Steps       []benchv1.StepStatus     `json:"steps"`
	Environment *benchv1.Environment     `json:"environment,omitempty"`
	// Measurements are the full results of the run's measurements, from
	// its results document: every metric of every operation. A
	// measurement without one is compared on the headline metrics its
	// status keeps (Report.HeadlineOnly says which).
	Measurements []Measurement `json:"measurements,omitempty"`
	// Rejections are the measurements a person rejected (the run's
	// annotation bench.dbperf.io/rejections): left out, shown struck through.
	Rejections []benchv1.Rejection `json:"rejections,omitempty"`
	// Capacity is a capacity run's search (its levels draw the knee
	// curves); its maximum is compared as the step "capacity".
	Capacity *benchv1.CapacityStatus `json:"capacity,omitempty"`
	// Round is the round of an interleaved or concurrent comparison the
	// run measured (from 1): its runs of one round are paired (PairedRow).
	// Zero: not measured in rounds (a sequential comparison, runs named
	// by hand).
	Round int32 `json:"round,omitempty"`
}

// Measurement is one repetition's full result.
type Measurement struct {
	Step       string          `json:"step"`
	Repetition int32           `json:"repetition"`
	Result     *results.Result `json:"result"`
}

// AddDocument takes the full result of every measurement from the run's
// results document (nil: none, the run has not finished).
func (r *Run) AddDocument(doc *specs.Document) {
	if doc == nil || r.Spec.Capacity != nil { // a capacity run is compared on what it found
		return
	}
	r.Measurements = nil
	for _, st := range doc.Steps {
		for _, rep := range st.Repetitions {
			if rep.Result != nil {
				r.Measurements = append(r.Measurements, Measurement{Step: st.Name, Repetition: rep.Index, Result: rep.Result})
			}
		}
	}
}

// metrics of one measurement: every metric of its full result when the
// run has it, else the headline its status keeps (and false).
func (r Run) metrics(step string, rep benchv1.RepetitionStatus) ([]benchv1.MetricValue, bool) {
	for _, m := range r.Measurements {
		if m.Step != step || m.Repetition != rep.Index || m.Result == nil || len(m.Result.Metrics) == 0 {
			continue
		}
		out := make([]benchv1.MetricValue, 0, len(m.Result.Metrics)+len(rep.Metrics))
		have := map[results.Key]bool{}
		for _, x := range m.Result.Metrics {
			out = append(out, benchv1.MetricValue{Name: x.Name, Operation: x.Operation, Value: x.Value, Unit: x.Unit,
				Direction: x.Direction, Source: x.Source})
			have[x.Key()] = true
		}
		// What status recorded beside the result (nothing, as the run
		// controller stores it) is kept rather than lost.
		for _, x := range rep.Metrics {
			if !have[results.Key{Name: x.Name, Operation: x.Operation}] {
				out = append(out, x)
			}
		}
		return out, true
	}
	return rep.Metrics, false
}

// FromBenchmarkRun takes what a comparison needs from a run.
// An unreadable rejections annotation rejects nothing (the run's condition
// Rejected says why).
func FromBenchmarkRun(r *benchv1.BenchmarkRun) Run {
	rejections, _ := benchv1.Rejections(r.Annotations)
	out := Run{Name: r.Name, Namespace: r.Namespace, Labels: r.Labels, Workload: r.Status.Workload, Spec: r.Spec,
		Phase: r.Status.Phase, Steps: r.Status.Steps, Environment: r.Status.Environment, Rejections: rejections}
	if r.Spec.Capacity != nil {
		out.Capacity = r.Status.Capacity
		asCapacity(&out, r.Status.Capacity)
	}
	return out
}

// Side is a named set of runs: a variant.
type Side struct {
	Name string
	Runs []Run
}

// Exclusion is a measurement left out of the comparison, and why.
type Exclusion struct {
	Side       string   `json:"side"`
	Run        string   `json:"run"`
	Step       string   `json:"step"`
	Repetition int32    `json:"repetition"`
	Verdict    string   `json:"verdict"`
	Reasons    []string `json:"reasons,omitempty"`
	// Rejected is set when a person rejected the measurement: it says by
	// whom, when and why (the report strikes it through).
	Rejected string `json:"rejected,omitempty"`
}

// Row is one metric of one step.
type Row struct {
	// Step is the baseline's step; CandidateStep the candidate's when the
	// comparison paired steps of other names (Options.StepPairs).
	Step          string            `json:"step"`
	CandidateStep string            `json:"candidateStep,omitempty"`
	Metric        string            `json:"metric"`
	Operation     string            `json:"operation,omitempty"`
	Unit          string            `json:"unit"`
	Direction     stats.Direction   `json:"direction"`
	Baseline      stats.Summary     `json:"baseline"`
	Candidate     stats.Summary     `json:"candidate"`
	BaselineVals  []float64         `json:"baselineValues"`
	CandidateVals []float64         `json:"candidateValues"`
	DeltaPercent  Num               `json:"deltaPercent"`
	CILowPercent  Num               `json:"ciLowPercent"`
	CIHighPercent Num               `json:"ciHighPercent"`
	CILevel       Num               `json:"ciLevel"`
	P             Num               `json:"p"`
	PAdjusted     Num               `json:"pAdjusted"`
	Unstable      bool              `json:"unstable,omitempty"`
	Verdict       stats.Verdict     `json:"verdict"`
	Reason        string            `json:"reason"`
	Parameters    map[string]string `json:"parameters,omitempty"`
	// Source names the telemetry source of a row of the servers' side
	// (its Operation then says whose: server, target, ...); empty for the
	// tool's metrics.
	Source string `json:"source,omitempty"`
	// Restates names the row this one restates ("step/metric operation":
	// a per-operation rate moving with the iteration rate, a count with
	// its rate): grouped under it, not counted (summary.go).
	Restates string `json:"restates,omitempty"`
	// Bimodal describes the sides whose repetitions fall into two
	// separate groups, with the groups' values.
	Bimodal string `json:"bimodal,omitempty"`
	// Paired is the row's paired analysis by round (headline, efficiency
	// and disturbance rows of a comparison measured in rounds), shown
	// beside the independent analysis that judges.
	Paired *PairedRow `json:"paired,omitempty"`
	// Covariate is the headline row's paired change adjusted by the
	// canary figure Options.Covariate names.
	Covariate *CovariateRow `json:"covariate,omitempty"`
	// Order is the headline row's test for a trend across each side's
	// measurements in the order they ran: an order effect.
	Order *OrderRow `json:"order,omitempty"`
	// Sequential is the look of a sequential comparison at the row's
	// rounds (headline rows): it judges the row, and its change and
	// interval are the row's.
	Sequential *SequentialRow `json:"sequential,omitempty"`
	// Detectable is the smallest change the row's runs could detect with
	// the noise they showed (headline rows), and the measurements per
	// variant the minimum effect needs.
	Detectable *DetectableRow `json:"detectable,omitempty"`
	// TargetCPUDeltaPercent, on a row of the primary metric, is the change
	// of the target's CPU at the same step: throughput and what it cost
	// side by side.
	TargetCPUDeltaPercent *Num `json:"targetCPUDeltaPercent,omitempty"`
}

// IsTelemetry says whether the row describes the servers' side.
func (r Row) IsTelemetry() bool { return r.Source != "" }

// Described says whether the row is shown but not judged: the servers'
// side other than the efficiency. Its verdict says only whether it
// changed; the report's counts leave it out.
func (r Row) Described() bool { return family(false, r.Source, r.Metric) == familyDescribed }

// Report is the comparison of a candidate against a baseline.
type Report struct {
	Baseline      string         `json:"baseline"`
	Candidate     string         `json:"candidate"`
	BaselineRuns  []string       `json:"baselineRuns"`
	CandidateRuns []string       `json:"candidateRuns"`
	Workload      string         `json:"workload"`
	Criteria      stats.Criteria `json:"criteria"`
	Rows          []Row          `json:"rows"`
	Excluded      []Exclusion    `json:"excluded,omitempty"`
	// Primary names the workload's primary metric (of the first run).
	Primary string `json:"primary,omitempty"`
	// PrimaryOperation is the operation of the primary metric ("" for
	// the whole run), as the runs' summaries give it.
	PrimaryOperation string `json:"primaryOperation,omitempty"`
	// HeadlineOnly names the measurements ("run step #repetition")
	// compared on their status's headline metrics alone, their full result
	// not being available (an export without it, a results document lost).
	HeadlineOnly []string `json:"headlineOnly,omitempty"`
	// Families say how each family of metrics was tested.
	Families []FamilyNote `json:"families,omitempty"`
	// Timelines are measurements drawn over time (Timeline).
	Timelines []Timeline `json:"timelines,omitempty"`
	// Hosts are the machines of those measurements over time (HostView),
	// and HostTable each machine's figures per variant (HostRow).
	Hosts     []HostView `json:"hosts,omitempty"`
	HostTable []HostRow  `json:"hostTable,omitempty"`
	// Curves are the knee curves of capacity runs, both variants'.
	Curves []Curve `json:"curves,omitempty"`
	// Environment are the facts of the environment that differ between
	// the variants (node instance type, CPU model, kernel, images, server
	// version, ...): environment.go.
	Environment []EnvDiff `json:"environment,omitempty"`
	// Suspects are the statements, wait events and commands whose time
	// per transaction changed most, from the runs' diagnostics
	// (suspects.go).
	Suspects []Suspect `json:"suspects,omitempty"`
	// Flames are each step's on-CPU profiles of both variants, per
	// transaction, for the differential flame graphs (flame.go).
	Flames []FlameDiff `json:"flames,omitempty"`
	// Distributions are the latency distributions of the operations that
	// changed, both variants' (distribution.go).
	Distributions []Distribution `json:"distributions,omitempty"`
	// Steps are the baseline's steps in the order measured (the rows are
	// sorted worst first).
	Steps []string `json:"steps,omitempty"`
	// Summary leads every output: the verdict, what changed most, what
	// was left out (summary.go).
	Summary *Summary `json:"summary,omitempty"`
	// Counts of verdicts of the judged rows (not those restating another).
	Better       int `json:"better"`
	Worse        int `json:"worse"`
	NoChange     int `json:"noChange"`
	Inconclusive int `json:"inconclusive"`
}

// Num is a float that is null in JSON when it is not finite (an unbounded
// interval, an undefined change).
type Num float64

// MarshalJSON writes null for NaN and ±Inf, which JSON cannot hold.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// FamilyNote describes one family of tests of a report: which metrics,
// how many, and the test and correction used.
type FamilyNote struct {
	Name       string           `json:"name"`
	Tests      int              `json:"tests"`
	Test       stats.Test       `json:"test,omitempty"`
	Correction stats.Correction `json:"correction,omitempty"`
}

// Options of a comparison.
type Options struct {
	// Criteria judge the headline: the primary metric of every step,
	// tested on its own (by default the exact rank test, Holm).
	Criteria stats.Criteria
	// OperationCorrection is the correction over every other metric of
	// the tool (every operation's throughput, percentiles, errors),
	// tested by Welch's t on logarithms; default Benjamini-Hochberg (false
	// discovery rate). See family.
	OperationCorrection stats.Correction
	// Metrics and Operations keep only the metrics and operations whose
	// names match one of their patterns (path.Match: "latencyP9*",
	// "NewOrder"); empty keeps all. The primary metric is always kept.
	Metrics, Operations []string
	// IgnorePaths are JSON paths of the run spec that may differ between
	// the sides (a variant's patch), besides what never matters to the
	// workload: target, placement, image, resources, repetitions, timeout,
	// cleanup and validity.
	IgnorePaths []string
	// StepPairs maps a candidate's step to the baseline's step it is
	// compared with (PairSteps); nil compares steps of the same name.
	StepPairs map[string]string
	// Sequential, for a comparison that stops early, judges the headline
	// rows by a look of this design at their rounds (its Alpha is the
	// candidate's share; each headline row gets an equal part of it).
	Sequential *stats.SequentialDesign
	// Covariate is the canary figure (results.SourceCanary) the headline
	// rows' paired change is adjusted by (CovariateRow); "" for none.
	Covariate string
}

// linkTargetCPU puts, on every row of the primary metric, the change of
// the target's CPU at its step (TargetCPURow).
func linkTargetCPU(rep *Report) {
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if !rep.IsPrimary(*r) {
			continue
		}
		if cpu, ok := rep.TargetCPURow(r.Step); ok {
			d := cpu.DeltaPercent
			r.TargetCPUDeltaPercent = &d
		}
	}
}

// TargetCPURow is a step's row of the target's CPU, if measured, picked
// in telemetry.TargetCPUKeys' order.
func (r *Report) TargetCPURow(step string) (Row, bool) {
	for _, k := range telemetry.TargetCPUKeys {
		for _, row := range r.Rows {
			if row.Step == step && row.IsTelemetry() && row.Metric == k.Name && row.Operation == k.Operation {
				return row, true
			}
		}
	}
	return Row{}, false
}

// primaryMetric is the primary metric's name and operation: the first
// entry of a step's summary.
func primaryMetric(r Run) (string, string) {
	for _, st := range r.Steps {
		for _, s := range st.Summary {
			return s.Name, s.Operation
		}
	}
	return "", ""
}

// workloadName is the tool the runs ran, from the first run that names it:
// the sides apply the same load (Comparable), so they ran the same tool, and
// a run exported before runs carried the name leaves it to the others.
func workloadName(sides ...Side) string {
	for _, side := range sides {
		for _, r := range side.Runs {
			if r.Workload != "" {
				return r.Workload
			}
		}
	}
	return ""
}

// neverMatters are the spec paths that describe the platform or the run's
// bookkeeping, not the load the tool applies.
var neverMatters = []string{"target", "workload.placement", "workload.image", "workload.resources",
	"repetitions", "timeout", "cleanup", "validity", "allowSharedNodes"}

// Comparable says why two run specs do not apply the same load, ignoring
// the platform (neverMatters) and the given paths; nil when they do.
func Comparable(a, b benchv1.BenchmarkRunSpec, ignore []string) error {
	ma, mb := toMap(a), toMap(b)
	for _, p := range append(append([]string{}, neverMatters...), ignore...) {
		deletePath(ma, p)
		deletePath(mb, p)
	}
	var diffs []string
	diffMaps("", ma, mb, &diffs)
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("the workload settings differ in %s (only the variant's patch and the platform may differ)", strings.Join(diffs, ", "))
	}
	return nil
}

func toMap(s benchv1.BenchmarkRunSpec) map[string]any {
	raw, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func deletePath(m map[string]any, path string) {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if i == len(parts)-1 {
			delete(m, p)
			return
		}
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
}

func diffMaps(prefix string, a, b map[string]any, out *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		va, vb := a[k], b[k]
		ma, oka := va.(map[string]any)
		mb, okb := vb.(map[string]any)
		if oka && okb {
			diffMaps(p, ma, mb, out)
			continue
		}
		if !reflect.DeepEqual(va, vb) {
			*out = append(*out, fmt.Sprintf("%s (%s vs %s)", p, short(va), short(vb)))
		}
	}
}

func short(v any) string {
	if v == nil {
		return "unset"
	}
	raw, _ := json.Marshal(v)
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// PatchPaths lists the leaf paths a JSON merge patch sets, so that a
// comparison ignores exactly what its variants change.
func PatchPaths(patch []byte) ([]string, error) {
	if len(patch) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, fmt.Errorf("patch is not a JSON object: %w", err)
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(p, sub)
				continue
			}
			out = append(out, p)
		}
	}
	walk("", m)
	sort.Strings(out)
	return out, nil
}

// IsPrimary says whether a row is of the primary metric (the tool's, of
// the primary operation).
func (r *Report) IsPrimary(row Row) bool {
	return row.Metric == r.Primary && row.Operation == r.PrimaryOperation && !row.IsTelemetry()
}

// lastStep is the report's last step in the order measured.
func (r *Report) lastStep() string {
	if n := len(r.Steps); n > 0 {
		return r.Steps[n-1]
	}
	last := ""
	for _, row := range r.Rows {
		last = row.Step
	}
	return last
}
