// Package xk6 is dbperf-operator's k6 output extension: `--out dbperf=FILE`
// aggregates k6's samples in k6's own process with the runner's k6 sink
// (per-operation HdrHistograms, time series, APDEX windows, stages) and
// writes the aggregates to FILE at the end of the test, where
// dbperf-runner reads them (workloads/k6 LoadAggregate). It replaces the
// JSON sample stream, which costs k6 12–21 % of its throughput near its
// limit. cmd/k6 is the k6 main package xk6 would generate with it; the
// k6 image of ours (Dockerfile) is built from it.
package xk6

import (
	"fmt"
	"sync"
	"time"

	"go.k6.io/k6/metrics"
	"go.k6.io/k6/output"

	"github.com/dbperf-io/dbperf-operator/workloads/k6"
)

func init() {
	output.RegisterExtension(k6.OutputName, New)
}

// flushEvery is how often the buffered samples are aggregated.
const flushEvery = 100 * time.Millisecond

// Output aggregates k6's samples.
type Output struct {
	output.SampleBuffer

	file    string
	flusher *output.PeriodicFlusher
	mu      sync.Mutex // the aggregator is fed by the flusher and by Stop
	agg     *k6.Aggregator
	metrics map[*metrics.Metric]*k6.AggregatedMetric
}

// New is the output's constructor: its argument is the file to write.
func New(p output.Params) (output.Output, error) {
	if p.ConfigArgument == "" {
		return nil, fmt.Errorf("the %s output needs a file: --out %s=FILE", k6.OutputName, k6.OutputName)
	}
	o, err := k6.ReadAggregateOptions(p.Environment[k6.AggregateOptionsEnv])
	if err != nil {
		return nil, err
	}
	return &Output{file: p.ConfigArgument, agg: k6.NewAggregator(o.Samples, o.Started), metrics: map[*metrics.Metric]*k6.AggregatedMetric{}}, nil
}

// Description is what k6 prints for the output.
func (o *Output) Description() string {
	return fmt.Sprintf("dbperf (aggregated in k6 for dbperf-runner: %s)", o.file)
}

// Start starts aggregating.
func (o *Output) Start() error {
	f, err := output.NewPeriodicFlusher(flushEvery, o.flush)
	if err != nil {
		return err
	}
	o.flusher = f
	return nil
}

// Stop aggregates what is left and writes the aggregates.
func (o *Output) Stop() error {
	o.flusher.Stop() // flushes once more
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.agg.WriteFile(o.file); err != nil {
		return fmt.Errorf("writing the aggregates to %s: %w", o.file, err)
	}
	return nil
}

func (o *Output) flush() {
	containers := o.GetBufferedSamples()
	if len(containers) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range containers {
		for _, s := range c.GetSamples() {
			m, ok := o.metrics[s.Metric]
			if !ok {
				m = o.agg.Metric(s.Metric.Name, s.Metric.Type.String(), s.Metric.Contains.String())
				o.metrics[s.Metric] = m
			}
			name, _ := s.Tags.Get("name")
			group, _ := s.Tags.Get("group")
			scenario, _ := s.Tags.Get("scenario")
			o.agg.Add(m, s.Time, s.Value, name, group, scenario)
		}
	}
}
