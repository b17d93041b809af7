// Package smoke makes the smoke form of a sample: the same BenchmarkRun,
// BenchmarkComparison or BenchmarkSchedule, small enough to try in a minute
// or two on the embedded cluster (`kubectl dbperf try`, `make samples`).
// Each tool shrinks its own workload (workloads.Shrinker: shorter, less
// data, two steps at most); here the run's own settings: one repetition,
// one run per variant, no warm-up, a short timeout, shared nodes, and a
// schedule's one run on creation instead of its cron. Every change is said.
package smoke

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// Timeout is a smoke run's timeout: long enough for a HammerDB schema and
// its one-minute test on a loaded machine.
const Timeout = 15 * time.Minute

// Object is one shrunk object and what was changed in it.
type Object struct {
	Kind, Name string
	Changes    []string
	// YAML is the object's smoke form.
	YAML []byte
}

// ShrinkYAML reads one or more YAML documents (a sample file) and returns
// the smoke form of each dbperf object; other documents are refused.
func ShrinkYAML(r io.Reader) ([]Object, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []Object
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			continue
		}
		o, err := shrinkDocument(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
}

func shrinkDocument(raw []byte) (Object, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return Object{}, err
	}
	var obj any
	var changes []string
	var err error
	switch tm.Kind {
	case "BenchmarkRun":
		r := &benchv1.BenchmarkRun{}
		if err = strict(raw, r); err == nil {
			changes, err = RunSpec(&r.Spec)
			r.Status = benchv1.BenchmarkRunStatus{}
		}
		obj = r
	case "BenchmarkComparison":
		c := &benchv1.BenchmarkComparison{}
		if err = strict(raw, c); err == nil {
			changes, err = ComparisonSpec(&c.Spec)
			c.Status = benchv1.BenchmarkComparisonStatus{}
		}
		obj = c
	case "BenchmarkSchedule":
		s := &benchv1.BenchmarkSchedule{}
		if err = strict(raw, s); err == nil {
			changes, err = ScheduleSpec(&s.Spec)
			s.Status = benchv1.BenchmarkScheduleStatus{}
		}
		obj = s
	default:
		// A Secret or ConfigMap the sample needs: as it is.
		out, err := yaml.JSONToYAML(raw)
		if err != nil {
			return Object{}, err
		}
		var meta struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &meta)
		return Object{Kind: tm.Kind, Name: meta.Metadata.Name, YAML: out}, nil
	}
	if err != nil {
		return Object{}, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return Object{}, err
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &meta)
	return Object{Kind: tm.Kind, Name: meta.Metadata.Name, Changes: changes, YAML: stripEmpty(out)}, nil
}

// strict decodes a document refusing fields the API does not have, as the
// API server would.
func strict(raw []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// stripEmpty drops the empty status and creationTimestamp the Go types
// write back.
func stripEmpty(b []byte) []byte {
	var m map[string]any
	if yaml.Unmarshal(b, &m) != nil {
		return b
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

// RunSpec shrinks a run's spec: its workload (the tool's Shrinker) and its
// own settings.
func RunSpec(s *benchv1.BenchmarkRunSpec) ([]string, error) {
	w, err := registry.For(&s.Workload)
	if err != nil {
		return nil, err
	}
	var out []string
	if sh, ok := w.(workloads.Shrinker); ok {
		out = sh.Shrink(&s.Workload)
	}
	if s.Repetitions > 1 {
		out = append(out, fmt.Sprintf("repetitions %d → 1", s.Repetitions))
		s.Repetitions = 1
	}
	if s.Workload.Warmup != nil && s.Workload.Warmup.Duration > 0 {
		out = append(out, fmt.Sprintf("warmup %s → none", s.Workload.Warmup.Duration))
		s.Workload.Warmup = nil
	}
	out = append(out, shrinkCapacity(s.Capacity)...)
	out = append(out, shrinkDisturbances(s.Disturbances)...)
	if s.Timeout == nil || s.Timeout.Duration > Timeout {
		out = append(out, fmt.Sprintf("timeout → %s", Timeout))
		s.Timeout = &metav1.Duration{Duration: Timeout}
	}
	if !s.AllowSharedNodes {
		// A smoke run checks that the sample works, not its numbers.
		out = append(out, "allowSharedNodes → true (smoke runs share nodes)")
		s.AllowSharedNodes = true
	}
	changed, err := dropResources(s)
	if err != nil {
		return nil, err
	}
	return append(out, changed...), nil
}

// shrinkDisturbances keeps a disturbed run's disturbances, each acting 2 s
// into the smoke form's short measurement, for 2 s.
const (
	smokeDisturbAt       = 2 * time.Second
	smokeDisturbDuration = 2 * time.Second
)

func shrinkDisturbances(d *benchv1.DisturbancesSpec) []string {
	if d == nil {
		return nil
	}
	var out []string
	for i := range d.Schedule {
		x := &d.Schedule[i]
		if x.At == nil || x.At.Duration != smokeDisturbAt {
			out = append(out, fmt.Sprintf("disturbances.schedule[%s] at → %s", x.Name, smokeDisturbAt))
			x.At, x.Between = &metav1.Duration{Duration: smokeDisturbAt}, nil
		}
		if x.Duration != nil && x.Duration.Duration > smokeDisturbDuration {
			out = append(out, fmt.Sprintf("disturbances.schedule[%s].duration %s → %s", x.Name, x.Duration.Duration, smokeDisturbDuration))
			x.Duration.Duration = smokeDisturbDuration
		}
		x.Repetitions = nil
	}
	return out
}

// shrinkCapacity keeps a capacity run to a few levels: a ladder's first
// two, a search's first three.
const (
	smokeConfirm = 5 * time.Second
	smokeSoak    = time.Minute
)

func shrinkCapacity(c *benchv1.CapacitySpec) []string {
	if c == nil {
		return nil
	}
	var out []string
	if len(c.Levels) > workloads.SmokeSteps {
		out = append(out, fmt.Sprintf("capacity.levels %v → %v", c.Levels, c.Levels[:workloads.SmokeSteps]))
		c.Levels = c.Levels[:workloads.SmokeSteps]
	}
	if c.Search != nil && (c.MaxLevels == 0 || c.MaxLevels > 3) {
		out = append(out, fmt.Sprintf("capacity.maxLevels %d → 3", c.MaxLevels))
		c.MaxLevels = 3
	}
	if c.TimeBudget != nil {
		out = append(out, "capacity.timeBudget → none")
		c.TimeBudget = nil
	}
	if f := c.Confirm; f != nil && f.Duration != nil && f.Duration.Duration > smokeConfirm {
		out = append(out, fmt.Sprintf("capacity.confirm.duration %s → %s", f.Duration.Duration, smokeConfirm))
		f.Duration = &metav1.Duration{Duration: smokeConfirm}
	}
	// A minute: enough progress intervals for a trend at a tool's usual
	// 5-10 s progress interval.
	if k := c.Soak; k != nil && k.Duration.Duration > smokeSoak {
		out = append(out, fmt.Sprintf("capacity.soak.duration %s → %s", k.Duration.Duration, smokeSoak))
		k.Duration.Duration = smokeSoak
	}
	// A smoke target is a local server on a machine the rest of the
	// cluster keeps busy: its latency tail is the machine's (memtier's
	// p99 was 4-8 ms at 500 requests a second here), so a latency limit
	// would judge the machine; the achieved-rate, error and gain rules
	// still decide the levels.
	if len(c.Rules.Latency) > 0 {
		out = append(out, fmt.Sprintf("capacity.rules.latency → none (%d rules: a smoke target's latency is the busy machine's)", len(c.Rules.Latency)))
		c.Rules.Latency = nil
	}
	// dropResources leaves the target without limits: no figure in percent of one.
	kept := c.Rules.Metrics[:0]
	for _, m := range c.Rules.Metrics {
		// telemetry.FigureCPULimitPercent and FigureMemoryLimitPercentMax,
		// named here to keep the plugin free of the telemetry readers.
		if m.Name == "cpuLimitPercent" || m.Name == "memoryLimitPercentMax" {
			out = append(out, fmt.Sprintf("capacity.rules.metrics %s → none (a smoke target has no limits)", m.Name))
			continue
		}
		kept = append(kept, m)
	}
	c.Rules.Metrics = kept
	return out
}

// dropResources removes the CPU and memory the target's servers and the
// load generators ask for: smoke runs share a small cluster's nodes.
func dropResources(s *benchv1.BenchmarkRunSpec) ([]string, error) {
	var out []string
	if len(s.Workload.Resources.Requests)+len(s.Workload.Resources.Limits) > 0 {
		s.Workload.Resources = corev1.ResourceRequirements{}
		out = append(out, "workload.resources → none")
	}
	raw, err := json.Marshal(s.Target)
	if err != nil {
		return nil, err
	}
	var target map[string]any
	if err := json.Unmarshal(raw, &target); err != nil {
		return nil, err
	}
	for kind, v := range target {
		if m, ok := v.(map[string]any); ok {
			if _, has := m["resources"]; has {
				delete(m, "resources")
				out = append(out, "target."+kind+".resources → none")
			}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	raw, err = json.Marshal(target)
	if err != nil {
		return nil, err
	}
	var t benchv1.TargetSpec
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	s.Target = t
	return out, nil
}

// ComparisonSpec shrinks a comparison's template, the workload fields its
// variants' patches set, and its runs per variant.
func ComparisonSpec(s *benchv1.BenchmarkComparisonSpec) ([]string, error) {
	out, err := RunSpec(&s.Template)
	if err != nil {
		return nil, err
	}
	for i := range s.Variants {
		changed, err := shrinkPatch(s.Template, &s.Variants[i])
		if err != nil {
			return nil, err
		}
		out = append(out, changed...)
	}
	// A comparison that stops early keeps two rounds and looks after the
	// second (the fewest a look takes); one with a covariate three (the
	// fewest an adjusted interval takes); any other runs one.
	runs := int32(1)
	if s.Covariate != nil {
		runs = 3
	}
	if s.Sequential != nil {
		runs = max(runs, 2)
		if s.Sequential.MinRounds != 2 {
			out = append(out, fmt.Sprintf("sequential.minRounds %d → 2", max(s.Sequential.MinRounds, 3)))
			s.Sequential.MinRounds = 2
		}
	}
	switch s.RunsPerVariant {
	case runs:
	case 0:
		out = append(out, fmt.Sprintf("runsPerVariant (the default, 5) → %d", runs))
	default:
		out = append(out, fmt.Sprintf("runsPerVariant %d → %d", s.RunsPerVariant, runs))
	}
	s.RunsPerVariant = runs
	return out, nil
}

// ScheduleSpec shrinks a schedule's template; its cron gives way to one run
// when it is created.
func ScheduleSpec(s *benchv1.BenchmarkScheduleSpec) ([]string, error) {
	var out []string
	var err error
	switch {
	case s.RunTemplate != nil:
		out, err = RunSpec(&s.RunTemplate.Spec)
	case s.ComparisonTemplate != nil:
		out, err = ComparisonSpec(&s.ComparisonTemplate.Spec)
	}
	if err != nil {
		return nil, err
	}
	if s.Schedule != "" {
		out = append(out, fmt.Sprintf("schedule %q → none", s.Schedule))
		s.Schedule = ""
	}
	if !s.RunOnCreate {
		out = append(out, "runOnCreate → true (one run now)")
		s.RunOnCreate = true
	}
	return out, nil
}
