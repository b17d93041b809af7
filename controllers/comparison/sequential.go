package comparison

import (
	"context"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// defaultMinRounds is spec.sequential.minRounds' default (the API
// server's), for a spec that never met it.
const defaultMinRounds = 3

// sequentialDesign is the design a sequential comparison's reports judge
// their headlines by, each candidate given an equal share of alpha; nil
// for a comparison that does not stop early. planned are the runs the
// reports see: their last round is how many ran.
func sequentialDesign(cmp *benchv1.BenchmarkComparison, planned []plannedRun) *stats.SequentialDesign {
	sq := cmp.Spec.Sequential
	if sq == nil {
		return nil
	}
	crit := compare.OptionsFor(cmp.Spec.Criteria).Criteria.WithDefaults()
	d := &stats.SequentialDesign{Alpha: crit.Alpha / float64(max(len(candidates(cmp)), 1)), MinRounds: defaultMinRounds,
		MaxRounds: int(max(cmp.Spec.RunsPerVariant, 1)), Spending: stats.SpendingOBrienFleming, MinEffectPercent: crit.MinEffectPercent}
	if sq.MinRounds > 0 {
		d.MinRounds = int(sq.MinRounds)
	}
	if sq.Spending == benchv1.SpendingPocock {
		d.Spending = stats.SpendingPocock
	}
	if sq.TargetEffectPercent != nil {
		d.TargetEffectPercent = float64(*sq.TargetEffectPercent)
	}
	for _, p := range planned {
		d.Ran = max(d.Ran, int(p.index))
	}
	return d
}

// sequentialLook decides how many rounds a sequential comparison runs and
// returns the planned runs cut to them. A stop its status records stands
// (a rejection made later compares those rounds again, it does not run
// more). Otherwise, once every run of the rounds so far has ended and the
// next round has none yet, it looks at them: the same runs give the same
// look, so a second pass, a refused status write or a restart of the
// manager decide alike, and a round is never run twice (its runs have
// fixed names).
func (r *Reconciler) sequentialLook(ctx context.Context, cmp *benchv1.BenchmarkComparison, existing map[string]*benchv1.BenchmarkRun,
	planned []plannedRun, pairs map[string]map[string]string) []plannedRun {
	if st := cmp.Status.Sequential; st != nil && st.Decision != benchv1.SequentialContinue {
		return roundsUpTo(planned, st.Rounds)
	}
	ended := endedRounds(planned, existing)
	if first := int32(sequentialDesign(cmp, nil).MinRounds); ended < min(first, cmp.Spec.RunsPerVariant) || roundStarted(planned, existing, ended+1) {
		return planned
	}
	looked := roundsUpTo(planned, ended)
	reports := r.buildReports(ctx, cmp, existing, looked, pairs)
	if reports == nil {
		return planned // failed, and said why
	}
	st := &benchv1.SequentialStatus{Rounds: ended, MaxRounds: cmp.Spec.RunsPerVariant, Decision: benchv1.SequentialContinue}
	var decisions []stats.SequentialDecision
	var reasons []string
	fixedRounds, fixedMeasurements := 0, 0
	for _, rep := range reports {
		decisions = append(decisions, rep.SequentialDecision())
		reasons = append(reasons, rep.Candidate+": "+rep.SequentialLine())
		fr, fm := rep.FixedDesign()
		fixedRounds, fixedMeasurements = compare.LargerSize(fixedRounds, fr), compare.LargerSize(fixedMeasurements, fm)
	}
	st.Decision = benchv1.SequentialDecision(compare.CombineDecisions(decisions...))
	st.Reason = status.Truncate(strings.Join(reasons, "; "), 1024)
	if fixedRounds != 0 {
		st.FixedDesignRounds = ptr.To(int32(fixedRounds))
	}
	if fixedMeasurements != 0 {
		st.FixedDesignMeasurementsPerVariant = ptr.To(int32(fixedMeasurements))
	}
	cmp.Status.Sequential = st
	if st.Decision == benchv1.SequentialContinue {
		return planned
	}
	if ended < cmp.Spec.RunsPerVariant {
		log.FromContext(ctx).Info("Stopped early", "rounds", ended, "of", cmp.Spec.RunsPerVariant, "decision", st.Decision)
	}
	return looked
}

// roundsUpTo are the planned runs of rounds 1 … n.
func roundsUpTo(planned []plannedRun, n int32) []plannedRun {
	var out []plannedRun
	for _, p := range planned {
		if p.index <= n {
			out = append(out, p)
		}
	}
	return out
}

// endedRounds is the number of rounds from the first whose every run has
// ended.
func endedRounds(planned []plannedRun, existing map[string]*benchv1.BenchmarkRun) int32 {
	ended := map[int32]bool{}
	for _, p := range planned {
		run := existing[p.name]
		if _, seen := ended[p.index]; !seen {
			ended[p.index] = true
		}
		ended[p.index] = ended[p.index] && run != nil && run.Status.Phase.Terminal()
	}
	n := int32(0)
	for ended[n+1] {
		n++
	}
	return n
}

// roundStarted says whether a run of round n exists.
func roundStarted(planned []plannedRun, existing map[string]*benchv1.BenchmarkRun, n int32) bool {
	for _, p := range planned {
		if p.index == n && existing[p.name] != nil {
			return true
		}
	}
	return false
}
