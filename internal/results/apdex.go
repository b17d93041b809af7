package results

import (
	"fmt"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// AllOperations, as an APDEX target's operation, names every operation
// that has a latency histogram.
const AllOperations = "*"

// OverallOperation is the operation of the overall APDEX index: the
// weighted mean of the operations' scores (AddOverallAPDEX).
const OverallOperation = "overall"

// APDEX is the Application Performance Index of a latency histogram (µs)
// for a target time T: (satisfied + tolerating/2) / all, a request being
// satisfied within T and tolerating within 4T. A histogram bucket counts
// on the side of its highest equivalent value, so the score is exact to
// the histogram's resolution (0.1 % of a value). It returns the number of
// requests judged too; none gives 0, 0.
func APDEX(h *hdr.Histogram, target time.Duration) (score float64, n int64) {
	t := target.Microseconds()
	var satisfied, tolerating int64
	for _, b := range h.Distribution() {
		switch {
		case b.Count == 0:
		case b.To <= t:
			satisfied += b.Count
		case b.To <= 4*t:
			tolerating += b.Count
		}
		n += b.Count
	}
	if n == 0 {
		return 0, 0
	}
	return (float64(satisfied) + float64(tolerating)/2) / float64(n), n
}

// AddAPDEX adds, for each operation with a target (AllOperations: every
// operation with a histogram), the metric apdex of that operation (a score
// from 0 to 1, higher is better), computed from the measurement's latency
// histogram. An operation without a histogram gets a warning that its
// APDEX cannot be computed: it is never approximated from averages or
// percentiles.
func AddAPDEX(r *Result, targets map[string]time.Duration) {
	if len(targets) == 0 || r.Verdict == Failed {
		return
	}
	ops := map[string]time.Duration{}
	if t, ok := targets[AllOperations]; ok {
		if len(r.Histograms) == 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("APDEX cannot be computed: %s gave no latency histogram", r.Tool))
		}
		for _, op := range r.HistogramOperations() {
			ops[op] = t
		}
	}
	for op, t := range targets {
		if op != AllOperations {
			ops[op] = t
		}
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	for _, op := range names {
		enc, ok := r.Histograms[op]
		if !ok {
			r.Warnings = append(r.Warnings, fmt.Sprintf("APDEX of %s cannot be computed: %s gave no latency histogram of it", op, r.Tool))
			continue
		}
		h, err := DecodeHistogram(enc)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("APDEX of %s cannot be computed: %v", op, err))
			continue
		}
		score, n := APDEX(h, ops[op])
		if n == 0 {
			continue
		}
		r.Add(Metric{Name: "apdex", Operation: op, Value: score, Unit: "score", Direction: HigherIsBetter})
	}
}

// AddOverallAPDEX adds the overall index, the metric apdex of operation
// OverallOperation: the mean of the operations' apdex scores weighted by
// weights (AllOperations: the weight of every operation not named; an
// operation in neither weighs nothing). It needs at least two scored
// operations: with one, that score is the index already.
func AddOverallAPDEX(r *Result, weights map[string]float64) {
	if len(weights) == 0 {
		return
	}
	var sum, total float64
	var n int
	var parts []string
	for _, m := range r.Metrics {
		if m.Name != "apdex" || m.Operation == OverallOperation {
			continue
		}
		w, ok := weights[m.Operation]
		if !ok {
			w = weights[AllOperations]
		}
		if w <= 0 {
			continue
		}
		sum, total, n = sum+w*m.Value, total+w, n+1
		parts = append(parts, fmt.Sprintf("%s×%g", m.Operation, w))
	}
	if n < 2 {
		return
	}
	r.Add(Metric{Name: "apdex", Operation: OverallOperation, Value: sum / total, Unit: "score", Direction: HigherIsBetter})
	r.SetParam("apdexOverallWeights", strings.Join(parts, ", "))
}
