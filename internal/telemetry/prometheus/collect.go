package prometheus

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// spec is one quantity: PromQL giving one value per subject (and part, such
// as a core or a device) over a range, and how its figures are named.
type spec struct {
	// base is the figure's name, unit in it; name, when set, derives the
	// name from the result's labels (per core, per device).
	base string
	name func(model.Metric) string
	unit string
	dir  results.Direction
	// expr over the window's range, evaluated at the window's end: the
	// window's figure.
	expr func(rng string) string
	// series, when set, is sampled at every step over the rate range: a
	// Series named seriesBase (default: the figure's name, per core or
	// device when name derives it) per subject.
	series     func(rng string) string
	seriesBase string
	// p95 adds <base>P95 from the series' samples, max <base>Max.
	p95, max bool
	// sumTargets adds the figure (and series) summed over the target pods,
	// as Subject{Role: target}.
	sumTargets bool
	// everySubject warns naming each subject the query found nothing for:
	// set on the one quantity every pod or node has (CPU).
	everySubject bool
}

// scope is what a set of specs is about: the subjects asked for, and which
// of them a result's labels name.
type scope struct {
	subjects []telemetry.Subject
	of       func(model.Metric) (telemetry.Subject, bool)
}

var targetSum = telemetry.Subject{Role: telemetry.RoleTarget}

func (s spec) figureName(m model.Metric) string {
	if s.name != nil {
		return s.name(m)
	}
	return s.base
}

// collect evaluates every spec over the window into the report.
func (c *collection) collect(ctx context.Context, specs []spec, sc scope) error {
	for _, s := range specs {
		if err := c.windowFigures(ctx, s, sc); err != nil {
			return err
		}
		if s.series == nil {
			continue
		}
		if err := c.seriesFigures(ctx, s, sc); err != nil {
			return err
		}
	}
	return nil
}

func (c *collection) windowFigures(ctx context.Context, s spec, sc scope) error {
	query := s.expr(c.windowRange())
	vec, err := c.instant(ctx, query)
	if err != nil {
		return err
	}
	var figures []telemetry.Figure
	sums := map[string]float64{}
	found := map[telemetry.Subject]bool{}
	for _, sample := range vec {
		subject, ok := sc.of(sample.Metric)
		v := float64(sample.Value)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		name := s.figureName(sample.Metric)
		found[subject] = true
		figures = append(figures, c.figure(s, name, subject, v))
		if s.sumTargets && subject.Role == telemetry.RoleTarget {
			sums[name] += v
		}
	}
	if len(figures) == 0 {
		c.warn("no data for %s: %s", s.base, query)
		return nil
	}
	if s.everySubject {
		for _, subject := range sc.subjects {
			if !found[subject] {
				c.warn("no data for %s of %s: %s", s.base, subject.Label(), query)
			}
		}
	}
	for name, v := range sums {
		figures = append(figures, c.figure(s, name, targetSum, v))
	}
	c.addFigures(figures)
	return nil
}

func (c *collection) figure(s spec, name string, subject telemetry.Subject, v float64) telemetry.Figure {
	return telemetry.Figure{Name: name, Subject: subject.Label(), Value: v, Unit: s.unit, Direction: s.dir}
}

// addFigures appends in a stable order: Prometheus does not order results.
func (c *collection) addFigures(figures []telemetry.Figure) {
	sort.Slice(figures, func(i, j int) bool {
		if figures[i].Subject != figures[j].Subject {
			return figures[i].Subject < figures[j].Subject
		}
		return figures[i].Name < figures[j].Name
	})
	c.report.Figures = append(c.report.Figures, figures...)
}

func (c *collection) seriesFigures(ctx context.Context, s spec, sc scope) error {
	query := s.series(promDuration(c.src.cfg.RateRange))
	matrix, err := c.rangeQuery(ctx, query)
	if err != nil {
		return err
	}
	name := s.seriesBase
	if name == "" {
		name = s.base
	}
	var all []telemetry.Series
	var targets [][]telemetry.Sample
	for _, stream := range matrix {
		subject, ok := sc.of(stream.Metric)
		if !ok || len(stream.Values) == 0 {
			continue
		}
		samples := toSamples(stream.Values)
		named := name
		if s.name != nil && s.seriesBase == "" {
			named = s.name(stream.Metric) // one series per core or device
		}
		all = append(all, telemetry.Series{Name: named, Subject: subject.Label(), Unit: s.unit, Samples: samples})
		if s.sumTargets && subject.Role == telemetry.RoleTarget {
			targets = append(targets, samples)
		}
	}
	if len(all) == 0 {
		c.warn("no samples for the series %s: %s", name, query)
		return nil
	}
	if len(targets) > 0 {
		all = append(all, telemetry.Series{Name: name, Subject: targetSum.Label(), Unit: s.unit, Samples: sumSamples(targets)})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Subject != all[j].Subject {
			return all[i].Subject < all[j].Subject
		}
		return all[i].Name < all[j].Name
	})
	c.report.Series = append(c.report.Series, all...)
	c.addFigures(c.fromSeries(s, all))
	return nil
}

// fromSeries makes the p95 and max figures of each subject's series.
func (c *collection) fromSeries(s spec, all []telemetry.Series) []telemetry.Figure {
	var figures []telemetry.Figure
	for _, series := range all {
		values := telemetry.SampleValues(series.Samples)
		if s.p95 {
			figures = append(figures, telemetry.Figure{Name: s.base + "P95", Subject: series.Subject,
				Value: telemetry.NearestRank(values, 95), Unit: s.unit, Direction: s.dir})
		}
		if s.max {
			figures = append(figures, telemetry.Figure{Name: s.base + "Max", Subject: series.Subject,
				Value: telemetry.NearestRank(values, 100), Unit: s.unit, Direction: s.dir})
		}
	}
	return figures
}

func toSamples(values []model.SamplePair) []telemetry.Sample {
	out := make([]telemetry.Sample, 0, len(values))
	for _, p := range values {
		v := float64(p.Value)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		out = append(out, telemetry.Sample{Time: p.Timestamp.Time().UTC(), Value: v})
	}
	return out
}

// sumSamples adds series up instant by instant: a range query's samples of
// every series fall on the same steps.
func sumSamples(series [][]telemetry.Sample) []telemetry.Sample {
	sums := map[int64]float64{}
	for _, samples := range series {
		for _, s := range samples {
			sums[s.Time.UnixMilli()] += s.Value
		}
	}
	out := make([]telemetry.Sample, 0, len(sums))
	for ms, v := range sums {
		out = append(out, telemetry.Sample{Time: model.Time(ms).Time().UTC(), Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// Part joins a quantity and the part of the subject it is about: a core,
// a disk, an interface. "cpuSoftirqPercent.cpu3" is core 3's softirq share
// of node/x; the name before the dot keeps its unit, so a reader that does
// not know parts still reads the quantity.
func Part(base, part string) string { return base + "." + part }

// SplitPart is Part's inverse: ("cpuSoftirqPercent", "cpu3"), or the name
// and "" for a figure about the whole subject.
func SplitPart(name string) (base, part string) {
	base, part, _ = strings.Cut(name, ".")
	return base, part
}
