package specs

import (
	"fmt"
	"math/rand/v2"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// bigDocument is a run whose raw results are far above 1 MiB: 100
// repetitions with long, incompressible time series.
func bigDocument() *Document {
	rng := rand.New(rand.NewPCG(1, 2))
	doc := &Document{Run: "big"}
	step := DocumentStep{Name: "threads=4"}
	for rep := range 100 {
		r := results.New("memtier")
		for i := range 40 {
			r.Add(results.Metric{Name: fmt.Sprintf("latencyP%dMillis", i), Operation: "Gets", Value: rng.Float64(), Unit: "ms", Detail: i > 10})
		}
		for s := range 800 {
			r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: float64(s), Values: map[string]float64{"opsPerSecond": rng.Float64() * 1e5}})
		}
		step.Repetitions = append(step.Repetitions, DocumentRepetition{Index: int32(rep + 1), Result: r})
	}
	doc.Steps = []DocumentStep{step}
	return doc
}
