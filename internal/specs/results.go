package specs

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Keys of the results ConfigMap.
const (
	ResultsKey           = "result.json"
	ResultsKeyGzip       = "result.json.gz"
	measurementKeyPrefix = "unit-" // stored in the ConfigMaps of runs in flight: kept as it was
	maxConfigMapBytes    = 1 << 20
	configMapHeadroom    = 24 << 10 // room for the object's metadata
	compressAboveBytes   = 256 << 10
)

// MeasurementKey is where one measurement's full result waits in the results
// ConfigMap until the run ends.
func MeasurementKey(step int, rep int32) string {
	return fmt.Sprintf("%ss%d-r%d.json.gz", measurementKeyPrefix, step, rep)
}

// PrepareKey is where the prepare step's result waits in the results ConfigMap.
const PrepareKey = measurementKeyPrefix + "prepare.json.gz"

// IsMeasurementKey tells a per-measurement key from the final ones.
func IsMeasurementKey(k string) bool {
	return len(k) > len(measurementKeyPrefix) && k[:len(measurementKeyPrefix)] == measurementKeyPrefix
}

// Document is the full record of a run, as its results ConfigMap holds it.
type Document struct {
	APIVersion  string                   `json:"apiVersion"`
	Kind        string                   `json:"kind"`
	Run         string                   `json:"run"`
	Namespace   string                   `json:"namespace"`
	UID         string                   `json:"uid"`
	Workload    string                   `json:"workload"`
	Target      *benchv1.TargetStatus    `json:"target,omitempty"`
	Phase       benchv1.Phase            `json:"phase"`
	Primary     *benchv1.PrimaryMetric   `json:"primary,omitempty"`
	Prepare     *results.Result          `json:"prepare,omitempty"`
	Steps       []DocumentStep           `json:"steps"`
	Environment *benchv1.Environment     `json:"environment,omitempty"`
	Spec        benchv1.BenchmarkRunSpec `json:"spec"`
	Dropped     []string                 `json:"dropped,omitempty"`
	// Lost names the measurements status records whose results the
	// ConfigMap no longer held when the run ended (someone deleted or
	// edited it); the run is Failed with reason ResultsLost.
	Lost       []string            `json:"lost,omitempty"`
	Conditions []DocumentCondition `json:"conditions,omitempty"`
}

// DocumentStep is one step with its full results.
type DocumentStep struct {
	Name        string                  `json:"name"`
	Parameters  map[string]string       `json:"parameters,omitempty"`
	Summary     []benchv1.MetricSummary `json:"summary,omitempty"`
	Unstable    bool                    `json:"unstable,omitempty"`
	Repetitions []DocumentRepetition    `json:"repetitions"`
}

// DocumentRepetition is one measurement with its full result.
type DocumentRepetition struct {
	Index  int32           `json:"index"`
	Job    string          `json:"job,omitempty"`
	Node   string          `json:"node,omitempty"`
	Result *results.Result `json:"result,omitempty"`
}

// DocumentCondition is a condition without its timestamps.
type DocumentCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// ResultsConfigMap renders the final document into data that fits a
// ConfigMap: plain JSON when small, gzip in binaryData when large, and when
// even that is too large it drops, in order, time series, the profiles'
// folded stacks, the diagnostics' plans, detail metrics and finally the per-repetition results (the
// summaries stay), saying what went.
func ResultsConfigMap(run *benchv1.BenchmarkRun, doc *Document) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{ObjectMeta: ObjectMeta(run, ResultsConfigMapName(run), benchv1.RoleResults)}
	reducers := []struct {
		what string
		do   func(*Document)
	}{
		{"", func(*Document) {}},
		{"time series of every repetition", func(d *Document) { eachResult(d, func(r *results.Result) { r.TimeSeries = nil }) }},
		{"the profiles' folded stacks of every repetition (their functions stay)", func(d *Document) {
			eachResult(d, func(r *results.Result) {
				if r.Diagnostics != nil && r.Diagnostics.Profile != nil {
					r.Diagnostics.Profile.Stacks = nil
				}
			})
		}},
		{"the diagnostics' plans of every repetition", func(d *Document) {
			eachResult(d, func(r *results.Result) {
				if r.Diagnostics != nil {
					for i := range r.Diagnostics.Items {
						r.Diagnostics.Items[i].Plan = ""
					}
				}
			})
		}},
		{"detail metrics (per statement, per bucket) of every repetition", func(d *Document) {
			eachResult(d, func(r *results.Result) {
				kept := r.Metrics[:0]
				for _, m := range r.Metrics {
					if !m.Detail {
						kept = append(kept, m)
					}
				}
				r.Metrics = kept
			})
		}},
		{"the per-repetition results (status and summaries keep the headline metrics)", func(d *Document) {
			eachResult(d, func(r *results.Result) { r.Metrics, r.TimeSeries, r.Warnings, r.Diagnostics = nil, nil, nil, nil })
		}},
	}
	for _, red := range reducers {
		red.do(doc)
		if red.what != "" && !slices.Contains(doc.Dropped, red.what) {
			doc.Dropped = append(doc.Dropped, red.what)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		if len(raw) < compressAboveBytes {
			cm.Data = map[string]string{ResultsKey: string(raw)}
			return cm, nil
		}
		if zipped := results.Gzip(raw); len(zipped) < maxConfigMapBytes-configMapHeadroom {
			cm.BinaryData = map[string][]byte{ResultsKeyGzip: zipped}
			return cm, nil
		}
	}
	return nil, fmt.Errorf("the results do not fit a ConfigMap even without per-repetition results")
}

// ReadDocument reads the final document of a results ConfigMap; nil when the
// ConfigMap holds none yet (the run has not finished).
func ReadDocument(cm *corev1.ConfigMap) (*Document, error) {
	var raw []byte
	switch {
	case cm.Data[ResultsKey] != "":
		raw = []byte(cm.Data[ResultsKey])
	case len(cm.BinaryData[ResultsKeyGzip]) > 0:
		var err error
		if raw, err = results.Gunzip(cm.BinaryData[ResultsKeyGzip]); err != nil {
			return nil, fmt.Errorf("while decompressing %s: %w", ResultsKeyGzip, err)
		}
	default:
		return nil, nil
	}
	doc := &Document{}
	if err := json.Unmarshal(raw, doc); err != nil {
		return nil, fmt.Errorf("while reading the results document: %w", err)
	}
	return doc, nil
}

// Result returns the stored result of a step's repetition, nil when the
// document has none.
func (d *Document) Result(step string, rep int32) *results.Result {
	if d == nil {
		return nil
	}
	for _, s := range d.Steps {
		if s.Name != step {
			continue
		}
		for _, r := range s.Repetitions {
			if r.Index == rep {
				return r.Result
			}
		}
	}
	return nil
}

func eachResult(d *Document, f func(*results.Result)) {
	for i := range d.Steps {
		for j := range d.Steps[i].Repetitions {
			if r := d.Steps[i].Repetitions[j].Result; r != nil {
				f(r)
			}
		}
	}
}
