package telemetry

import (
	"slices"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// AddStageFigures gives each stage of a measurement (results' Stages: the
// parts a tool ramped through by itself) the target's CPU over it, from
// the telemetry series the result carries: the mean and the 95th
// percentile of the target's cpuCores (and of cpuLimitPercent, when the
// target has a limit) over the samples inside the stage, measured from the
// result's start; a sample, the interval ending at it, belongs to the
// stage it ends in. A stage no sample falls in gets none.
func AddStageFigures(r *results.Result) {
	if len(r.Stages) == 0 || r.StartTime == nil {
		return
	}
	for i := range r.Stages {
		st := &r.Stages[i]
		// Called again on the same result (a reconcile run twice), the
		// figures are computed again, never added twice.
		st.Metrics = slices.DeleteFunc(st.Metrics, func(m results.Metric) bool { return m.IsTelemetry() })
		from := r.StartTime.Add(time.Duration(st.FromSeconds * float64(time.Second)))
		to := r.StartTime.Add(time.Duration(st.ToSeconds * float64(time.Second)))
		for _, s := range r.Series {
			if s.Subject != string(RoleTarget) || (s.Name != FigureCPUCores && s.Name != FigureCPULimitPercent) {
				continue
			}
			var in []float64
			for _, x := range s.Samples {
				// A sample is the interval ending at it: (from, to].
				if x.Time.After(from) && !x.Time.After(to) {
					in = append(in, x.Value)
				}
			}
			if len(in) == 0 {
				continue
			}
			sum := 0.0
			for _, v := range in {
				sum += v
			}
			st.Metrics = append(st.Metrics,
				results.Metric{Name: s.Name, Operation: s.Subject, Value: sum / float64(len(in)), Unit: s.Unit, Direction: results.Neutral, Source: s.Source},
				results.Metric{Name: s.Name + "P95", Operation: s.Subject, Value: NearestRank(in, 95), Unit: s.Unit, Direction: results.Neutral, Source: s.Source})
		}
	}
}
