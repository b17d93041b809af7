package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

const (
	// DefaultDipPercent: throughput below this share of a measurement's
	// median is a dip.
	DefaultDipPercent = 50
	// DriftWarnPercent: a significant drift of at least this share of the
	// mean over the steady window is a warning even below
	// validity.maxDriftPercent; smaller ones are only its driftPercent.
	DriftWarnPercent = 10
	// RampUpParameter is the result parameter in which a tool reports, in
	// whole minutes, a ramp-up at the start of its progress series that its
	// own figures already leave out (HammerDB's rampup): the stability
	// checks leave it out too, before the warm-up.
	RampUpParameter = "rampUpMinutes"
	// minP is the smallest p-value a drift reports; below it, "p < minP".
	minP = 1e-6
	// minEventsPerInterval is the fewest events an interval of the steady
	// window must hold on average for stalls, dips and drift to be judged:
	// below it, a steady stream counts 0 or 1 in an interval by chance.
	minEventsPerInterval = 20
)

// Dip is a stretch of a measurement in which its throughput stayed below
// validity.dipPercent of its level (as a stall's), without stalling all
// along.
type Dip struct {
	Stall
	// Mean is the throughput over the dip.
	Mean float64
}

func (d Dip) String() string {
	return fmt.Sprintf("%s dipped from %s to %s into the measurement (%s at %.0f%% of its %s; lowest %.4g, %s %.4g)",
		d.Series, d.From, d.To, d.Length(), 100*d.Mean/d.Level, d.levelName(), d.Lowest, d.levelName(), d.Level)
}

// Drift is the least-squares trend of the throughput over the steady
// window, as the total change over the window in percent of its mean, with
// the t-test of the slope. Neighbouring points of a progress series are
// correlated, which makes the test somewhat too ready to call a drift
// significant: hence a warning needs DriftWarnPercent as well.
type Drift struct {
	Series   string
	From, To time.Duration
	// Percent is the change the slope makes over the window, in percent of
	// the mean; CILow and CIHigh bound it at 95 %.
	Percent, CILow, CIHigh float64
	T, P                   float64
	DF                     int
}

// Significant says whether the slope differs from zero at the 5 % level.
func (d Drift) Significant() bool { return d.P < 0.05 }

func (d Drift) String() string {
	p := fmt.Sprintf("p = %.2g", d.P)
	if d.P <= minP {
		p = fmt.Sprintf("p < %.0e", minP)
	}
	return fmt.Sprintf("%s drifted by %+.1f%% of its mean from %s to %s into the measurement (least-squares slope, 95%% CI %+.1f%% to %+.1f%%; t = %.2f, %d df, %s)",
		d.Series, d.Percent, d.From, d.To, d.CILow, d.CIHigh, d.T, d.DF, p)
}

// Stability is what the checks find in the steady part of a measurement's
// progress series: what follows its warm-up (and any ramp-up the tool
// reported under RampUpParameter).
type Stability struct {
	Series string
	// Skipped is the start of the series left out; From and To bound the
	// steady window, in time into the measurement.
	Skipped, From, To time.Duration
	// Median and Mean are the window's; Mean weighs each interval by its
	// length: the steady-state throughput.
	Median, Mean float64
	Stalls       []Stall
	// Dips are those that are not within a stall.
	Dips  []Dip
	Drift *Drift
}

// Analyse judges the steady window of r's progress series. It returns
// false, with why when something was asked that cannot be given, when there
// is no window of at least three intervals to judge; true with why, and
// neither stalls, dips nor drift, when its intervals hold too few events
// on average to tell a stall from chance (the series are rates per second:
// the mean times the interval is about the events in one, more for a
// per-minute rate, which only errs towards judging).
func Analyse(r *Result, warmup time.Duration, stallPercent, dipPercent float64) (Stability, bool, string) {
	return analyse(r, warmup, 0, stallPercent, dipPercent)
}

// analyse is Analyse of the steady window that ends until into the
// measurement (a disturbed one's: before its first disturbance); zero
// until: to its end.
func analyse(r *Result, warmup, until time.Duration, stallPercent, dipPercent float64) (Stability, bool, string) {
	key, all := progressOf(r)
	skip := warmup + rampUp(r)
	s := Stability{Series: key, Skipped: skip}
	var ivs []progressInterval
	for _, iv := range all {
		if iv.from >= skip.Seconds()-1e-9 && (until <= 0 || iv.to <= until.Seconds()+1e-9) {
			ivs = append(ivs, iv)
		}
	}
	if len(ivs) < 3 {
		switch {
		case len(all) == 0 && warmup > 0:
			return s, false, "workload.warmup is set, but the tool reported no progress series: no steady-state throughput"
		case len(all) >= 3:
			return s, false, fmt.Sprintf("the warm-up of %s leaves %d of the %d intervals of the progress series, which ends %s into the measurement: too few for a steady-state throughput or for stalls, dips and drift",
				skip, len(ivs), len(all), seconds(all[len(all)-1].to))
		}
		return s, false, ""
	}
	s.From, s.To = seconds(ivs[0].from), seconds(ivs[len(ivs)-1].to)
	s.Median, s.Mean = medianOf(ivs), timeMean(ivs)
	interval := (ivs[len(ivs)-1].to - ivs[0].from) / float64(len(ivs))
	switch events := s.Mean * interval; {
	case s.Mean <= 0:
		// Nothing got through: the run measured nothing, which fails it.
		return s, true, ""
	case events < minEventsPerInterval:
		return s, true, fmt.Sprintf("%s: too few events per interval to judge stalls, dips or drift: mean %.3g per interval of %s, below %d; lengthen the interval (the tool's progress or reporting period) or raise the load",
			key, events, seconds(interval), minEventsPerInterval)
	}
	s.Stalls = stallsIn(key, ivs, stallPercent)
	s.Dips = dipsIn(key, ivs, dipPercent, s.Stalls)
	s.Drift = driftOf(key, ivs)
	return s, true, ""
}

func rampUp(r *Result) time.Duration {
	m, err := strconv.Atoi(r.Parameters[RampUpParameter])
	if err != nil || m <= 0 {
		return 0
	}
	return time.Duration(m) * time.Minute
}

func dipsIn(key string, ivs []progressInterval, percent float64, stalls []Stall) []Dip {
	var out []Dip
	for _, d := range stretchesBelow(key, ivs, percent) {
		if !withinStall(d, stalls) {
			out = append(out, d)
		}
	}
	return out
}

// withinStall: a stall is a dip deep enough, and is reported as one.
func withinStall(d Dip, stalls []Stall) bool {
	for _, s := range stalls {
		if d.From >= s.From && d.To <= s.To {
			return true
		}
	}
	return false
}

// driftOf fits throughput against the middle of each interval.
func driftOf(key string, ivs []progressInterval) *Drift { return lineOf(key, ivs, false) }

// lineOf fits the least-squares line of a series against the middle of
// each interval and gives the change it makes over the window: in percent
// of the series' mean, or, absolute, in the series' own unit (percentage
// points for a share). It is nil for fewer than three intervals, a window
// of one instant, or, relative, a mean that is not positive.
func lineOf(key string, ivs []progressInterval, absolute bool) *Drift {
	n := float64(len(ivs))
	if len(ivs) < 3 {
		return nil
	}
	var mx, my float64
	for _, iv := range ivs {
		mx += (iv.from + iv.to) / 2
		my += iv.v
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for _, iv := range ivs {
		dx := (iv.from+iv.to)/2 - mx
		sxx += dx * dx
		sxy += dx * (iv.v - my)
	}
	if sxx == 0 || (!absolute && my <= 0) {
		return nil
	}
	slope := sxy / sxx
	var ss float64
	for _, iv := range ivs {
		e := iv.v - my - slope*((iv.from+iv.to)/2-mx)
		ss += e * e
	}
	df := len(ivs) - 2
	se := math.Sqrt(ss / float64(df) / sxx)
	toPercent := ivs[len(ivs)-1].to - ivs[0].from
	if !absolute {
		toPercent *= 100 / my
	}
	d := &Drift{Series: key, From: seconds(ivs[0].from), To: seconds(ivs[len(ivs)-1].to), DF: df, Percent: slope * toPercent}
	half := stats.StudentQuantile(0.975, float64(df)) * se * toPercent
	d.CILow, d.CIHigh = d.Percent-half, d.Percent+half
	switch {
	case se > 0:
		d.T = slope / se
	case slope != 0:
		d.T = math.Copysign(math.Inf(1), slope)
	}
	d.P = max(stats.StudentTwoSided(d.T, float64(df)), minP)
	if math.IsNaN(d.P) { // a flat series: no slope at all
		d.P = 1
	}
	return d
}

// judgeStability reports the stalls, dips and drift of the steady window
// as warnings, makes the measurement Invalid past each one's maximum, and
// adds the steady-state throughput when a warm-up was asked for, and the
// drift as a detail metric.
func judgeStability(r *Result, t Thresholds) {
	stallPct, dipPct := t.StallPercent, t.DipPercent
	if stallPct <= 0 {
		stallPct = DefaultStallPercent
	}
	if dipPct <= 0 {
		dipPct = DefaultDipPercent
	}
	s, ok, why := analyse(r, t.Warmup, t.SteadyUntil, stallPct, dipPct)
	if why != "" {
		r.Warnings = append(r.Warnings, why)
	}
	if !ok {
		return
	}
	judgeStretches(r, s.Stalls, fmt.Sprintf("below %g%% of its", stallPct), "validity.maxStall", t.MaxStall)
	judgeStretches(r, s.Dips, fmt.Sprintf("below validity.dipPercent %g%% of its", dipPct), "validity.maxDip", t.MaxDip)
	op, unit := steadyKey(r, s.Series)
	if s.Drift != nil {
		judgeDrift(r, *s.Drift, op, t.MaxDriftPercent)
	}
	if t.Warmup > 0 {
		addSecond(r, Metric{Name: SteadyName(s.Series), Operation: op, Value: s.Mean, Unit: unit, Direction: HigherIsBetter})
	}
}

// judgeStretches warns of each stall or dip, below a share of its level,
// and makes the measurement Invalid for those longer than maxLength, the
// setting named limit.
func judgeStretches[S interface {
	fmt.Stringer
	Length() time.Duration
	basis() string
}](r *Result, stretches []S, below, limit string, maxLength time.Duration) {
	for _, st := range stretches {
		msg := fmt.Sprintf("%s: %s %s", st, below, st.basis())
		if maxLength > 0 && st.Length() > maxLength {
			r.Invalidate("%s, longer than %s %s", msg, limit, maxLength)
			continue
		}
		r.Warnings = append(r.Warnings, msg)
	}
}

// judgeDrift records the drift, and judges it only when the slope is
// significant.
func judgeDrift(r *Result, d Drift, op string, maxPercent float64) {
	r.Add(Metric{Name: "driftPercent", Operation: op, Value: d.Percent, Unit: "%", Direction: Neutral, Detail: true})
	switch size := math.Abs(d.Percent); {
	case !d.Significant():
	case maxPercent > 0 && size > maxPercent:
		r.Invalidate("%s, above validity.maxDriftPercent %g", d, maxPercent)
	case size >= DriftWarnPercent:
		r.Warnings = append(r.Warnings, d.String())
	}
}

// SteadyName names the steady-state throughput of a progress series:
// transactionsPerSecond gives steadyTransactionsPerSecond.
func SteadyName(series string) string {
	if series == "" {
		return ""
	}
	return "steady" + strings.ToUpper(series[:1]) + series[1:]
}

// steadyKey is the operation and unit of the metric the series measures.
func steadyKey(r *Result, series string) (op, unit string) {
	if series == r.Primary.Name {
		op = r.Primary.Operation
	}
	for _, m := range r.Metrics {
		if m.Name == series && m.Operation == op && !m.IsTelemetry() {
			return op, m.Unit
		}
	}
	return op, "/s"
}

// addSecond puts the steady-state throughput where Headline shows it
// right after the primary metric, ahead of what the status and the
// termination message cut.
func addSecond(r *Result, m Metric) {
	at := 0
	if len(r.Metrics) > 0 && r.Metrics[0].Key() == r.Primary {
		at = 1
	}
	r.Metrics = append(r.Metrics[:at], append([]Metric{m}, r.Metrics[at:]...)...)
}
