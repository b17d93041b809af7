package k6

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Aggregation in k6's own process: the dbperf output extension
// (workloads/k6/xk6, built into the k6 image of ours) feeds k6's samples
// to the same sink the runner feeds from the JSON stream, in k6's process
// and without encoding a sample, and writes what the sink came to (its
// aggregates, histograms, finished time series and stages) to a file at
// k6's end; the runner loads it into a sink and finishes the result as it
// would after the stream. A stream costs k6 12–21 % of its throughput
// near its limit (BenchmarkSampleStreamOverhead); this costs it ≤ 2 %.

// Aggregator aggregates k6's samples in k6's process.
type Aggregator struct {
	s *sink
}

// AggregatedMetric is one k6 metric of an Aggregator.
type AggregatedMetric struct{ m *metricState }

// NewAggregator returns an empty aggregator; started is when the runner
// started k6 (zero: unknown), which the stages are measured from.
func NewAggregator(o workloads.SampleOptions, started time.Time) *Aggregator {
	s := K6{}.NewSampleSink(o).(*sink)
	if !started.IsZero() {
		s.Started(started)
	}
	return &Aggregator{s: s}
}

// Metric returns a metric, declared at its first use: its kind (counter,
// gauge, rate, trend) and the kind of its values (time, data, default).
func (a *Aggregator) Metric(name, kind, contains string) *AggregatedMetric {
	if m, ok := a.s.metrics[name]; ok {
		return &AggregatedMetric{m}
	}
	return &AggregatedMetric{a.s.declareMetric(name, kind, contains)}
}

// Add aggregates one sample with its request name, group and scenario
// tags (empty: none). Not safe for concurrent use.
func (a *Aggregator) Add(m *AggregatedMetric, t time.Time, v float64, name, group, scenario string) {
	a.s.lines++
	if math.IsNaN(v) || math.IsInf(v, 0) {
		a.s.bad++
		return
	}
	a.s.add(m.m, t, v, bytesOf(name), bytesOf(group), bytesOf(scenario))
}

// bytesOf is a string's bytes without a copy: the sink only reads them
// (and copies what it keeps).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// WriteTo finishes the time series and writes the aggregates; the
// aggregator takes no samples after.
func (a *Aggregator) WriteTo(w io.Writer) (int64, error) {
	snap, err := a.s.snapshot()
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}

// WriteFile writes the aggregates to path, whole or not at all.
func (a *Aggregator) WriteFile(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := a.WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// snapshotVersion is the version of the aggregates' file: the k6 image
// and the runner are built from the same source, but a user's own k6
// build may be older.
const snapshotVersion = 1

// snapshot is what a sink came to, for a sink of the runner to finish.
type snapshot struct {
	Version           int             `json:"version"`
	Samples           int64           `json:"samples"`
	Bad               int64           `json:"bad,omitempty"`
	Unbroken          int64           `json:"unbroken,omitempty"`
	NamesWithoutHist  int             `json:"namesWithoutHistogram,omitempty"`
	OthersWithoutHist int             `json:"othersWithoutHistogram,omitempty"`
	SawHTTP           bool            `json:"sawHTTP,omitempty"`
	First             time.Time       `json:"first"`
	Last              time.Time       `json:"last"`
	VUsFirst          time.Time       `json:"vusFirst"`
	Started           int64           `json:"started,omitempty"`
	Metrics           []snapMetric    `json:"metrics"`
	Stages            []snapStage     `json:"stages,omitempty"`
	Series            *finishedSeries `json:"series"`
}

type snapMetric struct {
	Name       string              `json:"name"`
	Kind       string              `json:"kind"`
	Time       bool                `json:"time,omitempty"`
	Total      *snapAgg            `json:"total,omitempty"`
	ByName     map[string]*snapAgg `json:"byName,omitempty"`
	ByGroup    map[string]*snapAgg `json:"byGroup,omitempty"`
	ByScenario map[string]*snapAgg `json:"byScenario,omitempty"`
}

type snapAgg struct {
	Count     int64   `json:"count"`
	Nonzero   int64   `json:"nonzero,omitempty"`
	Sum       float64 `json:"sum"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
	Histogram string  `json:"histogram,omitempty"`
}

type snapStage struct {
	Requests    float64 `json:"requests,omitempty"`
	Failed      float64 `json:"failed,omitempty"`
	Iterations  float64 `json:"iterations,omitempty"`
	Latency     string  `json:"latency,omitempty"`
	IterLatency string  `json:"iterationLatency,omitempty"`
}

// finishedSeries is what the time series and the APDEX windows came to.
type finishedSeries struct {
	Points      []results.Point   `json:"points,omitempty"`
	Progress    *results.Progress `json:"progress,omitempty"`
	Resolution  time.Duration     `json:"resolution"`
	Late        int64             `json:"late,omitempty"`
	UpperUntil  float64           `json:"upperBoundsUntil,omitempty"`
	APDEX       []results.Point   `json:"apdex,omitempty"`
	APDEXWindow time.Duration     `json:"apdexWindow"`
}

// finishSeries finishes the sink's time series, or returns those it was
// loaded with.
func (s *sink) finishSeries() *finishedSeries {
	if s.finished != nil {
		return s.finished
	}
	f := &finishedSeries{Points: s.series.Finish()}
	f.Progress = s.series.Progress()
	f.Resolution, f.Late, f.UpperUntil = s.series.Resolution(), s.series.Late(), s.series.UpperBoundUntil()
	f.APDEX, f.APDEXWindow = s.apdex.Points(), s.apdex.Window()
	s.finished = f
	return f
}

func (s *sink) snapshot() (*snapshot, error) {
	snap := &snapshot{Version: snapshotVersion, Samples: s.lines, Bad: s.bad, Unbroken: s.unbroken,
		NamesWithoutHist: s.namesWithoutHist, OthersWithoutHist: s.othersWithoutHist, SawHTTP: s.sawHTTP,
		First: s.first, Last: s.last, VUsFirst: s.vusFirst, Started: s.started.Load(), Series: s.finishSeries()}
	for _, name := range workloads.SortedKeys(s.metrics) {
		m := s.metrics[name]
		if !m.use.keep {
			continue
		}
		sm := snapMetric{Name: m.name, Kind: m.kind, Time: m.time}
		var err error
		if sm.Total, err = snapOf(m.total); err != nil {
			return nil, err
		}
		for _, by := range []struct {
			from map[string]*agg
			to   *map[string]*snapAgg
		}{{m.byName, &sm.ByName}, {m.byGroup, &sm.ByGroup}, {m.byScenario, &sm.ByScenario}} {
			for v, a := range by.from {
				if *by.to == nil {
					*by.to = map[string]*snapAgg{}
				}
				if (*by.to)[v], err = snapOf(a); err != nil {
					return nil, err
				}
			}
		}
		snap.Metrics = append(snap.Metrics, sm)
	}
	for _, st := range s.stages {
		ss := snapStage{Requests: st.requests, Failed: st.failed, Iterations: st.iterations}
		var err error
		if ss.Latency, err = encodeHist(st.latency); err != nil {
			return nil, err
		}
		if ss.IterLatency, err = encodeHist(st.iterLatency); err != nil {
			return nil, err
		}
		snap.Stages = append(snap.Stages, ss)
	}
	return snap, nil
}

func snapOf(a *agg) (*snapAgg, error) {
	if a == nil {
		return nil, nil
	}
	h, err := encodeHist(a.hist)
	return &snapAgg{Count: a.count, Nonzero: a.nonzero, Sum: a.sum, Min: a.min, Max: a.max, Histogram: h}, err
}

func encodeHist(h *hdr.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	return results.EncodeHistogram(h)
}

func decodeHist(s string) (*hdr.Histogram, error) {
	if s == "" {
		return nil, nil
	}
	return results.DecodeHistogram(s)
}

// LoadAggregate reads the aggregates k6's output extension wrote (at
// path) into a sink whose Finish adds them to the result as a stream's
// sink would.
func (K6) LoadAggregate(path string, o workloads.SampleOptions) (workloads.SampleSink, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var snap snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return nil, fmt.Errorf("reading k6's aggregates %s: %w", path, err)
	}
	if snap.Version != snapshotVersion || snap.Series == nil {
		return nil, fmt.Errorf("k6's aggregates %s are of version %d, the runner reads version %d: build the k6 image and the runner from the same release", path, snap.Version, snapshotVersion)
	}
	s := K6{}.NewSampleSink(o).(*sink)
	s.lines, s.bad, s.unbroken = snap.Samples, snap.Bad, snap.Unbroken
	s.namesWithoutHist, s.othersWithoutHist, s.sawHTTP = snap.NamesWithoutHist, snap.OthersWithoutHist, snap.SawHTTP
	s.first, s.last, s.vusFirst = snap.First, snap.Last, snap.VUsFirst
	s.started.Store(snap.Started)
	s.finished, s.fromTool = snap.Series, true
	for _, sm := range snap.Metrics {
		known := builtin(sm.Name)
		m := &metricState{name: sm.Name, kind: sm.Kind, time: sm.Time, known: known, use: usageOf(sm.Name, sm.Kind, sm.Time, known)}
		if m.total, err = aggOf(sm.Total); err != nil {
			return nil, err
		}
		for _, by := range []struct {
			from map[string]*snapAgg
			to   *map[string]*agg
		}{{sm.ByName, &m.byName}, {sm.ByGroup, &m.byGroup}, {sm.ByScenario, &m.byScenario}} {
			for v, a := range by.from {
				if *by.to == nil {
					*by.to = map[string]*agg{}
				}
				if (*by.to)[v], err = aggOf(a); err != nil {
					return nil, err
				}
			}
		}
		s.metrics[sm.Name] = m
	}
	for _, ss := range snap.Stages {
		st := stageAgg{requests: ss.Requests, failed: ss.Failed, iterations: ss.Iterations}
		if st.latency, err = decodeHist(ss.Latency); err != nil {
			return nil, err
		}
		if st.iterLatency, err = decodeHist(ss.IterLatency); err != nil {
			return nil, err
		}
		s.stages = append(s.stages, st)
	}
	if len(s.stages) != 0 && len(s.stages) != len(o.Stages) {
		return nil, fmt.Errorf("k6's aggregates %s have %d stages, the measurement %d", path, len(s.stages), len(o.Stages))
	}
	return s, nil
}

func aggOf(a *snapAgg) (*agg, error) {
	if a == nil {
		return nil, nil
	}
	h, err := decodeHist(a.Histogram)
	return &agg{count: a.Count, nonzero: a.Nonzero, sum: a.Sum, min: a.Min, max: a.Max, hist: h}, err
}

// Where the aggregates go, and how k6 is told the sink's options.
const (
	// OutputName is the output of k6's dbperf extension: --out dbperf=FILE.
	OutputName = "dbperf"
	// AggregateOptionsEnv holds the sink's options and the start instant,
	// as JSON (AggregateOptions).
	AggregateOptionsEnv = "DBPERF_K6_AGGREGATE_OPTIONS"
	// SampleAggregationParam says in a result where its samples were
	// aggregated: AggregatedInK6 or AggregatedFromStream.
	SampleAggregationParam = "sampleAggregation"
	AggregatedInK6         = "k6 output extension"
	AggregatedFromStream   = "sample stream"
	// versionProbeTimeout bounds `k6 version`, which says whether a k6
	// binary has the extension.
	versionProbeTimeout = 20 * time.Second
)

// extensionMarker is how `k6 version` lists the extension (after its
// module: "Extensions: github.com/dbperf-io/dbperf-operator (devel), dbperf [output]").
const extensionMarker = OutputName + " [output]"

// AggregateOptions is what the extension is told.
type AggregateOptions struct {
	Samples workloads.SampleOptions `json:"samples"`
	Started time.Time               `json:"started"`
}

var _ workloads.ToolAggregator = K6{}

// AggregateInTool replaces `--out json=STREAM` by `--out dbperf=FILE`
// when the k6 binary has the extension (`k6 version` lists it).
func (K6) AggregateInTool(command []string, stream string) ([]string, string, bool) {
	at := -1
	for i := 1; i < len(command); i++ {
		if command[i] == "json="+stream && command[i-1] == "--out" {
			at = i
		}
	}
	if at < 0 || !hasExtension(command[0]) {
		return nil, "", false
	}
	file := stream + ".aggregate"
	changed := append([]string(nil), command...)
	changed[at] = OutputName + "=" + file
	return changed, file, true
}

// hasExtension runs `k6 version` and looks for the extension.
func hasExtension(k6 string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), versionProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, k6, "version").Output()
	return err == nil && bytes.Contains(out, []byte(extensionMarker))
}

// AggregateEnv tells the extension the sink's options.
func (K6) AggregateEnv(o workloads.SampleOptions, started time.Time) ([]string, error) {
	b, err := json.Marshal(AggregateOptions{Samples: o, Started: started})
	if err != nil {
		return nil, err
	}
	return []string{AggregateOptionsEnv + "=" + string(b)}, nil
}

// ReadAggregateOptions reads what AggregateEnv wrote.
func ReadAggregateOptions(v string) (AggregateOptions, error) {
	var o AggregateOptions
	if v == "" {
		return o, fmt.Errorf("%s is not set: the dbperf output is started by dbperf-runner, which sets it", AggregateOptionsEnv)
	}
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		return o, fmt.Errorf("reading %s: %w", AggregateOptionsEnv, err)
	}
	return o, nil
}
