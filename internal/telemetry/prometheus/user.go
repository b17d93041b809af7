package prometheus

import (
	"context"
	"math"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// userQuery evaluates one of the user's queries over the window (see Query).
func (c *collection) userQuery(ctx context.Context, q Query) error {
	if strings.Contains(q.Query, WindowPlaceholder) {
		return c.userInstant(ctx, q)
	}
	return c.userRange(ctx, q)
}

// userInstant: the query summarises the window itself through $window.
func (c *collection) userInstant(ctx context.Context, q Query) error {
	query := strings.ReplaceAll(q.Query, WindowPlaceholder, c.windowRange())
	vec, err := c.instant(ctx, query)
	if err != nil {
		return err
	}
	var values []float64
	for _, s := range vec {
		values = append(values, float64(s.Value))
	}
	value, ok := c.sumOf(q, query, values)
	if ok {
		c.addUserFigure(q, value)
	}
	return nil
}

// userRange: the query is sampled at every step; the figure is the mean
// or the maximum of the samples, which are kept as a series.
func (c *collection) userRange(ctx context.Context, q Query) error {
	matrix, err := c.rangeQuery(ctx, q.Query)
	if err != nil {
		return err
	}
	var streams [][]telemetry.Sample
	for _, stream := range matrix {
		if samples := toSamples(stream.Values); len(samples) > 0 {
			streams = append(streams, samples)
		}
	}
	if _, ok := c.sumOf(q, q.Query, make([]float64, len(streams))); !ok {
		return nil
	}
	samples := sumSamples(streams)
	c.report.Series = append(c.report.Series, telemetry.Series{Name: q.Name, Subject: q.Subject, Unit: q.Unit, Samples: samples})
	values := telemetry.SampleValues(samples)
	if q.Summary == "max" {
		c.addUserFigure(q, telemetry.NearestRank(values, 100))
	} else {
		c.addUserFigure(q, mean(values))
	}
	return nil
}

// sumOf adds up what a query returned, warning when it returned nothing
// (ok false) or several series (summed: the query should say how).
func (c *collection) sumOf(q Query, query string, values []float64) (sum float64, ok bool) {
	switch {
	case len(values) == 0:
		c.warn("no data for the query %s: %s", q.Name, query)
		return 0, false
	case len(values) > 1:
		c.warn("the query %s returned %d series, added up (aggregate them in the query to choose how): %s", q.Name, len(values), query)
	}
	for _, v := range values {
		sum += v
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		c.warn("the query %s returned %v: %s", q.Name, model.SampleValue(sum), query)
		return 0, false
	}
	return sum, true
}

func (c *collection) addUserFigure(q Query, v float64) {
	c.report.Figures = append(c.report.Figures, telemetry.Figure{
		Name: q.Name, Subject: q.Subject, Value: v, Unit: q.Unit, Direction: q.Direction,
	})
}

func mean(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}
