package results

import (
	"sort"
	"time"
)

// DefaultAPDEXBudgetBytes bounds the JSON of the APDEX windows: past it,
// the windows double (their counts add up exactly).
const DefaultAPDEXBudgetBytes = 20 << 10

// APDEX counts of a window, in the time series: what several load
// generators' windows add up to, and the score recomputed from them.
const (
	APDEXSeries           = "apdex"
	APDEXSatisfiedSeries  = "apdexSatisfied"
	APDEXToleratingSeries = "apdexTolerating"
	APDEXRequestsSeries   = "apdexRequests"
)

// APDEXWindows counts, per window of time and operation, the requests that
// satisfied (within T) and tolerated (within 4T) the operation's APDEX
// target, so that the APDEX of every minute can be reported and summed
// across load generators. Memory grows with the number of windows until
// their JSON reaches the budget, then the windows double.
type APDEXWindows struct {
	window  time.Duration
	budget  int
	origin  time.Time
	started bool
	last    time.Duration
	windows []map[string]*[3]int64 // satisfied, tolerating, all
	size    int
}

// NewAPDEXWindows returns empty windows (zero: DefaultAPDEXBudgetBytes).
func NewAPDEXWindows(window time.Duration, budget int) *APDEXWindows {
	if window <= 0 {
		window = time.Minute
	}
	if budget <= 0 {
		budget = DefaultAPDEXBudgetBytes
	}
	return &APDEXWindows{window: window, budget: budget}
}

// Start sets the windows' origin unless they have one.
func (w *APDEXWindows) Start(t time.Time) {
	if !w.started {
		w.origin, w.started = t, true
	}
}

// Observe counts one request of op that took micros against target.
func (w *APDEXWindows) Observe(t time.Time, op string, micros int64, target time.Duration) {
	w.Start(t)
	d := max(t.Sub(w.origin), 0)
	w.last = max(w.last, d)
	i := int(d / w.window)
	for len(w.windows) <= i {
		w.windows = append(w.windows, map[string]*[3]int64{})
		w.size += 24
	}
	c := w.windows[i][op]
	if c == nil {
		c = &[3]int64{}
		w.windows[i][op] = c
		w.size += 4 * (len(op) + 24)
	}
	tu := target.Microseconds()
	switch {
	case micros <= tu:
		c[0]++
	case micros <= 4*tu:
		c[1]++
	}
	c[2]++
	if w.size > w.budget && len(w.windows) > 1 {
		w.coarsen()
	}
}

func (w *APDEXWindows) coarsen() {
	out := make([]map[string]*[3]int64, 0, (len(w.windows)+1)/2)
	w.size = 0
	for i := 0; i < len(w.windows); i += 2 {
		m := w.windows[i]
		if i+1 < len(w.windows) {
			for op, c := range w.windows[i+1] {
				if a := m[op]; a != nil {
					a[0], a[1], a[2] = a[0]+c[0], a[1]+c[1], a[2]+c[2]
				} else {
					m[op] = c
				}
			}
		}
		out = append(out, m)
		w.size += 24
		for op := range m {
			w.size += 4 * (len(op) + 24)
		}
	}
	w.windows = out
	w.window *= 2
}

// Window is the windows' length after any coarsening.
func (w *APDEXWindows) Window() time.Duration { return w.window }

// Points returns one point per window, at its end (the last window ends at
// the last request), with per operation apdex[op] and the counts it comes from.
func (w *APDEXWindows) Points() []Point {
	var out []Point
	for i, m := range w.windows {
		end := min(time.Duration(i+1)*w.window, w.last)
		p := Point{ElapsedSeconds: round6(end.Seconds()), Values: map[string]float64{}}
		ops := make([]string, 0, len(m))
		for op := range m {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		for _, op := range ops {
			c := m[op]
			if c[2] == 0 {
				continue
			}
			p.Values[Key{Name: APDEXSatisfiedSeries, Operation: op}.String()] = float64(c[0])
			p.Values[Key{Name: APDEXToleratingSeries, Operation: op}.String()] = float64(c[1])
			p.Values[Key{Name: APDEXRequestsSeries, Operation: op}.String()] = float64(c[2])
			p.Values[Key{Name: APDEXSeries, Operation: op}.String()] = round6((float64(c[0]) + float64(c[1])/2) / float64(c[2]))
		}
		if len(p.Values) > 0 {
			out = append(out, p)
		}
	}
	return out
}
