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
