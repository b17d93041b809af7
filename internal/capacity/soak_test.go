package capacity

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// soakResult is a pgbench-like soak of n one-second progress intervals at
// about 1000 tx/s with 3 % noise; tput, lat and failed bend each interval's
// value by how far into the soak it is (0 to 1), mem the target's memory.
func soakResult(n int, tput, lat, failed, mem func(x float64) float64) *results.Result {
	rng := rand.New(rand.NewPCG(7, 11))
	noise := func() float64 { return 1 + 0.03*(rng.Float64()*2-1) }
	start := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	r := &results.Result{Primary: results.Key{Name: "transactionsPerSecond"}, StartTime: &start}
	ms := results.Series{Name: MemorySeries, Subject: "target", Unit: "bytes"}
	for i := 1; i <= n; i++ {
		x := float64(i) / float64(n)
		r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: float64(i), Values: map[string]float64{
			"transactionsPerSecond": 1000 * tput(x) * noise(),
			"latencyAverageMillis":  2 * lat(x) * noise(),
			"failedTransactions":    float64(int(failed(x))),
		}})
		if i%5 == 0 {
			ms.Samples = append(ms.Samples, results.Sample{Time: start.Add(time.Duration(i) * time.Second), Value: 500e6 * mem(x) * noise()})
		}
	}
	r.Series = []results.Series{ms}
	return r
}

func flat(float64) float64 { return 1 }
func zero(float64) float64 { return 0 }

func TestJudgeSoak(t *testing.T) {
	soak := &benchv1.CapacitySoak{Percent: 75, MaxThroughputDropPercent: 5, MaxLatencyGrowthPercent: 20, MaxErrorGrowthPercent: 1, MaxMemoryGrowthPercent: 10}
	for _, c := range []struct {
		name                   string
		tput, lat, failed, mem func(float64) float64
		fail                   []benchv1.SoakCheckName
	}{
		{"steady", flat, flat, zero, flat, nil},
		{"a steady trickle of errors", flat, flat, func(float64) float64 { return 3 }, flat, nil},
		{"throughput falls 20 %", func(x float64) float64 { return 1 - 0.2*x }, flat, zero, flat, []benchv1.SoakCheckName{benchv1.SoakThroughputDrop}},
		{"throughput rises (warming caches)", func(x float64) float64 { return 1 + 0.2*x }, flat, zero, flat, nil},
		{"latency doubles", flat, func(x float64) float64 { return 1 + x }, zero, flat, []benchv1.SoakCheckName{benchv1.SoakLatencyGrowth}},
		{"latency grows 10 %, under the limit", flat, func(x float64) float64 { return 1 + 0.1*x }, zero, flat, nil},
		{"errors grow to 5 %", flat, flat, func(x float64) float64 { return 50 * x * x }, flat, []benchv1.SoakCheckName{benchv1.SoakErrorGrowth}},
		{"a leak of 30 %", flat, flat, zero, func(x float64) float64 { return 1 + 0.3*x }, []benchv1.SoakCheckName{benchv1.SoakMemoryGrowth}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := JudgeSoak(soak, nil, soakResult(300, c.tput, c.lat, c.failed, c.mem), 10*time.Second)
			if j.Unjudgeable != "" {
				t.Fatal(j.Unjudgeable)
			}
			if len(j.Checks) != 4 {
				t.Fatalf("%d checks, want 4: %+v", len(j.Checks), j.Checks)
			}
			var got []benchv1.SoakCheckName
			for _, ch := range j.Checks {
				if !ch.Passed {
					got = append(got, ch.Name)
				}
			}
			if strings.Join(names(got), ",") != strings.Join(names(c.fail), ",") || j.Passed != (len(c.fail) == 0) {
				t.Errorf("failed %v (passed %v), want %v: %+v; %v", got, j.Passed, c.fail, j.Checks, j.Reasons)
			}
			for i, f := range c.fail {
				if !strings.Contains(j.Reasons[i], string(f)+": ") || !strings.Contains(j.Reasons[i], "soak.max"+string(f)+"Percent") {
					t.Errorf("reason %q does not name %s and its limit", j.Reasons[i], f)
				}
			}
		})
	}
}

func TestJudgeSoakSaysWhatItCouldNotJudge(t *testing.T) {
	soak := &benchv1.CapacitySoak{}
	r := soakResult(60, flat, flat, zero, flat)
	r.Series = nil
	j := JudgeSoak(soak, nil, r, 0)
	if !j.Passed || len(j.Checks) != 3 || len(j.Reasons) != 1 || !strings.Contains(j.Reasons[0], "MemoryGrowth not judged") {
		t.Errorf("without a memory series: %+v", j)
	}
	if j.Checks[0].LimitPercent != DefaultSoakThroughputDrop {
		t.Errorf("limit %g, want the default %d", j.Checks[0].LimitPercent, DefaultSoakThroughputDrop)
	}
	if j := JudgeSoak(soak, nil, soakResult(60, flat, flat, zero, flat), 59*time.Second); j.Unjudgeable == "" {
		t.Errorf("a warm-up that leaves one interval judged: %+v", j)
	}
}

func names(ns []benchv1.SoakCheckName) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

// A drop beyond the limit whose interval reaches inside it (a short, noisy
// soak) is inconclusive: it passes, and the reasons say so.
func TestJudgeSoakInconclusive(t *testing.T) {
	soak := &benchv1.CapacitySoak{MaxThroughputDropPercent: 5}
	j := JudgeSoak(soak, nil, soakResult(12, func(x float64) float64 { return 1 - 0.05*x }, flat, zero, flat), 0)
	c := j.Checks[0]
	if !j.Passed || !c.Passed || c.ChangePercent > -5 || c.CIHighPercent < -5 || !strings.HasPrefix(j.Reasons[0], "ThroughputDrop inconclusive: ") {
		t.Errorf("%+v; %v", c, j.Reasons)
	}
}
