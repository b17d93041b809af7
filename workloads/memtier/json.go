package memtier

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// jsonOp is one row of the "ALL STATS" object of --json-out-file.
type jsonOp struct {
	Count      *float64                  `json:"Count"`
	OpsSec     *float64                  `json:"Ops/sec"`
	HitsSec    *float64                  `json:"Hits/sec"`
	MissesSec  *float64                  `json:"Misses/sec"`
	Latency    *float64                  `json:"Latency"`
	AvgLatency *float64                  `json:"Average Latency"`
	MinLatency *float64                  `json:"Min Latency"`
	MaxLatency *float64                  `json:"Max Latency"`
	KBSec      *float64                  `json:"KB/sec"`
	Percentile map[string]jsontext.Value `json:"Percentile Latencies"`
	TimeSerie  *timeSerie                `json:"Time-Serie"`
}

// timeSerie is decoded only for the Totals row, the one the time series
// comes from: skipping the others halves the parse time of long runs.
type timeSerie struct {
	skip   bool
	points map[string]jsonPoint
}

func (t *timeSerie) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if t.skip {
		return dec.SkipValue()
	}
	return json.UnmarshalDecode(dec, &t.points)
}

type jsonPoint struct {
	Count      float64  `json:"Count"`
	AvgLatency *float64 `json:"Average Latency"`
	P99        *float64 `json:"p99.00"`
}

type jsonDoc struct {
	Config  jsonConfig                `json:"configuration"`
	RunInfo map[string]jsontext.Value `json:"run information"`
	// Several runs (--run-count) add aggregated sections; one run has ALL STATS.
	All        jsonStats `json:"ALL STATS"`
	Aggregated jsonStats `json:"AGGREGATED AVERAGE RESULTS"`
}

// jsonConfig is what the configuration object says of the load memtier
// offered.
type jsonConfig struct {
	RateLimit int64 `json:"rate_limit"`
	Threads   int64 `json:"threads"`
	Clients   int64 `json:"clients"`
}

// offeredRate is the rate memtier offers with --rate-limiting r on each of
// conns connections. It opens a quota of ceil(r/50) requests per
// connection at fixed intervals of 1/⌊r/quota⌋ s (whole microseconds), so
// a connection offers slightly less than r when the quota does not
// divide it (51/s offers 50/s); this is memtier 2.1.1's arithmetic.
func offeredRate(r, conns int64) float64 {
	if r <= 0 || conns <= 0 {
		return 0
	}
	quota := (r + 49) / 50
	interval := 1_000_000 / (r / quota)
	return float64(conns) * float64(quota) * 1e6 / float64(interval)
}

// jsonStats is the ALL STATS object; it is read by hand so that each row
// knows its name while it is decoded.
type jsonStats map[string]*jsonOp

func (s *jsonStats) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '{' {
		return fmt.Errorf("ALL STATS is a %v, not an object", tok.Kind())
	}
	*s = jsonStats{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		if name == "Runtime" || dec.PeekKind() != '{' {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		op := &jsonOp{TimeSerie: &timeSerie{skip: name != "Totals"}}
		if err := json.UnmarshalDecode(dec, op); err != nil {
			return fmt.Errorf("while reading %s: %w", name, err)
		}
		(*s)[name] = op
	}
	_, err := dec.ReadToken()
	return err
}

// parseJSON reads a --json-out-file document into r and returns the row
// types seen.
func parseJSON(r *results.Result, data []byte) (map[string]bool, error) {
	var doc jsonDoc
	if err := json.Unmarshal(data, &doc, jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, err
	}
	stats := doc.All
	if len(doc.Aggregated) > 0 {
		stats = doc.Aggregated
	}
	if len(stats) == 0 {
		return nil, fmt.Errorf("the document has no ALL STATS object")
	}
	for k, v := range doc.RunInfo {
		if s := string(bytes.Trim(v, `"`)); k != "" && len(s) < 64 {
			r.SetParam(paramName(k), s)
		}
	}
	if c := doc.Config; c.RateLimit > 0 {
		// What the generator offered (rate levels; see offeredRate), beside
		// what it achieved; generators' offers add up when merged.
		r.SetParam("rateLimitPerConnection", strconv.FormatInt(c.RateLimit, 10))
		r.Add(results.Metric{Name: capacity.MetricOffered, Value: offeredRate(c.RateLimit, c.Threads*c.Clients), Unit: "/s", Direction: benchv1.Neutral, Detail: true})
	}
	rows := map[string]bool{}
	names := make([]string, 0, len(stats))
	for name := range stats {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rows[name] = true
		if name != "Waits" {
			addOp(r, name, stats[name])
		}
	}
	return rows, nil
}

func addOp(r *results.Result, name string, op *jsonOp) {
	add := func(column string, v *float64) {
		if v == nil {
			return
		}
		if m, ok := metricFor(column); ok {
			m.Operation, m.Value = name, *v
			r.Add(m)
		}
	}
	add("Ops/sec", op.OpsSec)
	add("Hits/sec", op.HitsSec)
	add("Misses/sec", op.MissesSec)
	if op.AvgLatency != nil {
		add("Average Latency", op.AvgLatency)
	} else {
		add("Latency", op.Latency)
	}
	add("Min Latency", op.MinLatency)
	add("Max Latency", op.MaxLatency)
	add("KB/sec", op.KBSec)
	if op.Count != nil {
		r.Add(results.Metric{Name: "requests", Operation: name, Value: *op.Count, Unit: "count", Direction: results.Neutral})
	}
	pcts := make([]string, 0, len(op.Percentile))
	for k := range op.Percentile {
		pcts = append(pcts, k)
	}
	sort.Strings(pcts)
	for _, k := range pcts {
		var v float64
		if len(k) < 2 || k[0] != 'p' || json.Unmarshal(op.Percentile[k], &v) != nil {
			continue
		}
		r.Add(results.Metric{Name: PercentileName(k[1:]), Operation: name, Value: v, Unit: "ms", Direction: results.LowerIsBetter})
	}
	if name == "Totals" && op.TimeSerie != nil {
		r.TimeSeries = timeSeries(op.TimeSerie.points)
	}
	if name != "Totals" { // Totals is the sum of the others: never merged twice
		addHistogram(r, name, op.Percentile[histogramKey])
	}
}

// histogramKey holds, among an operation's percentiles, memtier's
// HdrHistogram of its latencies (microseconds; memtier's lowest
// discernible value is 10 µs, so its buckets are 8 µs wide up to 16 ms).
const histogramKey = "Histogram log format"

// addHistogram sets the operation's histogram from memtier's compressed
// one (the HdrHistogram V2 encoding, base64), so that its percentiles
// merge across load generators and repetitions and APDEX can be scored; an
// unreadable one is a warning, and the operation keeps memtier's
// percentiles.
func addHistogram(r *results.Result, name string, raw jsontext.Value) {
	if len(raw) == 0 {
		return
	}
	var doc struct {
		Compressed string `json:"Compressed Histogram"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Compressed == "" {
		return
	}
	h, err := decodeHistogram(doc.Compressed)
	if err == nil && h.TotalCount() > 0 {
		err = r.SetHistogram(name, h)
	}
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the latency histogram of %s could not be read: %v", name, err))
	}
}

func decodeHistogram(enc string) (*hdr.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, err
	}
	jh, err := results.DecodeJavaHistogram(b)
	if err != nil {
		return nil, err
	}
	h := results.NewHistogram()
	if dropped := h.Merge(jh); dropped > 0 {
		return nil, fmt.Errorf("%d latencies outside the range a result keeps", dropped)
	}
	return h, nil
}

// timeSeries turns memtier's per-second buckets into points in time order.
func timeSeries(ts map[string]jsonPoint) []results.Point {
	type sec struct {
		t int
		p jsonPoint
	}
	secs := make([]sec, 0, len(ts))
	for k, p := range ts {
		if t, err := strconv.Atoi(k); err == nil {
			secs = append(secs, sec{t, p})
		}
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i].t < secs[j].t })
	out := make([]results.Point, 0, len(secs))
	for _, s := range secs {
		v := map[string]float64{"opsPerSecond": s.p.Count}
		if s.p.AvgLatency != nil {
			v["latencyAverageMillis"] = *s.p.AvgLatency
		}
		if s.p.P99 != nil {
			v["latencyP99Millis"] = *s.p.P99
		}
		out = append(out, results.Point{ElapsedSeconds: float64(s.t + 1), Values: v})
	}
	return out
}
