package kubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// DefaultInterval between polls: about the kubelet's own housekeeping
// interval, so that most polls see a fresh reading of the cgroups.
const DefaultInterval = 10 * time.Second

// Config of a Sampler.
type Config struct {
	// Interval between rounds of polls; default DefaultInterval.
	Interval time.Duration
	// Timeout of one node's read; default half the interval.
	Timeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout <= 0 {
		c.Timeout = c.Interval / 2
	}
	return c
}

// Sampler polls the subjects' nodes from Start to Stop and keeps every
// reading in memory.
type Sampler struct {
	kubelets Kubelets
	cfg      Config
	subjects Subjects
	nodes    []Node

	mu     sync.Mutex
	polls  []Poll
	rounds int
	stop   chan struct{} // closed by Stop: no round after the one under way
	done   chan struct{} // closed when the polling has ended
}

// NewSampler checks the subjects: every pod needs a namespace, a name, a
// node and the role target or loadgen.
func NewSampler(k Kubelets, cfg Config, subjects Subjects) (*Sampler, error) {
	if k == nil {
		return nil, errors.New("kubelet: no Kubelets to read")
	}
	for _, p := range subjects.Pods {
		if p.Namespace == "" || p.Name == "" || p.Node == "" {
			return nil, fmt.Errorf("kubelet: pod %q/%q needs a namespace, a name and its node (%q)", p.Namespace, p.Name, p.Node)
		}
		if p.Role != telemetry.RoleTarget && p.Role != telemetry.RoleLoadgen {
			return nil, fmt.Errorf("kubelet: pod %s/%s has role %q, want %q or %q", p.Namespace, p.Name, p.Role, telemetry.RoleTarget, telemetry.RoleLoadgen)
		}
	}
	s := &Sampler{kubelets: k, cfg: cfg.withDefaults(), subjects: subjects, nodes: subjects.nodes()}
	if len(s.nodes) == 0 {
		return nil, errors.New("kubelet: no pod and no node to sample")
	}
	return s, nil
}

// Start polls every node once, then every interval in the background until
// Stop or until ctx ends (the manager's lifetime, not one reconcile's).
// The first round is the window's start: call Start when the measurement's
// pods run, right before the start barrier.
func (s *Sampler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.done != nil {
		s.mu.Unlock()
		return errors.New("kubelet: the sampler was already started")
	}
	stop, done := make(chan struct{}), make(chan struct{})
	s.stop, s.done = stop, done
	s.mu.Unlock()
	s.round(ctx)
	go func() {
		defer close(done)
		t := time.NewTicker(s.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
				s.round(ctx)
			}
		}
	}()
	return nil
}

// Stop ends the polling with one last round (the window's end: call it
// when the tool has ended) and summarises every reading. A round under way
// is finished first, not cancelled.
func (s *Sampler) Stop(ctx context.Context) *telemetry.Report {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop = nil
	s.mu.Unlock()
	if done == nil {
		rep := Lost()
		rep.Warnings = []string{"the kubelet sampler was stopped without being started: no figures"}
		return rep
	}
	if stop == nil {
		return s.Report() // stopped before: no further round
	}
	close(stop)
	<-done
	s.round(ctx)
	return s.Report()
}

// Report summarises the readings so far.
func (s *Sampler) Report() *telemetry.Report { return s.ReportWithin(telemetry.Window{}) }

// round reads every node at once.
func (s *Sampler) round(ctx context.Context) {
	s.mu.Lock()
	round := s.rounds
	s.rounds++
	s.mu.Unlock()
	polls := make([]Poll, len(s.nodes))
	var wg sync.WaitGroup
	for i, n := range s.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
			defer cancel()
			at := time.Now()
			sum, err := s.kubelets.Summary(rctx, n.Name)
			polls[i] = Poll{Round: round, Node: n.Name, At: at, Summary: sum, Err: err}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	s.polls = append(s.polls, polls...)
	s.mu.Unlock()
}

// Sample runs a sampler over a window: it waits for the window's start,
// samples until its end and returns the report.
func Sample(ctx context.Context, k Kubelets, cfg Config, w telemetry.Window, subjects Subjects) (*telemetry.Report, error) {
	s, err := NewSampler(k, cfg, subjects)
	if err != nil {
		return nil, err
	}
	if err := sleepUntil(ctx, w.Start); err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	err = sleepUntil(ctx, w.End)
	rep := s.Stop(context.WithoutCancel(ctx))
	return rep, err
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// LostWarning starts the warning of a window whose readings are gone.
const LostWarning = "kubelet statistics lost"

// Lost is the report of a window whose sampler is gone: the manager
// restarted while it ran, and the readings were in its memory.
func Lost() *telemetry.Report {
	return &telemetry.Report{Source: SourceName, Figures: []telemetry.Figure{}, Warnings: []string{
		LostWarning + ": the manager restarted during the measurement and the kubelet's readings were kept in its memory; the kubelet's statistics are instantaneous and cannot be read after the window",
	}}
}

// Samplers are the samplers running in the manager, by measurement (any
// key that names one measurement window, e.g. "<namespace>/<run>/<n>").
type Samplers struct {
	mu    sync.Mutex
	byKey map[string]*Sampler
}

// Start starts s under key; a key already running is an error.
func (m *Samplers) Start(ctx context.Context, key string, s *Sampler) error {
	m.mu.Lock()
	if m.byKey == nil {
		m.byKey = map[string]*Sampler{}
	}
	if _, ok := m.byKey[key]; ok {
		m.mu.Unlock()
		return fmt.Errorf("kubelet: a sampler already runs for %s", key)
	}
	m.byKey[key] = s
	m.mu.Unlock()
	if err := s.Start(ctx); err != nil {
		m.mu.Lock()
		delete(m.byKey, key)
		m.mu.Unlock()
		return err
	}
	return nil
}

// Running reports whether a sampler runs under key: after a manager
// restart none does.
func (m *Samplers) Running(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.byKey[key]
	return ok
}

// Stop stops the sampler under key and returns its report; for a key
// without a sampler (the manager restarted since Start) it returns Lost().
func (m *Samplers) Stop(ctx context.Context, key string) *telemetry.Report {
	s, ok := m.take(key)
	if !ok {
		return Lost()
	}
	return s.Stop(ctx)
}

// take removes the sampler under key from the running ones.
func (m *Samplers) take(key string) (*Sampler, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byKey[key]
	delete(m.byKey, key)
	return s, ok
}

// Within keeps the rounds of polls that cover a window: the rounds made
// inside it when there are at least two (the sampler starts before the
// tool, at the start barrier, and stops after it, when the operator sees
// it ended: rounds outside would dilute the window's rates with idle
// time), else the rounds that bracket it.
func Within(polls []Poll, w telemetry.Window) []Poll {
	if w.Start.IsZero() || !w.End.After(w.Start) {
		return polls
	}
	at := map[int]time.Time{} // a round's instant: its earliest read
	for _, p := range polls {
		if t, ok := at[p.Round]; !ok || p.At.Before(t) {
			at[p.Round] = p.At
		}
	}
	inside, first, last := 0, -1, -1
	for r, t := range at {
		if !t.Before(w.Start) && !t.After(w.End) {
			inside++
		}
		if !t.After(w.Start) && (first < 0 || t.After(at[first])) {
			first = r
		}
		if !t.Before(w.End) && (last < 0 || t.Before(at[last])) {
			last = r
		}
	}
	keep := func(r int) bool {
		t := at[r]
		if inside >= 2 {
			return !t.Before(w.Start) && !t.After(w.End)
		}
		return (first < 0 || !t.Before(at[first])) && (last < 0 || !t.After(at[last]))
	}
	var out []Poll
	for _, p := range polls {
		if keep(p.Round) {
			out = append(out, p)
		}
	}
	return out
}

// ReportWithin summarises the readings that cover the window (Within;
// every reading for a zero window).
func (s *Sampler) ReportWithin(w telemetry.Window) *telemetry.Report {
	s.mu.Lock()
	polls := append([]Poll(nil), s.polls...)
	s.mu.Unlock()
	return Summarize(s.subjects, Within(polls, w))
}

// StopWithin stops the sampler under key and summarises the readings that
// cover the window; for a key without a sampler it returns Lost().
func (m *Samplers) StopWithin(ctx context.Context, key string, w telemetry.Window) *telemetry.Report {
	s, ok := m.take(key)
	if !ok {
		return Lost()
	}
	if rep := s.Stop(ctx); len(rep.Figures) == 0 {
		return rep // not started, or nothing read: its warnings say why
	}
	return s.ReportWithin(w)
}

// Keys of the samplers running.
func (m *Samplers) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.byKey))
	for k := range m.byKey {
		out = append(out, k)
	}
	return out
}
