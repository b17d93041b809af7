package disturb

import (
	"math"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// series is a 1-second throughput series of the values, with extra keys
// at some seconds.
func series(key string, values []float64, extra map[int]map[string]float64) *results.Result {
	r := results.New("t")
	start := t0
	r.StartTime = &start
	for i, v := range values {
		p := results.Point{ElapsedSeconds: float64(i + 1), Values: map[string]float64{key: v}}
		for k, x := range extra[i+1] {
			p.Values[k] = x
		}
		r.TimeSeries = append(r.TimeSeries, p)
	}
	return r
}

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func figures(t *testing.T, c Card) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range c.Metrics() {
		if m.Source != Source || m.Operation != c.Name {
			t.Fatalf("metric %+v is not the card's", m)
		}
		out[m.Name] = m.Value
	}
	return out
}

func near(t *testing.T, f map[string]float64, name string, want float64) {
	t.Helper()
	got, ok := f[name]
	if !ok || math.Abs(got-want) > 1e-6 {
		t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
	}
}

// The card of a lost primary, by hand: 1000/s for 30 s, nothing for 3 s
// after it took effect at 30 s, 400/s for 5 s, then 1000/s again.
func TestCardOfAFailover(t *testing.T) {
	var v []float64
	for i := 1; i <= 60; i++ {
		switch {
		case i <= 30:
			v = append(v, 1000)
		case i <= 33:
			v = append(v, 0)
		case i <= 38:
			v = append(v, 400)
		default:
			v = append(v, 1000)
		}
	}
	r := series("transactionsPerSecond", v, map[int]map[string]float64{
		20: {"latencyAverageMillis": 2}, 34: {"latencyAverageMillis": 900}, 45: {"latencyAverageMillis": 3},
		31: {"failedTransactions": 7}})
	c, err := Compute(r, Window{Name: "lose-primary", Kind: "memberLoss", Requested: at(29.5), TookEffect: at(30),
		NewPrimary: at(32.5), FullRedundancy: at(50), LedgerAcknowledged: 400, LedgerLost: 0}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := figures(t, c)
	near(t, f, FigureSteadyThroughput, 1000)
	near(t, f, FigureTookEffectSeconds, 0.5)
	near(t, f, FigureDetectSeconds, 1)      // the second from 30 to 31 had none
	near(t, f, FigureUnavailableSeconds, 3) // 30..33
	near(t, f, FigureDipLowestPercent, 0)
	near(t, f, FigureRecoverySeconds, 8) // back at 1000 from 38 s on, 8 s after the loss
	near(t, f, FigureOperationsLost, 3*1000+5*600)
	near(t, f, FigureErrorsDuring, 7)
	near(t, f, FigureWorstLatencyMillis, 900)
	near(t, f, FigureNewPrimarySeconds, 2.5)
	near(t, f, FigureFullRedundancySeconds, 20)
	near(t, f, FigureLedgerAcknowledged, 400)
	near(t, f, FigureLedgerLost, 0)
	near(t, f, FigureToolGaveUp, 0)
	if !c.Recovered || c.BeforeTo != 30 || c.DuringFrom != 30 || c.AfterTo != 38 {
		t.Errorf("windows %+v", c)
	}
}

// A load that lasts: recovery counts from its end; a target that never
// recovers says so and counts to the end; one that never dipped lost
// nothing and recovered at once.
func TestCardOfALoadThatLasts(t *testing.T) {
	v := make([]float64, 40)
	for i := range v {
		v[i] = 500
		if i >= 10 && i < 20 { // 10..20 s under load
			v[i] = 250
		}
		if i >= 20 && i < 22 { // 2 s to come back
			v[i] = 450
		}
	}
	c, err := Compute(series("opsPerSecond", v, nil), Window{Name: "bg", Requested: at(10), TookEffect: at(10), Ended: at(20)}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f := figures(t, c)
	near(t, f, FigureSteadyThroughput, 500)
	near(t, f, FigureRecoverySeconds, 2)
	near(t, f, FigureDipLowestPercent, 50)
	near(t, f, FigureOperationsLost, 10*250+2*50)
	near(t, f, FigureUnavailableSeconds, 0)
	if c.BeforeFrom != 2 {
		t.Errorf("the warm-up is not left out of the steady window: %+v", c)
	}

	never := append([]float64{}, v[:20]...)
	for len(never) < 30 {
		never = append(never, 300)
	}
	c, _ = Compute(series("opsPerSecond", never, nil), Window{Name: "bg", Requested: at(10), TookEffect: at(10), Ended: at(20)}, 0)
	f = figures(t, c)
	near(t, f, FigureRecoverySeconds, 10)
	if c.Recovered || len(c.Warnings) == 0 {
		t.Errorf("a target that never recovered: recovered %v, warnings %q", c.Recovered, c.Warnings)
	}

	flat := make([]float64, 30)
	for i := range flat {
		flat[i] = 800
	}
	c, _ = Compute(series("opsPerSecond", flat, nil), Window{Name: "bg", Requested: at(10), TookEffect: at(10), Ended: at(15)}, 0)
	f = figures(t, c)
	near(t, f, FigureRecoverySeconds, 0)
	near(t, f, FigureOperationsLost, 0)
	near(t, f, FigureDipLowestPercent, 100)
	if _, ok := f[FigureDetectSeconds]; ok {
		t.Error("a detection of nothing")
	}
}

// HammerDB's transaction counter is per minute: the operations lost are
// counted per second; a disturbance that takes effect inside an interval
// counts its overlap only.
func TestCardOfAPerMinuteCoarseSeries(t *testing.T) {
	r := results.New("hammerdb")
	start := t0
	r.StartTime = &start
	for i, tpm := range []float64{60000, 60000, 60000, 60000, 30000, 60000, 60000, 60000, 60000} {
		r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: float64(10 * (i + 1)), Values: map[string]float64{"tpm": tpm}})
	}
	// Took effect at 45 s, halfway through the interval 40..50 at half
	// the rate: 5 s of it count, at 500 transactions a second lost.
	c, err := Compute(r, Window{Name: "noise", Requested: at(45), TookEffect: at(45), Ended: at(47)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := figures(t, c)
	near(t, f, FigureSteadyThroughput, 60000)
	near(t, f, FigureOperationsLost, 5*500)
	near(t, f, FigureDipLowestPercent, 50)
	if c.Unit != "per minute" {
		t.Errorf("unit %q", c.Unit)
	}
}

// Too short a steady window gives the figures that need none, and says
// why the rest are missing; a result without a throughput series gives no
// card.
func TestCardWithoutASteadyWindow(t *testing.T) {
	c, err := Compute(series("opsPerSecond", []float64{100, 100, 0, 0, 100}, nil), Window{Name: "x", Requested: at(2), TookEffect: at(2)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := figures(t, c)
	near(t, f, FigureUnavailableSeconds, 2)
	if _, ok := f[FigureRecoverySeconds]; ok || len(c.Warnings) == 0 {
		t.Errorf("a recovery from no steady state: %v %q", f, c.Warnings)
	}
	r := results.New("t")
	r.StartTime = &t0
	if _, err := Compute(r, Window{Name: "x", TookEffect: at(1)}, 0); err == nil {
		t.Error("a card from no series")
	}
}

// A tool that gave up (pgbench aborts the clients that lose their
// connection) leaves no recovery to measure: the card says so rather than
// reporting a recovery at once; a series that ends before the effect
// shows nothing of it.
func TestCardOfAToolThatGaveUp(t *testing.T) {
	v := []float64{1000, 1000, 1000, 1000, 1000, 1000}
	c, err := Compute(series("transactionsPerSecond", v, nil), Window{Name: "x", Requested: at(5.5), TookEffect: at(5.5), ToolGaveUp: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := figures(t, c)
	if _, ok := f[FigureRecoverySeconds]; ok || c.Recovered || len(c.Warnings) == 0 {
		t.Errorf("a recovery after the tool gave up: %v %q", f, c.Warnings)
	}
	near(t, f, FigureToolGaveUp, 1)
	near(t, f, FigureGaveUpAfterSeconds, 0.5)
	c, _ = Compute(series("transactionsPerSecond", v, nil), Window{Name: "x", Requested: at(7), TookEffect: at(7), ToolGaveUp: true}, 0)
	f = figures(t, c)
	if _, ok := f[FigureUnavailableSeconds]; ok || len(c.Warnings) == 0 {
		t.Errorf("figures of an effect the series does not reach: %v %q", f, c.Warnings)
	}
}

func TestNeighbourMetrics(t *testing.T) {
	ms := NeighbourMetrics("noise", map[string]float64{"cpuSeconds": 2.5, "diskSyncs": 838, "bad": math.NaN()})
	if len(ms) != 2 || ms[0].Name != "neighbourCpuSeconds" || ms[0].Unit != "s" || ms[1].Name != "neighbourDiskSyncs" || ms[1].Unit != "count" ||
		ms[0].Operation != "noise" || ms[0].Source != Source || !ms[0].Detail {
		t.Errorf("neighbour metrics %+v", ms)
	}
}
