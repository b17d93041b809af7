// Package disturb computes a disturbance card: how a target took what
// happened to it during a measurement (a background SQL load, a noisy
// neighbour, a lost member), from the measurement's time series at its
// finest resolution and the instants the disturbance was requested, took
// effect and ended. Every figure is a metric of the measurement (source
// "disturbance", operation the disturbance's name), so that a run's summary
// gives its median and interval over the repetitions and a comparison
// compares it like any metric. docs/disturbances.md says what each means.
//
// The throughput series is the one the stability checks read
// (results.Throughput: the tool's progress lines — pgbench's
// transactionsPerSecond, memtier's and YCSB's opsPerSecond, k6's
// requestsPerSecond, HammerDB's tpm, a per-minute rate converted to per
// second for the operations lost); each point is the throughput of the
// interval that ends at it. Latency series (the worst client latency) are
// the time series' latencyMaxMillis, else the highest percentile present
// (latencyP9999Millis … latencyP50Millis), else latencyAverageMillis, of
// every operation (name[operation]); error series are errorsPerSecond (a
// rate), failedTransactions (pgbench's count per progress interval) and
// errorPercent (a share of the interval's throughput).
package disturb

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Source is the source of a card's metrics.
const Source = "disturbance"

// RecoveredPercent is the share of the steady throughput a target is back
// at when it has recovered; recoveryIntervals and recoverySeconds are how
// long it must hold there.
const (
	RecoveredPercent  = 95.0
	recoveryIntervals = 3
	recoverySeconds   = 3.0
)

// Window is one disturbance as it happened in one measurement; times are
// absolute, on the clock of the result's StartTime.
type Window struct {
	Name, Kind string
	Requested  time.Time
	// TookEffect is when the object it acted on showed it; zero when it
	// never did (the card then counts from Requested, and says so).
	TookEffect time.Time
	// Ended is when it stopped acting; zero for an instantaneous fault (a
	// member loss): then TookEffect.
	Ended time.Time
	// NewPrimary and FullRedundancy: a member loss's new primary and
	// every instance ready again; zero when not seen.
	NewPrimary, FullRedundancy time.Time
	// ToolGaveUp: the tool itself ended with an error.
	ToolGaveUp bool
	// LedgerAcknowledged writes of the write ledger (0: no ledger) and
	// LedgerLost of them missing afterwards.
	LedgerAcknowledged, LedgerLost int
	// Errors during it by class, as the runner's own sessions saw them.
	Errors map[string]float64
}

// Card is a disturbance's figures; a figure it could not compute is NaN
// and left out of Metrics.
type Card struct {
	Name, Kind string
	// The windows in seconds from the measurement's start: before (the
	// steady state), during (from the effect to the end of the
	// disturbance) and after (to the recovery, or the series' end).
	BeforeFrom, BeforeTo, DuringFrom, DuringTo, AfterTo float64

	SteadyThroughput, TookEffectSeconds, DetectSeconds, UnavailableSeconds float64
	WorstLatencyMillis, DipLowestPercent, RecoverySeconds, OperationsLost  float64
	ErrorsDuring, NewPrimarySeconds, FullRedundancySeconds                 float64
	LedgerAcknowledged, LedgerLost                                         float64
	Recovered, ToolGaveUp                                                  bool
	// GaveUpAfterSeconds is when the tool's series ended, from the
	// effect, when the tool gave up; when the runner restarted it
	// (results.Restarts), when its first run ended.
	GaveUpAfterSeconds float64
	// ToolRestarts is how many times the runner started the tool again
	// (0: never, NaN: not a restartable tool or no member loss) and
	// ResumedAfterSeconds when its last run started, from the effect,
	// when that run reached the tool's end.
	ToolRestarts, ResumedAfterSeconds float64
	// Unit is the throughput series' unit, per second (or per minute).
	Unit     string
	Warnings []string
}

// interval is the throughput of a stretch of the measurement, in seconds
// from its start.
type interval struct{ from, to, v float64 }

func (iv interval) overlap(a, b float64) float64 {
	return math.Max(0, math.Min(iv.to, b)-math.Max(iv.from, a))
}

// Compute makes the card of w from r's time series. warmup is left out of
// the steady window. It fails only when r cannot give one: no start time,
// no throughput series, no instant to count from.
func Compute(r *results.Result, w Window, warmup time.Duration) (Card, error) {
	c := Card{Name: w.Name, Kind: w.Kind, ToolGaveUp: w.ToolGaveUp}
	nan := math.NaN()
	c.DetectSeconds, c.WorstLatencyMillis, c.DipLowestPercent, c.NewPrimarySeconds, c.FullRedundancySeconds = nan, nan, nan, nan, nan
	c.TookEffectSeconds, c.LedgerAcknowledged, c.LedgerLost, c.GaveUpAfterSeconds = nan, nan, nan, nan
	c.ToolRestarts, c.ResumedAfterSeconds = nan, nan
	if r.StartTime == nil {
		return c, errors.New("the result has no start time")
	}
	key, pts := results.Throughput(r)
	if key == "" || len(pts) == 0 {
		return c, errors.New("the tool reported no throughput over time (a progress series) to cut")
	}
	c.Unit = "per second"
	perSecond := 1.0
	if key == "tpm" {
		c.Unit, perSecond = "per minute", 1.0/60
	}
	ivs := intervals(pts)
	sec := func(t time.Time) float64 { return t.Sub(*r.StartTime).Seconds() }
	effAt := w.TookEffect
	if effAt.IsZero() {
		if w.Requested.IsZero() {
			return c, errors.New("it was never requested")
		}
		effAt = w.Requested
		c.Warnings = append(c.Warnings, "it never took effect: its figures count from its request")
	} else if !w.Requested.IsZero() {
		c.TookEffectSeconds = effAt.Sub(w.Requested).Seconds()
	}
	eff := sec(effAt)
	end := eff
	if !w.Ended.IsZero() && sec(w.Ended) > eff {
		end = sec(w.Ended)
	}
	last := ivs[len(ivs)-1].to
	c.BeforeFrom, c.BeforeTo, c.DuringFrom, c.DuringTo = warmup.Seconds(), eff, eff, end
	if !w.NewPrimary.IsZero() {
		c.NewPrimarySeconds = w.NewPrimary.Sub(effAt).Seconds()
	}
	if !w.FullRedundancy.IsZero() {
		c.FullRedundancySeconds = w.FullRedundancy.Sub(effAt).Seconds()
	}
	if w.LedgerAcknowledged > 0 || w.LedgerLost > 0 {
		c.LedgerAcknowledged, c.LedgerLost = float64(w.LedgerAcknowledged), float64(w.LedgerLost)
	}
	if w.ToolGaveUp {
		c.GaveUpAfterSeconds = math.Max(0, last-eff)
	}
	if rs := r.Restarts; rs != nil {
		c.ToolRestarts, c.GaveUpAfterSeconds = float64(rs.Runs-1), rs.EndedSeconds-eff
		resumed := "it never ran to its end again"
		if rs.Resumed {
			c.ResumedAfterSeconds = rs.ResumedSeconds - eff
			resumed = fmt.Sprintf("its last run, from %.2f s after the effect, ran to its end", c.ResumedAfterSeconds)
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("the tool ended %.2f s after the disturbance took effect and was started again %d times by the runner; %s", c.GaveUpAfterSeconds, rs.Runs-1, resumed))
	}
	if last <= eff {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the tool's %s series ends %.1f s into the measurement, before the disturbance took effect at %.1f s: nothing shows its effect", key, last, eff))
		c.SteadyThroughput, c.UnavailableSeconds, c.RecoverySeconds, c.OperationsLost, c.ErrorsDuring = nan, nan, nan, nan, nan
		return c, nil
	}
	c.UnavailableSeconds = longestZero(ivs, eff)
	errs := errorsPerInterval(r, ivs)
	steady, n := steadyMean(ivs, warmup.Seconds(), eff)
	c.SteadyThroughput = steady
	if n < 3 || steady <= 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d intervals of %s before it took effect %.1f s into the measurement (after the warm-up): too few for a steady throughput, so no dip, recovery or operations lost", n, key, eff))
		c.SteadyThroughput, c.RecoverySeconds, c.OperationsLost = nan, nan, nan
		c.AfterTo = last
		c.ErrorsDuring = errorsIn(ivs, errs, eff, last) + sum(w.Errors)
		c.WorstLatencyMillis = worstLatency(r, eff, last)
		return c, nil
	}
	limit := steady * RecoveredPercent / 100
	for i, iv := range ivs {
		if iv.to > eff && (iv.v < limit || errs[i] > 0) {
			c.DetectSeconds = iv.to - eff
			break
		}
	}
	recovered, ok := recoveryAt(ivs, end, limit)
	fell := !math.IsNaN(c.DetectSeconds)
	switch {
	case !fell && w.ToolGaveUp:
		c.RecoverySeconds, c.DetectSeconds, recovered = nan, nan, last
		c.Warnings = append(c.Warnings, fmt.Sprintf("the tool gave up %.1f s after the disturbance took effect, its throughput still steady until then", last-eff))
	case !fell:
		c.Recovered, c.RecoverySeconds, recovered = true, 0, end
	case ok:
		c.Recovered, c.RecoverySeconds = true, math.Max(0, recovered-end)
	case w.ToolGaveUp:
		// What happened after the tool's last line is not known.
		c.RecoverySeconds, recovered = nan, last
		c.Warnings = append(c.Warnings, fmt.Sprintf("the tool gave up: its series ends %.1f s after the disturbance took effect, before the throughput recovered", last-eff))
	default:
		c.RecoverySeconds, recovered = last-end, last
		c.Warnings = append(c.Warnings, fmt.Sprintf("the throughput had not recovered to %g %% of its steady %.4g %s when the measurement ended, %.1f s after the disturbance", RecoveredPercent, steady, c.Unit, last-end))
	}
	to := math.Max(recovered, end)
	c.AfterTo = to
	lowest := math.Inf(1)
	for _, iv := range ivs {
		if o := iv.overlap(eff, to); o > 0 {
			lowest = math.Min(lowest, iv.v)
			c.OperationsLost += math.Max(0, steady-iv.v) * o * perSecond
		}
	}
	if !math.IsInf(lowest, 1) {
		c.DipLowestPercent = 100 * math.Min(lowest, steady) / steady
	}
	c.ErrorsDuring = errorsIn(ivs, errs, eff, to) + sum(w.Errors)
	c.WorstLatencyMillis = worstLatency(r, eff, to)
	return c, nil
}

// intervals are a throughput series' points as intervals: each from the
// point before (or the start) to its own.
func intervals(pts [][2]float64) []interval {
	out := make([]interval, 0, len(pts))
	prev := 0.0
	for _, p := range pts {
		if p[0] > prev {
			out = append(out, interval{from: prev, to: p[0], v: p[1]})
		}
		prev = p[0]
	}
	return out
}

// steadyMean is the time-weighted mean of the intervals wholly within
// [from, to], and how many there are.
func steadyMean(ivs []interval, from, to float64) (float64, int) {
	var sum, length float64
	n := 0
	for _, iv := range ivs {
		if iv.from >= from-1e-9 && iv.to <= to+1e-9 {
			sum, length, n = sum+iv.v*(iv.to-iv.from), length+iv.to-iv.from, n+1
		}
	}
	if length == 0 {
		return 0, 0
	}
	return sum / length, n
}

// recoveryAt is where the first stretch at or above limit starts, from
// the interval that ends after end: one of at least recoveryIntervals
// intervals and recoverySeconds, or one that lasts to the series' end.
func recoveryAt(ivs []interval, end, limit float64) (float64, bool) {
	for i := 0; i < len(ivs); i++ {
		if ivs[i].to <= end || ivs[i].v < limit {
			continue
		}
		j := i
		for j+1 < len(ivs) && ivs[j+1].v >= limit {
			j++
		}
		if n := j - i + 1; (n >= recoveryIntervals && ivs[j].to-ivs[i].from >= recoverySeconds) || (j == len(ivs)-1 && n >= 2) {
			return math.Max(ivs[i].from, end), true
		}
		i = j
	}
	return 0, false
}

// longestZero is the longest stretch of consecutive intervals with no
// operation, from eff on.
func longestZero(ivs []interval, eff float64) float64 {
	best, run := 0.0, 0.0
	for _, iv := range ivs {
		o := iv.overlap(eff, math.Inf(1))
		switch {
		case o <= 0:
		case iv.v <= 0:
			run += o
			best = math.Max(best, run)
		default:
			run = 0
		}
	}
	return best
}

// errorsPerInterval are the errors of each throughput interval, from the
// error series at the same instants.
func errorsPerInterval(r *results.Result, ivs []interval) []float64 {
	out := make([]float64, len(ivs))
	byEnd := map[float64]int{}
	for i, iv := range ivs {
		byEnd[iv.to] = i
	}
	for _, p := range r.TimeSeries {
		i, ok := byEnd[p.ElapsedSeconds]
		if !ok {
			continue
		}
		length := ivs[i].to - ivs[i].from
		for k, v := range p.Values {
			switch name, _, _ := strings.Cut(k, "["); name {
			case "errorsPerSecond":
				out[i] += v * length
			case "failedTransactions":
				out[i] += v
			case "errorPercent":
				if !strings.Contains(k, "[") { // the whole's share, not each operation's again
					out[i] += v / 100 * ivs[i].v * length
				}
			}
		}
	}
	return out
}

// errorsIn sums the errors of the intervals within [from, to], each by its
// overlap.
func errorsIn(ivs []interval, errs []float64, from, to float64) float64 {
	total := 0.0
	for i, iv := range ivs {
		if o := iv.overlap(from, to); o > 0 && iv.to > iv.from {
			total += errs[i] * o / (iv.to - iv.from)
		}
	}
	return math.Round(total)
}

// latencyKeys are the latency series a card's worst latency reads, most
// telling first.
var latencyKeys = []string{"latencyMaxMillis", "latencyP9999Millis", "latencyP999Millis", "latencyP99Millis", "latencyP95Millis", "latencyP50Millis", "latencyAverageMillis"}

// worstLatency is the highest value of the most telling latency series in
// the points that end within (from, to + one interval]: NaN without one.
func worstLatency(r *results.Result, from, to float64) float64 {
	for _, name := range latencyKeys {
		worst, seen := math.Inf(-1), false
		for _, p := range r.TimeSeries {
			if p.ElapsedSeconds <= from {
				continue
			}
			for k, v := range p.Values {
				if n, _, _ := strings.Cut(k, "["); n == name {
					seen = true
					if p.ElapsedSeconds <= to+1 {
						worst = math.Max(worst, v)
					}
				}
			}
		}
		if seen && !math.IsInf(worst, -1) {
			return worst
		}
	}
	return math.NaN()
}

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}
