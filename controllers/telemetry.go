package controllers

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// serverStatistics is what the run's Jobs poll of the target's own
// statistics: nothing when the spec disables it or the tool speaks no
// protocol with a poller.
func (st *runState) serverStatistics() specs.ServerStatistics {
	t := st.run.Spec.Telemetry
	speaks := workloads.SpeaksOf(st.workload, &st.run.Spec.Workload)
	if t.ServerStatistics == benchv1.TelemetryDisabled || !speaks.Protocol.HasStatistics() {
		return specs.ServerStatistics{}
	}
	s := specs.ServerStatistics{Protocol: speaks.Protocol, Database: speaks.Database}
	if t.PollInterval != nil {
		s.Interval = t.PollInterval.Duration
	}
	if d := t.Diagnostics; d.Mode != benchv1.TelemetryDisabled {
		s.Diagnostics, s.Plans = true, d.Plans == benchv1.TelemetryEnabled
		s.WaitInterval = defaultWaitSampleInterval
		if d.WaitSampleInterval != nil {
			s.WaitInterval = d.WaitSampleInterval.Duration
		}
		if p := d.Profile; p != nil && p.Mode == benchv1.TelemetryEnabled {
			s.ProfileHz = cmp.Or(p.FrequencyHz, defaultProfileHz)
		}
	}
	return s
}

// defaultWaitSampleInterval is telemetry.diagnostics.waitSampleInterval
// when the spec leaves it out (its schema default).
const defaultWaitSampleInterval = 100 * time.Millisecond

// defaultProfileHz is telemetry.diagnostics.profile.frequencyHz when the
// spec leaves it out (its schema default).
const defaultProfileHz = 99

// restartSlack is how far past the tool's end a target container's end
// still counts as during the measurement: the tool sees a dead server
// before the kubelet reports it.
const restartSlack = 30 * time.Second

// judgeTarget reads, once a measurement has ended, what happened to the
// target's pods over its window, and marks the result: a pod restarted,
// OOM-killed or recreated during the window makes it Invalid with the pod
// and the reason; the target's CPU as a percent of its limit is recorded
// and judged against validity.maxTargetCPUPercent. A target with no pods
// here (an external endpoint) is judged by its statistics alone.
func (r *BenchmarkRunReconciler) judgeTarget(ctx context.Context, st *runState, res *results.Result, started, finished *time.Time) error {
	if res.Verdict == results.Failed || len(st.target.PodSelector) == 0 {
		judgeTargetCPU(st.run, res, 0)
		return nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(st.run.Namespace), client.MatchingLabels(st.target.PodSelector)); err != nil {
		return err
	}
	start, end := windowOf(res, started, finished)
	cut, disturbed := disturbedFrom(res)
	var limit float64
	for i := range pods.Items {
		pod := &pods.Items[i]
		if disturbed {
			// What happened to the target once a disturbance acted is
			// what the disturbance measures: its events, not a reason to
			// distrust the measurement; before it, the same as any.
			judgeDisturbedPod(res, pod, start, cut, end)
		} else {
			for _, why := range disturbances(pod, start, end) {
				res.Invalidate("target pod %s %s during the measurement", pod.Name, why)
			}
		}
		limit += podLimit(pod, corev1.ResourceCPU)
		judgeTargetMemory(st.run, res, pod.Name, podLimit(pod, corev1.ResourceMemory))
	}
	judgeTargetCPU(st.run, res, limit)
	return nil
}

// judgeTargetMemory records a target pod's peak working set as a percent
// of its memory limit (limitBytes, 0 when it has none) and judges it
// against validity.maxTargetMemoryPercent.
func judgeTargetMemory(run *benchv1.BenchmarkRun, res *results.Result, pod string, limitBytes float64) {
	subject := telemetry.Subject{Role: telemetry.RoleTarget, Name: pod}.Label()
	ws, ok := res.Get(results.Key{Name: telemetry.FigureMemoryWorkingSetMax, Operation: subject})
	if !ok || !ws.IsTelemetry() || limitBytes <= 0 {
		return
	}
	pct := 100 * ws.Value / limitBytes
	setTelemetryMetric(res, results.Metric{Name: telemetry.FigureMemoryLimitPercentMax, Operation: subject, Value: pct, Unit: "%",
		Direction: results.Neutral, Source: ws.Source})
	if maxPct := float64(run.Spec.Validity.MaxTargetMemoryPercent); maxPct > 0 && pct > maxPct && res.Verdict != results.Failed {
		res.Invalidate("target pod %s's working set reached %.1f%% of its memory limit (%s of %.0f bytes), above validity.maxTargetMemoryPercent %g",
			pod, pct, telemetry.Describe(ws), limitBytes, maxPct)
	}
}

// podLimit is the sum of a pod's containers' limits of a resource (cores,
// bytes); 0 when none has one.
func podLimit(p *corev1.Pod, name corev1.ResourceName) float64 {
	var sum float64
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[name]; ok {
			sum += q.AsApproximateFloat64()
		}
	}
	return sum
}

// windowOf is the measurement's window: the tool's own start and end when
// the runner reported them, else the container's.
func windowOf(res *results.Result, started, finished *time.Time) (time.Time, time.Time) {
	var start, end time.Time
	if started != nil {
		start = *started
	}
	if finished != nil {
		end = *finished
	}
	if res.StartTime != nil && res.EndTime != nil {
		start, end = *res.StartTime, *res.EndTime
	}
	return start, end
}

// disturbances lists what happened to a pod between start and end: a
// container that terminated (with the kubelet's reason: OOMKilled,
// Error, exit code), a pod created after the window began (recreated or
// rescheduled), a pod being deleted.
func disturbances(pod *corev1.Pod, start, end time.Time) []string {
	if start.IsZero() {
		return nil
	}
	// The API keeps these instants to the second: a kill in the window's
	// first second may read as before it.
	start = start.Truncate(time.Second)
	var out []string
	if created := pod.CreationTimestamp.Time; created.After(start) && created.Before(end.Add(restartSlack)) {
		out = append(out, fmt.Sprintf("was created at %s (recreated or rescheduled to node %s)", created.UTC().Format(time.RFC3339), orDash(pod.Spec.NodeName)))
	}
	if asked, ok := deletionAsked(pod); ok && asked.Before(end) {
		out = append(out, fmt.Sprintf("was being deleted from %s", asked.UTC().Format(time.RFC3339)))
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		for _, term := range []*corev1.ContainerStateTerminated{cs.LastTerminationState.Terminated, cs.State.Terminated} {
			if term == nil || term.FinishedAt.IsZero() {
				continue
			}
			at := term.FinishedAt.Time
			if at.Before(start) || at.After(end.Add(restartSlack)) {
				continue
			}
			out = append(out, fmt.Sprintf("had container %s end at %s (%s, exit code %d; restarts %d)",
				cs.Name, at.UTC().Format(time.RFC3339), orDash(term.Reason), term.ExitCode, cs.RestartCount))
		}
	}
	sort.Strings(out)
	return out
}

// judgeTargetCPU records the target's CPU as a percent of its limit
// (limitCores, 0 when unknown) and judges it against
// validity.maxTargetCPUPercent.
func judgeTargetCPU(run *benchv1.BenchmarkRun, res *results.Result, limitCores float64) {
	cpu, ok := telemetry.TargetCPUCores(res)
	if ok && limitCores > 0 {
		setTelemetryMetric(res, results.Metric{Name: telemetry.FigureCPULimitPercent, Operation: string(telemetry.RoleTarget),
			Value: 100 * cpu.Value / limitCores, Unit: "%", Direction: results.Neutral, Source: cpu.Source})
	}
	maxPct := float64(run.Spec.Validity.MaxTargetCPUPercent)
	if maxPct <= 0 || res.Verdict == results.Failed {
		return
	}
	pct, found := res.Get(results.Key{Name: telemetry.FigureCPULimitPercent, Operation: string(telemetry.RoleTarget)})
	of := "its limit"
	if pct.Source == telemetry.SourceHosts {
		of = "its hosts' cores"
	}
	if run.Spec.Validity.TargetCPUStatistic == benchv1.TargetCPUP95 && found && pct.IsTelemetry() {
		p95, n, ok := targetCPUP95(res, cpu, pct)
		if !ok {
			res.Warnings = append(res.Warnings, fmt.Sprintf("validity.maxTargetCPUPercent (P95) was not judged: no series of the target's CPU (%s): the mean was", telemetry.Describe(cpu)))
		} else {
			if p95 > maxPct {
				res.Invalidate("the target was saturated: the p95 of its CPU was %.1f%% of %s over %d samples (mean %.1f%%), above validity.maxTargetCPUPercent %g",
					p95, of, n, pct.Value, maxPct)
			}
			return
		}
	}
	switch {
	case found && pct.IsTelemetry() && pct.Value > maxPct:
		res.Invalidate("the target was saturated: its CPU was %.1f%% of %s (%s), above validity.maxTargetCPUPercent %g",
			pct.Value, of, telemetry.Describe(cpu), maxPct)
	case !found || !pct.IsTelemetry():
		why := "no telemetry source measured the target's CPU"
		if ok {
			why = fmt.Sprintf("the target's CPU (%s) has no limit to be a percent of", telemetry.Describe(cpu))
		}
		res.Warnings = append(res.Warnings, "validity.maxTargetCPUPercent was not judged: "+why)
	}
}

// setTelemetryMetric replaces a telemetry metric of the same key, or adds it.
func setTelemetryMetric(res *results.Result, m results.Metric) {
	for i := range res.Metrics {
		if res.Metrics[i].Key() == m.Key() && res.Metrics[i].IsTelemetry() {
			res.Metrics[i] = m
			return
		}
	}
	res.Add(m)
}

// targetCPUP95 is the 95th percentile of the target's CPU as a percent of
// what cpuLimitPercent[target] is a percent of: the series cpuCores[target]
// of the source that gave the mean, scaled by the mean's percent over its
// cores. It returns the samples it read.
func targetCPUP95(res *results.Result, cpu, pct results.Metric) (float64, int, bool) {
	if cpu.Value <= 0 || pct.Value <= 0 {
		return 0, 0, false
	}
	capacity := 100 * cpu.Value / pct.Value // cores
	for _, s := range res.Series {
		if s.Name == telemetry.FigureCPUCores && s.Subject == string(telemetry.RoleTarget) && s.Source == cpu.Source && len(s.Samples) > 0 {
			return 100 * telemetry.NearestRank(telemetry.SampleValues(s.Samples), 95) / capacity, len(s.Samples), true
		}
	}
	return 0, 0, false
}

// judgeRules applies spec.validity.rules to the measurement's series.
func judgeRules(run *benchv1.BenchmarkRun, res *results.Result) {
	if res.Verdict == results.Failed {
		return
	}
	rules := make([]telemetry.Rule, 0, len(run.Spec.Validity.Rules))
	for _, r := range run.Spec.Validity.Rules {
		rule := telemetry.Rule{Name: r.Name, Series: r.Series, Subject: r.Subject, Condition: string(r.Condition), Threshold: r.Threshold,
			Warn: r.Action == benchv1.RuleWarn}
		if r.ForDuration != nil {
			rule.For = r.ForDuration.Duration
		}
		if r.Percentile != nil {
			rule.Percentile = float64(*r.Percentile)
		}
		rules = append(rules, rule)
	}
	telemetry.JudgeRules(res, rules)
}

// deletionAsked is when a pod's deletion was asked for: its
// deletionTimestamp is the end of its grace period, not the request (a
// graceful deletion's is 30 s after it by default).
func deletionAsked(pod *corev1.Pod) (time.Time, bool) {
	if pod.DeletionTimestamp == nil {
		return time.Time{}, false
	}
	at := pod.DeletionTimestamp.Time
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		at = at.Add(-time.Duration(*g) * time.Second)
	}
	return at, true
}

// disturbedFrom is when a disturbed measurement's first disturbance acted
// (took effect, else was requested, else was planned).
func disturbedFrom(res *results.Result) (time.Time, bool) {
	var cut time.Time
	for _, d := range res.Disturbances {
		at := d.TookEffect
		if d.Requested != nil && (at == nil || d.Requested.Before(*at)) {
			at = d.Requested
		}
		if at == nil && res.StartTime != nil {
			t := res.StartTime.Add(time.Duration(d.OffsetSeconds * float64(time.Second)))
			at = &t
		}
		if at != nil && (cut.IsZero() || at.Before(cut)) {
			cut = *at
		}
	}
	return cut, !cut.IsZero()
}

// judgeDisturbedPod judges a target pod of a disturbed measurement: what
// happened to it before cut (the steady window) makes the measurement
// Invalid; what happened from cut to the end (and the slack after it) is
// an event of the first disturbance.
func judgeDisturbedPod(res *results.Result, pod *corev1.Pod, start, cut, end time.Time) {
	type happened struct {
		at  time.Time
		why string
	}
	var all []happened
	if c := pod.CreationTimestamp.Time; c.After(start.Truncate(time.Second)) {
		all = append(all, happened{c, fmt.Sprintf("created (recreated or rescheduled to node %s)", orDash(pod.Spec.NodeName))})
	}
	if asked, ok := deletionAsked(pod); ok {
		all = append(all, happened{asked, "being deleted"})
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		for _, term := range []*corev1.ContainerStateTerminated{cs.LastTerminationState.Terminated, cs.State.Terminated} {
			if term != nil && !term.FinishedAt.IsZero() && !term.FinishedAt.Time.Before(start.Truncate(time.Second)) {
				all = append(all, happened{term.FinishedAt.Time, fmt.Sprintf("container %s ended (%s, exit code %d; restarts %d)", cs.Name, orDash(term.Reason), term.ExitCode, cs.RestartCount)})
			}
		}
	}
	for _, h := range all {
		switch {
		case h.at.Before(cut.Truncate(time.Second)):
			res.Invalidate("target pod %s %s at %s, before the disturbance, during the measurement", pod.Name, h.why, h.at.UTC().Format(time.RFC3339))
		case h.at.Before(end.Add(restartSlack)) && len(res.Disturbances) > 0:
			d := latestBefore(res.Disturbances, h.at)
			d.Events = append(d.Events, results.Event{Time: h.at.UTC(), Subject: "pod/" + pod.Name, Message: "pod " + pod.Name + " " + h.why})
		}
	}
}

// latestBefore is the disturbance that acted last before at (the first
// when none did).
func latestBefore(ds []results.Disturbance, at time.Time) *results.Disturbance {
	best := &ds[0]
	var bestAt time.Time
	for i := range ds {
		t := ds[i].TookEffect
		if t == nil {
			t = ds[i].Requested
		}
		if t != nil && !t.After(at.Add(time.Second)) && t.After(bestAt) {
			best, bestAt = &ds[i], *t
		}
	}
	return best
}
