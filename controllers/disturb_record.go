package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/disturb"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// measuringNow says whether u is the measurement status.measuring names:
// its Job exists and goes on.
func measuringNow(run *benchv1.BenchmarkRun, u measurement) bool {
	m := run.Status.Measuring
	return m != nil && m.Job == specs.MeasureJobName(run, u.step, u.rep) && m.Repetition == u.rep
}

// disturbances acts on a disturbed measurement's disturbances while its
// load generators run (out nil), and once they ended removes what is left
// of them: the measurement is recorded only when nothing of its
// disturbances remains. look is when to look again (zero: nothing pending).
func (r *BenchmarkRunReconciler) disturbances(ctx context.Context, st *runState, job *batchv1.Job, u measurement, out *outcome) (look time.Duration, _ error) {
	if out == nil {
		return r.disturb(ctx, st, job, u)
	}
	done, err := r.undisturb(ctx, st, job)
	if err != nil || done {
		return 0, err
	}
	return disturbLook, nil
}

// addDisturbances puts what the operator did into the result beside what
// the runner did (its SQL loads and write ledgers), computes each
// disturbance's card from the time series and adds its figures as
// metrics; status.disturbing is cleared, the result keeps it.
func addDisturbances(run *benchv1.BenchmarkRun, job *batchv1.Job, res *results.Result) {
	for _, d := range readDisturbRecords(job) {
		res.Disturbances = mergeDisturbance(res.Disturbances, fromRecord(d))
	}
	run.Status.Disturbing = nil
	gaveUp := res.Verdict == results.Failed
	warmup := time.Duration(0)
	if w := run.Spec.Workload.Warmup; w != nil {
		warmup = w.Duration
	}
	for i := range res.Disturbances {
		d := &res.Disturbances[i]
		if d.Refused || d.TookEffect == nil && d.Requested == nil {
			// Not the measurement that was asked for: kept, not trusted.
			res.Invalidate("disturbance %s (%s) did not act: %s", d.Name, d.Kind, d.Message)
			continue
		}
		card, err := disturb.Compute(res, cardWindow(*d, gaveUp), warmup)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("disturbance %s: no card: %v", d.Name, err))
			continue
		}
		for _, w := range card.Warnings {
			res.Warnings = append(res.Warnings, fmt.Sprintf("disturbance %s: %s", d.Name, w))
		}
		res.Metrics = append(res.Metrics, card.Metrics()...)
		res.Metrics = append(res.Metrics, disturb.NeighbourMetrics(d.Name, d.Neighbour)...)
	}
}

// cardWindow is the card's view of a disturbance.
func cardWindow(d results.Disturbance, gaveUp bool) disturb.Window {
	w := disturb.Window{Name: d.Name, Kind: d.Kind, ToolGaveUp: gaveUp, Errors: d.Errors}
	at := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	w.Requested, w.TookEffect, w.Ended = at(d.Requested), at(d.TookEffect), at(d.Ended)
	w.NewPrimary, w.FullRedundancy = at(d.NewPrimaryTime), at(d.FullRedundancy)
	if l := d.Ledger; l != nil {
		w.LedgerAcknowledged, w.LedgerLost = l.Acknowledged, l.MissingCount
	}
	return w
}

// fromRecord is an operator's record as the result keeps it, with the
// target's events it observed.
func fromRecord(d disturbRecord) results.Disturbance {
	t := func(m *metav1.MicroTime) *time.Time {
		if m == nil {
			return nil
		}
		v := m.UTC()
		return &v
	}
	out := results.Disturbance{Name: d.Name, Kind: d.Kind, OffsetSeconds: d.Offset.Seconds(), Requested: t(d.RequestedTime),
		TookEffect: t(d.TookEffectTime), Ended: t(d.EndedTime), Removed: t(d.RemovedTime), Member: d.Member, Node: d.Node,
		NewPrimary: d.NewPrimary, NewPrimaryTime: t(d.NewPrimaryTime), FullRedundancy: t(d.FullRedundancyTime),
		Message: d.Message, Refused: d.Refused}
	if d.Report != "" {
		var rep map[string]float64
		if json.Unmarshal([]byte(d.Report), &rep) == nil {
			out.Neighbour = rep
		}
	}
	event := func(at *time.Time, subject, format string, args ...any) {
		if at != nil {
			out.Events = append(out.Events, results.Event{Time: *at, Subject: subject, Message: fmt.Sprintf(format, args...)})
		}
	}
	switch d.Kind {
	case specs.DisturbMemberLoss:
		if d.Refused {
			event(out.Requested, "pod/"+d.Member, "refused: %s", d.Message)
		} else {
			event(out.Requested, "pod/"+d.Member, "%s requested", d.Message)
		}
		event(out.TookEffect, "pod/"+d.Member, "pod %s gone (or no longer primary)", d.Member)
		event(out.NewPrimaryTime, "pod/"+d.NewPrimary, "new primary %s", d.NewPrimary)
		event(out.FullRedundancy, "target", "the target reports every instance ready again")
		event(t(d.CordonedTime), "node/"+d.Node, "node %s cordoned", d.Node)
		event(t(d.UncordonedTime), "node/"+d.Node, "node %s uncordoned", d.Node)
		for i, c := range d.Endpoints {
			if i == 0 {
				continue // as they were when first looked at: no change
			}
			ready := "none ready"
			if len(c.Ready) > 0 {
				ready = "ready: " + strings.Join(c.Ready, ", ")
			}
			event(t(&c.Time), "service/"+d.Service, "Service %s endpoints switched (%s)", d.Service, ready)
		}
		for _, n := range d.NotReady {
			at := n.Time.UTC()
			event(&at, "node/"+n.Node, "node %s not ready (%s)", n.Node, orDash(n.Reason))
		}
	case specs.DisturbNoisyNeighbour:
		event(out.TookEffect, "pod/"+d.Object, "stress pod %s running on node %s", d.Object, d.Node)
		event(out.Ended, "pod/"+d.Object, "stress pod %s deleted", d.Object)
	}
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].Time.Before(out.Events[j].Time) })
	return out
}

// mergeDisturbance adds d to list, or fills in the entry of its name (the
// runner's record of a member loss: its ledger) with the operator's
// instants.
func mergeDisturbance(list []results.Disturbance, d results.Disturbance) []results.Disturbance {
	i := slices.IndexFunc(list, func(x results.Disturbance) bool { return x.Name == d.Name })
	if i < 0 {
		return append(list, d)
	}
	have := &list[i]
	ledger, sql, errs := have.Ledger, have.SQL, have.Errors
	*have = d
	have.Ledger, have.SQL, have.Errors = ledger, sql, errs
	return list
}
