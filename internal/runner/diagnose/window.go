// Package diagnose records where a database server spent its time over a
// measurement's steady window: the statements, wait events or commands
// that a comparison's suspects table ranks by their share of a change.
//
// A window is two snapshots of the server's cumulative statistics
// (PostgreSQL's pg_stat_statements, Valkey's INFO commandstats) and, in
// between, samples of what its active sessions wait on (pg_stat_activity).
// The statistics are never reset: a reset is global to the server, and
// would land inside the window of any other measurement of it (a second
// load generator's, another run's on a shared endpoint); the difference of
// two snapshots is the same figure without touching the server's state,
// so a window started twice, or by a runner restarted, is still right.
// It runs in dbperf-runner beside the statistics poller (dbstats), on its
// own connection, with the same credentials, which never reach an error.
package diagnose

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/profile"
)

// Counters are one statement's, wait event's or command's cumulative
// counters at a snapshot.
type Counters struct {
	Kind       results.DiagnosticKind
	Calls      float64
	TimeMillis float64
	Figures    map[string]float64
}

// Snapshot is the server's cumulative counters at one moment, by item
// name, and its transaction counter.
type Snapshot struct {
	At           time.Time
	Transactions float64
	Items        map[string]Counters
}

// Source reads a server's cumulative statistics.
type Source interface {
	// Name is the statistics' source, as dbstats names it.
	Name() string
	// TransactionsFrom says what Snapshot's transactions count.
	TransactionsFrom() string
	Snapshot(ctx context.Context) (Snapshot, error)
	Close() error
}

// WaitSampler is a Source that can sample what its active sessions wait
// on: a count of sessions per wait event ("CPU" for those running).
type WaitSampler interface {
	SampleWaits(ctx context.Context) (map[string]int, error)
}

// Explainer is a Source that can give a statement's plan.
type Explainer interface {
	Explain(ctx context.Context, statement string) (string, error)
}

// Finisher is a Source that completes the window's differences (turns a
// histogram's buckets into percentiles).
type Finisher interface {
	Finish(d *results.Diagnostics)
}

// Noter is a Source with something to say about what it could read.
type Noter interface {
	Notes() []string
}

// Options configure a window.
type Options struct {
	// WaitInterval is the time between samples of the sessions' waits;
	// zero does not sample them.
	WaitInterval time.Duration
	// StartAfter starts the window this long after Start (the warm-up:
	// the first snapshot is taken again then); EndAfter ends it this long
	// after Start (the first disturbance's offset: the steady window ends
	// there); zero: at Start and at Stop.
	StartAfter, EndAfter time.Duration
	// Plans asks for the plans of the top statements at the window's end.
	Plans bool
	// Top is how many items of each kind are kept (DefaultTop when 0).
	Top int
	// Redact cleans a statement's text of the run's secrets.
	Redact func(string) string
	// Profile, when set, takes an on-CPU profile of the server's
	// processes over the window (profile.Start): its functions become
	// items of their own kind.
	Profile *profile.Options
}

// DefaultTop is how many statements, wait events and commands a window
// keeps of each kind, the most time-consuming.
const DefaultTop = 25

// sampleTimeout is the least time a sample of the waits may take.
const sampleTimeout = 2 * time.Second

// maxPlans is how many of the top statements are explained.
const maxPlans = 10

// Window is a recording under way.
type Window struct {
	src   Source
	o     Options
	began time.Time
	first Snapshot
	mu    sync.Mutex
	waits map[string]int
	n     int
	notes []string
	stop  chan struct{}
	done  chan struct{}
	last  *Snapshot
	// prof is the profile under way, profiled what it gave.
	prof     *profile.Recording
	profiled *results.Profile
}

// Start takes the window's first snapshot and samples the waits until
// Stop (or EndAfter).
func Start(ctx context.Context, src Source, o Options) (*Window, error) {
	first, err := src.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if o.Top <= 0 {
		o.Top = DefaultTop
	}
	w := &Window{src: src, o: o, began: first.At, first: first, waits: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	if o.StartAfter <= 0 {
		w.startProfile(ctx)
	}
	go w.loop(ctx)
	return w, nil
}

func (w *Window) loop(ctx context.Context) {
	defer close(w.done)
	var tick <-chan time.Time
	ws, sampling := w.src.(WaitSampler)
	if sampling && w.o.WaitInterval > 0 {
		t := time.NewTicker(w.o.WaitInterval)
		defer t.Stop()
		tick = t.C
	}
	var begin, end <-chan time.Time
	if w.o.StartAfter > 0 && (w.o.EndAfter == 0 || w.o.StartAfter < w.o.EndAfter) {
		timer := time.NewTimer(time.Until(w.began.Add(w.o.StartAfter)))
		defer timer.Stop()
		begin = timer.C
	}
	if w.o.EndAfter > 0 {
		timer := time.NewTimer(time.Until(w.began.Add(w.o.EndAfter)))
		defer timer.Stop()
		end = timer.C
	}
	failed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case <-begin:
			// The warm-up is over: the window starts again from here.
			if s, err := w.src.Snapshot(ctx); err == nil {
				w.mu.Lock()
				w.first, w.waits, w.n = s, map[string]int{}, 0
				w.mu.Unlock()
			}
			w.startProfile(ctx)
		case <-end:
			w.takeLast(ctx)
			return
		case <-tick:
			// A sample that outlasts its interval delays the next (the
			// ticker drops what it missed); it is cut only when it hangs:
			// a cut query closes its connection.
			sctx, cancel := context.WithTimeout(ctx, max(5*w.o.WaitInterval, sampleTimeout))
			got, err := ws.SampleWaits(sctx)
			cancel()
			w.mu.Lock()
			if err != nil {
				failed++
			} else {
				w.n++
				for k, v := range got {
					w.waits[k] += v
				}
			}
			w.mu.Unlock()
		}
		if failed == 1 {
			failed++ // said once
			w.mu.Lock()
			w.notes = append(w.notes, "a sample of the sessions' waits failed; the others are counted")
			w.mu.Unlock()
		}
	}
}

// startProfile starts the profile, when one is asked for; why it could
// not is a note.
func (w *Window) startProfile(ctx context.Context) {
	if w.o.Profile == nil {
		return
	}
	rec, err := profile.Start(ctx, *w.o.Profile)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.notes = append(w.notes, fmt.Sprintf("no profile of the server's processes: %v", err))
		return
	}
	w.prof = rec
}

// takeLast takes the window's last snapshot, once, and ends the profile.
func (w *Window) takeLast(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last != nil {
		return
	}
	if w.prof != nil {
		p, err := w.prof.Stop(ctx)
		if err != nil {
			w.notes = append(w.notes, fmt.Sprintf("the profile of the server's processes could not be read: %v", err))
		}
		w.prof, w.profiled = nil, p
	}
	s, err := w.src.Snapshot(ctx)
	if err != nil {
		w.notes = append(w.notes, fmt.Sprintf("the window's last snapshot could not be taken: %v", err))
		s = Snapshot{}
	}
	w.last = &s
}

// Stop ends the window (unless EndAfter ended it already), and returns
// the differences of its snapshots, per item, with the waits sampled,
// the plans of the top statements when asked, and what could not be
// read; nil when the last snapshot failed (its reason among the
// warnings returned).
func (w *Window) Stop(ctx context.Context) (*results.Diagnostics, []string) {
	close(w.stop)
	<-w.done
	w.takeLast(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last.At.IsZero() {
		return nil, w.notes
	}
	d := diff(w.src, w.first, *w.last)
	if f, ok := w.src.(Finisher); ok {
		f.Finish(d)
	}
	if w.n > 0 {
		d.WaitSamples = w.n
		d.WaitSampleIntervalMillis = float64(w.o.WaitInterval) / float64(time.Millisecond)
		for name, count := range w.waits {
			d.Items = append(d.Items, results.DiagnosticItem{Kind: results.DiagnosticWait, Name: name,
				TimeMillis: float64(count) * d.WaitSampleIntervalMillis,
				Figures:    map[string]float64{"averageActiveSessions": float64(count) / float64(w.n)}})
		}
	}
	if w.profiled != nil {
		d.Profile = w.profiled
		d.Items = append(d.Items, profile.Functions(w.profiled)...)
	}
	d.Top(w.o.Top)
	if w.o.Redact != nil {
		for i := range d.Items {
			d.Items[i].Name = w.o.Redact(d.Items[i].Name)
		}
	}
	if ex, ok := w.src.(Explainer); ok && w.o.Plans {
		explained, failures, first := 0, 0, ""
		for i := range d.Items {
			if d.Items[i].Kind != results.DiagnosticStatement || explained == maxPlans || !explainable(d.Items[i].Name) {
				continue
			}
			explained++
			plan, err := ex.Explain(ctx, d.Items[i].Name)
			if err != nil {
				if failures++; first == "" {
					first = err.Error()
				}
				continue
			}
			if w.o.Redact != nil {
				plan = w.o.Redact(plan)
			}
			d.Items[i].Plan = plan
		}
		if failures > 0 {
			msg := first
			if w.o.Redact != nil {
				msg = w.o.Redact(msg)
			}
			d.Notes = append(d.Notes, fmt.Sprintf("%d of the %d top statements could not be planned (the first: %s)", failures, explained, msg))
		}
	}
	if n, ok := w.src.(Noter); ok {
		d.Notes = append(d.Notes, n.Notes()...)
	}
	d.Notes = append(d.Notes, w.notes...)
	return d, nil
}

// diff is last minus first, per item: an item whose calls went down was
// reset or evicted and re-entered in the window, and is counted whole.
func diff(src Source, first, last Snapshot) *results.Diagnostics {
	d := &results.Diagnostics{Source: src.Name(), WindowSeconds: last.At.Sub(first.At).Seconds(),
		Transactions: last.Transactions - first.Transactions, TransactionsFrom: src.TransactionsFrom()}
	if d.Transactions < 0 {
		d.Transactions = last.Transactions
		d.Notes = append(d.Notes, "the server's transaction counter was reset in the window: transactions counted from the reset")
	}
	reentered := 0
	names := make([]string, 0, len(last.Items))
	for name := range last.Items {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		end := last.Items[name]
		start := first.Items[name]
		if end.Calls < start.Calls {
			reentered++
			start = Counters{}
		}
		it := results.DiagnosticItem{Kind: end.Kind, Name: itemName(name), Calls: end.Calls - start.Calls, TimeMillis: end.TimeMillis - start.TimeMillis}
		if it.Calls <= 0 && it.TimeMillis <= 0 {
			continue
		}
		for k, v := range end.Figures {
			if dv := v - start.Figures[k]; dv != 0 {
				if it.Figures == nil {
					it.Figures = map[string]float64{}
				}
				it.Figures[k] = dv
			}
		}
		d.Items = append(d.Items, it)
	}
	if reentered > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d statements were evicted or reset in the window and entered again: counted from then", reentered))
	}
	return d
}

// explainable says whether a statement can be planned: a query or a
// data change, not a utility statement (BEGIN, VACUUM, ...).
func explainable(statement string) bool {
	s := strings.ToLower(strings.TrimSpace(statement))
	for _, p := range []string{"select", "insert", "update", "delete", "with", "values", "table", "merge"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
