package compare

import (
	"bytes"
	"strings"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// withTimeline gives every measurement of the runs a throughput series of
// 60 one-second points at the run's throughput; stallAt > 0 stops it for
// 3 s from that second.
func withTimeline(runs []Run, stallAt int) []Run {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := range runs {
		r := &runs[i]
		for _, st := range r.Steps {
			for _, rep := range st.Repetitions {
				res := results.New("pgbench")
				res.Primary = results.Key{Name: "transactionsPerSecond"}
				res.StartTime = &start
				tps := rep.Metrics[0].Value
				for s := 1; s <= 60; s++ {
					v := tps
					if stallAt > 0 && s > stallAt && s <= stallAt+3 {
						v = 0
					}
					res.TimeSeries = append(res.TimeSeries, results.Point{ElapsedSeconds: float64(s), Values: map[string]float64{"transactionsPerSecond": v}})
				}
				for _, m := range rep.Metrics {
					res.Add(results.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Direction: m.Direction})
				}
				r.Measurements = append(r.Measurements, Measurement{Step: st.Name, Repetition: rep.Index, Result: res})
			}
		}
	}
	return runs
}

// stalledSides are sides() with a throughput series in every measurement,
// and an invalid baseline run that stalled for 3 s from its 20th second.
func stalledSides() (Side, Side) {
	base, cand := sides()
	base.Runs = withTimeline(base.Runs[:5], 0)
	bad := run("v3-stalled", "standard-v3", map[string]float64{"clients=20": 25000, "clients=40": 30000}, benchv1.VerdictInvalid)
	base.Runs = append(base.Runs, withTimeline([]Run{bad}, 20)...)
	cand.Runs = withTimeline(cand.Runs, 0)
	return base, cand
}

// The report draws measurements over time: per variant the first valid one
// and the invalid one, whose stall is marked where it happened.
func TestTimelinesShowWhereAStallWas(t *testing.T) {
	base, cand := stalledSides()
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Timelines) != 3 {
		t.Fatalf("%d timelines, want the first valid measurement of each variant and the invalid one: %+v", len(rep.Timelines), rep.Timelines)
	}
	var stalled *Timeline
	for i, tl := range rep.Timelines {
		if !tl.Valid {
			stalled = &rep.Timelines[i]
		} else if len(tl.Stalls) > 0 {
			t.Errorf("a steady measurement with stalls: %+v", tl.Stalls)
		}
	}
	if stalled == nil || stalled.Run != "v3-stalled" || len(stalled.Stalls) != 1 || stalled.Stalls[0].From != 20 || stalled.Stalls[0].To != 23 {
		t.Fatalf("the invalid measurement's stall: %+v", stalled)
	}
	var b bytes.Buffer
	if err := RenderHTML(&b, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Count(page, "<polyline") != 3 || strings.Count(page, `class="stall"`) != 1 || !strings.Contains(page, `stroke-dasharray="6 4"`) ||
		!strings.Contains(page, "stall from 20 s to 23 s") {
		t.Errorf("the timeline chart: %d lines, %d stall bands", strings.Count(page, "<polyline"), strings.Count(page, `class="stall"`))
	}
}

func TestDownsampleKeepsTheMean(t *testing.T) {
	var pts [][2]float64
	for i := 0; i < 86400; i++ {
		pts = append(pts, [2]float64{float64(i), float64(i % 10)})
	}
	out := downsample(pts)
	if len(out) > maxTimelinePoints || len(out) < maxTimelinePoints-1 {
		t.Fatalf("%d points", len(out))
	}
	sum := 0.0
	for _, p := range out {
		sum += p[1]
	}
	if mean := sum / float64(len(out)); mean < 4.49 || mean > 4.51 {
		t.Errorf("mean of the buckets %g, want 4.5", mean)
	}
}

// disturbed gives every measurement a disturbance that took effect at
// effect seconds, a new primary 2 s later, and its card's recovery figure;
// the throughput is 0 for 3 s after it.
func disturbed(runs []Run, effect, recovery float64) []Run {
	for i := range runs {
		for j := range runs[i].Measurements {
			res := runs[i].Measurements[j].Result
			took := res.StartTime.Add(time.Duration(effect * float64(time.Second)))
			primary := took.Add(2 * time.Second)
			res.Disturbances = []results.Disturbance{{Name: "lose-primary", Kind: "memberLoss", TookEffect: &took, NewPrimaryTime: &primary,
				Events: []results.Event{{Time: took, Subject: "pod/pg-1", Message: "pod pg-1 gone"}, {Time: primary, Subject: "pod/pg-2", Message: "new primary pg-2"}}}}
			for k := range res.TimeSeries {
				if t := res.TimeSeries[k].ElapsedSeconds; t > effect && t <= effect+3 {
					res.TimeSeries[k].Values["transactionsPerSecond"] = 0
				}
			}
			res.Add(results.Metric{Name: "recoverySeconds", Operation: "lose-primary", Value: recovery + float64(j%3)*0.1, Unit: "s",
				Direction: results.LowerIsBetter, Source: SourceDisturbance})
		}
	}
	return runs
}

// A comparison of disturbed runs draws both variants over time aligned on
// the moment their disturbance took effect (at 20 s in one, 30 s in the
// other), the windows shaded and the target's events marked, and judges
// the cards' figures in a family of their own.
func TestDisturbedTimelinesAreAlignedAndCardsCompared(t *testing.T) {
	base, cand := sides()
	base.Runs = disturbed(withTimeline(base.Runs[:5], 0), 20, 4)
	cand.Runs = disturbed(withTimeline(cand.Runs, 0), 30, 9)
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range rep.Timelines {
		if tl.Aligned == nil || len(tl.Disturbances) != 1 || len(tl.Disturbances[0].Events) != 2 {
			t.Fatalf("timeline without its disturbance: %+v", tl)
		}
	}
	var card *Row
	for i, row := range rep.Rows {
		if row.Metric == "recoverySeconds" && row.Operation == "lose-primary" {
			card = &rep.Rows[i]
		}
	}
	if card == nil || card.Described() || card.Verdict == "" {
		t.Fatalf("the card's recovery is not judged: %+v", card)
	}
	if card.Baseline.Median > 5 || card.Candidate.Median < 9 {
		t.Errorf("recovery medians %v and %v", card.Baseline.Median, card.Candidate.Median)
	}
	var b bytes.Buffer
	if err := RenderHTML(&b, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`class="disturb"`, `class="event"`, "aligned on the disturbance taking effect", "new primary pg-2", "disturbance cards"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// Aligned: the axis starts 29 s before 0 (the later one's first
	// point, 1 s into it, 30 s before its effect).
	if !strings.Contains(page, ">-29 s<") {
		t.Error("the time axis does not start 29 s before the disturbance")
	}
}
