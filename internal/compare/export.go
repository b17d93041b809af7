package compare

import (
	"encoding/csv"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteMetricsCSV writes every metric of every measurement of the runs, one
// row each: from the full results where the runs have them, else the
// headline metrics of their status.
func WriteMetricsCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "step", "repetition", "verdict", "node", "metric", "operation", "value", "unit", "direction", "source"})
	for _, r := range runs {
		for _, st := range r.Steps {
			for _, rep := range st.Repetitions {
				metrics, _ := r.metrics(st.Name, rep)
				for _, m := range metrics {
					_ = cw.Write([]string{r.Name, st.Name, strconv.Itoa(int(rep.Index)), string(rep.Verdict), rep.Node,
						m.Name, m.Operation, strconv.FormatFloat(m.Value, 'g', -1, 64), m.Unit, string(m.Direction), m.Source})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSeriesCSV writes the time series of every measurement of the runs
// that carry their full results, one row per interval and value: the
// tool's series (seconds from the measurement's start; the value's key is
// name or name[operation]) and the telemetry series (absolute instants,
// with seconds from the measurement's start when it is known).
func WriteSeriesCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "step", "repetition", "seconds", "time", "series", "operation", "value", "unit", "source"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range runs {
		for _, m := range r.Measurements {
			res := m.Result
			if res == nil {
				continue
			}
			rep := strconv.Itoa(int(m.Repetition))
			for _, p := range res.TimeSeries {
				keys := make([]string, 0, len(p.Values))
				for k := range p.Values {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				at := ""
				if res.StartTime != nil {
					at = res.StartTime.Add(time.Duration(p.ElapsedSeconds * float64(time.Second))).UTC().Format(time.RFC3339Nano)
				}
				for _, k := range keys {
					name, op := splitKey(k)
					_ = cw.Write([]string{r.Name, m.Step, rep, f(p.ElapsedSeconds), at, name, op, f(p.Values[k]), "", res.Tool})
				}
			}
			for _, s := range res.Series {
				for _, smp := range s.Samples {
					secs := ""
					if res.StartTime != nil {
						secs = f(smp.Time.Sub(*res.StartTime).Seconds())
					}
					_ = cw.Write([]string{r.Name, m.Step, rep, secs, smp.Time.UTC().Format(time.RFC3339Nano), s.Name, s.Subject, f(smp.Value), s.Unit, s.Source})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// splitKey parses "name[operation]" into its parts.
func splitKey(k string) (string, string) {
	if i := strings.IndexByte(k, '['); i > 0 && strings.HasSuffix(k, "]") {
		return k[:i], k[i+1 : len(k)-1]
	}
	return k, ""
}

// WriteStagesCSV writes the stages of every measurement that ramped
// through them by itself (results' Stages: k6's --stage), one row per
// stage and metric, side by side as if each stage were a step.
func WriteStagesCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "step", "repetition", "stage", "fromSeconds", "toSeconds", "metric", "operation", "value", "unit", "source"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range runs {
		for _, m := range r.Measurements {
			if m.Result == nil {
				continue
			}
			for _, st := range m.Result.Stages {
				for _, x := range st.Metrics {
					_ = cw.Write([]string{r.Name, m.Step, strconv.Itoa(int(m.Repetition)), st.Name, f(st.FromSeconds), f(st.ToSeconds),
						x.Name, x.Operation, f(x.Value), x.Unit, x.Source})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
