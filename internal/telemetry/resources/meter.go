package resources

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/kubelet"
)

// Subjects reads what a measurement's figures are of: its pods and their
// nodes.
type Subjects func(ctx context.Context) (kubelet.Subjects, error)

// Meter keeps the samplers and reports of the measurements under way, by
// key (any string naming one measurement; keys sharing a prefix are
// forgotten together, ForgetAll).
type Meter struct {
	kubelets   kubelet.Kubelets
	interval   time.Duration
	prometheus func(namespace string) (telemetry.Source, error)
	settle     time.Duration

	samplers kubelet.Samplers
	since    time.Time // when this manager began: earlier windows were sampled by another

	mu      sync.Mutex
	reports map[string][]*telemetry.Report // by measurement, until status records it
	sources map[string]telemetry.Source    // Prometheus, by namespace
	// started and stopped count the samplers, for the tests.
	started, stopped int
}

// defaultSettle: a Prometheus scrape interval and a margin.
const defaultSettle = 45 * time.Second

// NewMeter returns the kubelet source (k set; interval between its polls,
// default kubelet.DefaultInterval) or the Prometheus source (prom set: the
// source for a namespace, whose cAdvisor series are selected by the run's
// namespace; settle is how long after a window's end it is asked, so that
// its last scrape has landed).
func NewMeter(k kubelet.Kubelets, interval time.Duration, prom func(string) (telemetry.Source, error), settle time.Duration) *Meter {
	if settle <= 0 {
		settle = defaultSettle
	}
	return &Meter{kubelets: k, interval: interval, prometheus: prom, settle: settle, since: time.Now(),
		reports: map[string][]*telemetry.Report{}, sources: map[string]telemetry.Source{}}
}

// Begin starts the kubelet sampler of a measurement whose load generators
// run, unless the source does not sample while the load runs or the
// measurement's sampler runs or its reports are kept. subjects is read only
// then; ok false says the load generators are not under way yet. A
// sampler that cannot start leaves a warning as the measurement's report.
// begun says a sampler started.
func (m *Meter) Begin(ctx context.Context, key string, subjects func(ctx context.Context) (kubelet.Subjects, bool, error)) (begun bool, err error) {
	if m.kubelets == nil || m.samplers.Running(key) || m.have(key) {
		return false, nil
	}
	s, ok, err := subjects(ctx)
	if err != nil || !ok {
		return false, err
	}
	sampler, err := kubelet.NewSampler(m.kubelets, kubelet.Config{Interval: m.interval}, s)
	if err == nil {
		// The reconcile's context lives as long as the manager (no
		// reconciliation timeout is set), as the sampler must.
		err = m.samplers.Start(ctx, key, sampler)
	}
	if err != nil {
		m.keep(key, []*telemetry.Report{{Source: kubelet.SourceName, Figures: []telemetry.Figure{},
			Warnings: []string{"no kubelet sampler: " + err.Error()}}})
		return false, nil
	}
	m.mu.Lock()
	m.started++
	m.mu.Unlock()
	return true, nil
}

// Reports are the measurement's reports over its window w: kept from an
// earlier reconcile, or made now (the kubelet sampler stopped, which
// stopped says, Prometheus asked about the run's namespace). A positive
// wait says the figures are not ready yet: look again then.
func (m *Meter) Reports(ctx context.Context, key, namespace string, w telemetry.Window, subjects Subjects) (reps []*telemetry.Report, stopped bool, wait time.Duration) {
	if reps, ok := m.kept(key); ok {
		return reps, false, 0
	}
	if m.kubelets != nil {
		switch {
		case m.samplers.Running(key):
			reps = append(reps, m.samplers.StopWithin(ctx, key, w))
			m.mu.Lock()
			m.stopped++
			m.mu.Unlock()
			stopped = true
		case w.Start.IsZero() || w.Start.After(m.since):
			// Never seen running by this manager: a tool that failed to
			// start, or one that ended between two reconciles.
			reps = append(reps, &telemetry.Report{Source: kubelet.SourceName, Figures: []telemetry.Figure{}, Warnings: []string{
				"the measurement ended before the operator saw its load generators run: the kubelets were not sampled"}})
		default:
			reps = append(reps, kubelet.Lost())
		}
	}
	if m.prometheus != nil {
		if wait := time.Until(w.End.Add(m.settle)); !w.End.IsZero() && wait > 0 {
			return nil, stopped, wait
		}
		reps = append(reps, m.collectPrometheus(ctx, namespace, w, subjects))
	}
	m.keep(key, reps)
	return reps, stopped, 0
}

// collectPrometheus asks Prometheus about the window; whatever goes wrong
// is a warning on the measurement, never a failure.
func (m *Meter) collectPrometheus(ctx context.Context, namespace string, w telemetry.Window, subjects Subjects) *telemetry.Report {
	failed := func(err error) *telemetry.Report {
		return &telemetry.Report{Source: "prometheus", Figures: []telemetry.Figure{}, Warnings: []string{"no figures: " + err.Error()}}
	}
	if w.Start.IsZero() || !w.End.After(w.Start) {
		return failed(fmt.Errorf("the measurement has no window (%s..%s)", w.Start, w.End))
	}
	src, err := m.source(namespace)
	if err != nil {
		return failed(err)
	}
	s, err := subjects(ctx)
	if err != nil {
		return failed(err)
	}
	var rep *telemetry.Report
	if rs, ok := src.(telemetry.RunSource); ok {
		rep, err = rs.CollectRun(ctx, w, s.TelemetrySubjects(), s.Run)
	} else {
		rep, err = src.Collect(ctx, w, s.TelemetrySubjects())
	}
	if err != nil {
		return failed(err)
	}
	return rep
}

// Forget drops what is kept of one measurement once status records it,
// stopping a sampler still running for it. Map lookups only: the measure
// phase calls it for every recorded measurement of every reconcile.
func (m *Meter) Forget(ctx context.Context, key string) {
	m.mu.Lock()
	delete(m.reports, key)
	m.mu.Unlock()
	if m.samplers.Running(key) {
		m.samplers.Stop(ctx, key)
	}
}

// ForgetAll drops what is kept of every measurement whose key starts with
// prefix (a whole run once it ended or is gone), stopping their samplers.
func (m *Meter) ForgetAll(ctx context.Context, prefix string) {
	m.mu.Lock()
	for k := range m.reports {
		if strings.HasPrefix(k, prefix) {
			delete(m.reports, k)
		}
	}
	m.mu.Unlock()
	for _, k := range m.samplers.Keys() {
		if strings.HasPrefix(k, prefix) {
			m.samplers.Stop(ctx, k)
		}
	}
}

// Sources says which sources the meter asks.
func (m *Meter) Sources() (kubelet, prometheus bool) {
	return m.kubelets != nil, m.prometheus != nil
}

// Counts are the samplers started and stopped so far.
func (m *Meter) Counts() (started, stopped int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.started, m.stopped
}

func (m *Meter) have(key string) bool {
	_, ok := m.kept(key)
	return ok
}

func (m *Meter) kept(key string) ([]*telemetry.Report, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	reps, ok := m.reports[key]
	return reps, ok
}

func (m *Meter) keep(key string, reps []*telemetry.Report) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reports[key] = reps
}

func (m *Meter) source(namespace string) (telemetry.Source, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sources[namespace]; ok {
		return s, nil
	}
	s, err := m.prometheus(namespace)
	if err != nil {
		return nil, err
	}
	m.sources[namespace] = s
	return s, nil
}
