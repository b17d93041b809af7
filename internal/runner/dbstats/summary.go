package dbstats

import (
	"fmt"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Subject of every figure: the server as its own statistics describe it.
var Subject = telemetry.Subject{Role: telemetry.RoleServer}

// RestartWarning starts the warning for each poll interval in which the
// server's counters started again (a restart or a statistics reset), so a
// validity rule can find it; the figure serverRestarts counts them.
const RestartWarning = "server statistics restarted"

// Observation is one successful poll: its reading, the instant it stands
// for (the middle of the round trip) and how long the round trip took.
type Observation struct {
	Time time.Time
	Took time.Duration
	Reading
}

// Summarize turns a window's observations (in time order) into figures
// and series under the defs; warnings (failed polls) are carried over.
// Rates are over the span of the first and last observation, which is the
// window up to the round trip of a poll.
func Summarize(source string, defs []Def, obs []Observation, warnings []string) *telemetry.Report {
	rep := &telemetry.Report{Source: source, Figures: []telemetry.Figure{}, Warnings: warnings}
	if len(obs) == 0 {
		rep.Warnings = append(rep.Warnings, "no poll of the server's statistics succeeded: no figures")
		return rep
	}
	if len(obs) < 2 {
		rep.Warnings = append(rep.Warnings, "only one poll of the server's statistics succeeded: gauges only, no rates")
	}
	deltas, restarts := IntervalDeltas(obs)
	for _, at := range restarts {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s between %s and %s (a restart or a reset): counters over that interval count from the restart only",
			RestartWarning, obs[at-1].Time.UTC().Format(time.RFC3339), obs[at].Time.UTC().Format(time.RFC3339)))
	}
	for _, d := range defs {
		if d.Kind == Gauge {
			addGauge(rep, d, obs)
		} else if len(obs) >= 2 {
			addCounter(rep, d, obs, deltas)
		}
	}
	if len(obs) >= 2 {
		rep.Figures = append(rep.Figures, figure("serverRestarts", float64(len(restarts)), "count", results.LowerIsBetter),
			figure("windowSeconds", obs[len(obs)-1].Time.Sub(obs[0].Time).Seconds(), "s", results.Neutral))
	}
	var took time.Duration
	for _, o := range obs {
		took += o.Took
	}
	rep.Figures = append(rep.Figures, figure("pollMillisMean", float64(took.Microseconds())/1000/float64(len(obs)), "ms", results.Neutral))
	return rep
}

// IntervalDeltas returns each counter's increase over each interval
// (deltas[i] is from obs[i-1] to obs[i]; deltas[0] is empty) and the
// intervals in which the counters started again. Over such an interval a
// counter's increase is its new value: what it counted since the restart.
// A counter with an epoch of its own (Reading.Epochs) started again when
// that epoch changed, not the reading's.
func IntervalDeltas(obs []Observation) ([]map[string]float64, []int) {
	deltas := make([]map[string]float64, len(obs))
	var restarts []int
	for i := 1; i < len(obs); i++ {
		prev, cur := obs[i-1], obs[i]
		newEpoch := func(k string) bool {
			own, ok := cur.Epochs[k]
			if !ok {
				return prev.Epoch != cur.Epoch
			}
			was, ok := prev.Epochs[k]
			return !ok || was != own
		}
		restarted := prev.Epoch != cur.Epoch
		for k, v := range cur.Counters {
			if p, ok := prev.Counters[k]; ok && (v < p || newEpoch(k)) {
				restarted = true
			}
		}
		deltas[i] = map[string]float64{}
		for k, v := range cur.Counters {
			p, ok := prev.Counters[k]
			switch {
			case !ok:
				continue // not read at the previous poll: no increase known
			case restarted && (v < p || newEpoch(k)):
				deltas[i][k] = v
			default:
				deltas[i][k] = v - p
			}
		}
		if restarted {
			restarts = append(restarts, i)
		}
	}
	return deltas, restarts
}

// increase is a def's counter's increase over interval i, less the
// poller's own share.
func increase(d Def, key string, delta map[string]float64) (float64, bool) {
	v, ok := delta[key]
	if !ok {
		return 0, false
	}
	return max(v-d.OwnPerPoll, 0), true
}

func addCounter(rep *telemetry.Report, d Def, obs []Observation, deltas []map[string]float64) {
	scale := d.Scale
	if scale == 0 {
		scale = 1
	}
	var total, other float64
	seen := false
	series := telemetry.Series{Name: d.Name, Subject: Subject.Label(), Unit: d.Unit}
	for i := 1; i < len(obs); i++ {
		v, ok := increase(d, d.Key, deltas[i])
		if !ok {
			continue
		}
		seen = true
		total += v
		if d.Kind == Percent {
			o, _ := increase(Def{}, d.Other, deltas[i])
			other += o
			if v+o > 0 {
				series.Samples = append(series.Samples, telemetry.Sample{Time: obs[i].Time, Value: 100 * v / (v + o)})
			}
			continue
		}
		if secs := obs[i].Time.Sub(obs[i-1].Time).Seconds(); secs > 0 {
			series.Samples = append(series.Samples, telemetry.Sample{Time: obs[i].Time, Value: v * scale / secs})
		}
	}
	if !seen {
		return
	}
	span := obs[len(obs)-1].Time.Sub(obs[0].Time).Seconds()
	switch d.Kind {
	case PerSecond:
		if span <= 0 {
			return
		}
		rep.Figures = append(rep.Figures, figure(d.Name, total*scale/span, d.Unit, d.Direction))
		rep.Series = append(rep.Series, series)
	case Count:
		rep.Figures = append(rep.Figures, figure(d.Name, total, d.Unit, d.Direction))
	case Percent:
		if total+other > 0 { // nothing was read: no ratio to give
			rep.Figures = append(rep.Figures, figure(d.Name, 100*total/(total+other), d.Unit, d.Direction))
			rep.Series = append(rep.Series, series)
		}
	}
}

func addGauge(rep *telemetry.Report, d Def, obs []Observation) {
	series := telemetry.Series{Name: d.Name, Subject: Subject.Label(), Unit: d.Unit}
	var sum, peak float64
	for _, o := range obs {
		v, ok := o.Gauges[d.Key]
		if !ok {
			continue
		}
		if len(series.Samples) == 0 || v > peak {
			peak = v
		}
		sum += v
		series.Samples = append(series.Samples, telemetry.Sample{Time: o.Time, Value: v})
	}
	if len(series.Samples) == 0 {
		return
	}
	rep.Figures = append(rep.Figures,
		figure(d.Name+"Mean", sum/float64(len(series.Samples)), d.Unit, d.Direction),
		figure(d.Name+"Max", peak, d.Unit, d.Direction))
	rep.Series = append(rep.Series, series)
}

func figure(name string, v float64, unit string, dir results.Direction) telemetry.Figure {
	return telemetry.Figure{Name: name, Subject: Subject.Label(), Value: v, Unit: unit, Direction: dir}
}
