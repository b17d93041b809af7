package dbstats

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)

func obsAt(sec int, epoch string, counters, gauges map[string]float64) Observation {
	return Observation{Time: t0.Add(time.Duration(sec) * time.Second), Took: time.Millisecond,
		Reading: Reading{Epoch: epoch, Counters: counters, Gauges: gauges}}
}

func figureValue(rep *telemetry.Report, name string) (float64, bool) {
	for _, f := range rep.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

func TestSummarize(t *testing.T) {
	defs := []Def{
		{Name: "commitsPerSecond", Kind: PerSecond, Key: "c", Unit: "tx/s", OwnPerPoll: 1},
		{Name: "cpuCores", Kind: PerSecond, Key: "cpu", Unit: "cores"},
		{Name: "deadlocks", Kind: Count, Key: "d", Unit: "count"},
		{Name: "hitPercent", Kind: Percent, Key: "hit", Other: "miss", Unit: "%"},
		{Name: "sessions", Kind: Gauge, Key: "s", Unit: "sessions"},
	}
	c := func(commits, cpu, dl, hit, miss float64) map[string]float64 {
		return map[string]float64{"c": commits, "cpu": cpu, "d": dl, "hit": hit, "miss": miss}
	}
	g := func(s float64) map[string]float64 { return map[string]float64{"s": s} }
	cases := map[string]struct {
		obs          []Observation
		warnings     []string
		want         map[string]float64 // figures that must be there
		absent       []string
		warnContains []string
	}{
		"steady load: rates over the span, own commits taken off, gauges mean and max": {
			obs: []Observation{
				obsAt(0, "a", c(1000, 10, 0, 0, 0), g(2)),
				obsAt(5, "a", c(1501, 12.5, 1, 90, 10), g(4)),
				obsAt(10, "a", c(2002, 15, 1, 180, 20), g(6)),
			},
			want: map[string]float64{"commitsPerSecond": 100, "cpuCores": 0.5, "deadlocks": 1, "hitPercent": 90,
				"sessionsMean": 4, "sessionsMax": 6, "serverRestarts": 0, "windowSeconds": 10},
		},
		"a restart (new epoch): the interval counts from the restart, and says so": {
			obs: []Observation{
				obsAt(0, "a", c(1000, 10, 0, 0, 0), g(1)),
				obsAt(5, "a", c(1501, 12.5, 0, 0, 0), g(1)),
				obsAt(10, "b", c(501, 2.5, 0, 0, 0), g(1)), // 500 commits and 2.5 s of CPU since the restart
			},
			want:         map[string]float64{"commitsPerSecond": 100, "cpuCores": 0.5, "serverRestarts": 1},
			warnContains: []string{RestartWarning},
		},
		"one counter reset (no new epoch): only that counter starts again": {
			obs: []Observation{
				obsAt(0, "a", c(1000, 10, 0, 0, 0), g(1)),
				obsAt(10, "a", c(1, 15, 0, 0, 0), g(1)), // commits reset; CPU went on
			},
			want:         map[string]float64{"commitsPerSecond": 0, "cpuCores": 0.5, "serverRestarts": 1},
			warnContains: []string{RestartWarning},
		},
		"a failed poll: its warning is kept and the rest still counts": {
			obs: []Observation{
				obsAt(0, "a", c(0, 0, 0, 0, 0), g(3)),
				obsAt(10, "a", c(1001, 0, 0, 0, 0), g(5)),
			},
			warnings:     []string{"poll at 2025-01-02T03:04:05Z failed: timeout"},
			want:         map[string]float64{"commitsPerSecond": 100, "sessionsMax": 5},
			warnContains: []string{"failed: timeout"},
		},
		"nothing read: no hit ratio rather than a made-up one": {
			obs:    []Observation{obsAt(0, "a", c(0, 0, 0, 5, 5), g(0)), obsAt(5, "a", c(0, 0, 0, 5, 5), g(0))},
			absent: []string{"hitPercent"},
		},
		"one poll only: gauges but no rates": {
			obs:          []Observation{obsAt(0, "a", c(5, 5, 0, 0, 0), g(7))},
			want:         map[string]float64{"sessionsMax": 7, "sessionsMean": 7},
			absent:       []string{"commitsPerSecond", "deadlocks", "serverRestarts"},
			warnContains: []string{"only one poll"},
		},
		"no poll: no figures, a warning": {
			absent:       []string{"commitsPerSecond", "sessionsMax"},
			warnContains: []string{"no poll"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rep := Summarize("test", defs, tc.obs, tc.warnings)
			for fig, want := range tc.want {
				got, ok := figureValue(rep, fig)
				if !ok || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", fig, got, ok, want)
				}
			}
			for _, fig := range tc.absent {
				if v, ok := figureValue(rep, fig); ok {
					t.Errorf("%s = %v, want no such figure", fig, v)
				}
			}
			all := strings.Join(rep.Warnings, "\n")
			for _, w := range tc.warnContains {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", all, w)
				}
			}
			if len(tc.warnContains) == 0 && all != "" {
				t.Errorf("unexpected warnings: %s", all)
			}
		})
	}
}

func TestSummarizeSeriesAreAtThePollInstants(t *testing.T) {
	obs := []Observation{
		obsAt(0, "a", map[string]float64{"c": 0}, map[string]float64{"s": 1}),
		obsAt(5, "a", map[string]float64{"c": 51}, map[string]float64{"s": 2}),
		obsAt(10, "a", map[string]float64{"c": 152}, map[string]float64{"s": 3}),
	}
	rep := Summarize("test", []Def{{Name: "commitsPerSecond", Kind: PerSecond, Key: "c", OwnPerPoll: 1}, {Name: "sessions", Kind: Gauge, Key: "s"}}, obs, nil)
	want := map[string][]telemetry.Sample{
		"commitsPerSecond": {{Time: t0.Add(5 * time.Second), Value: 10}, {Time: t0.Add(10 * time.Second), Value: 20}},
		"sessions":         {{Time: t0, Value: 1}, {Time: t0.Add(5 * time.Second), Value: 2}, {Time: t0.Add(10 * time.Second), Value: 3}},
	}
	if len(rep.Series) != len(want) {
		t.Fatalf("series %+v, want %d", rep.Series, len(want))
	}
	for _, s := range rep.Series {
		w := want[s.Name]
		if len(s.Samples) != len(w) || s.Subject != "server" {
			t.Fatalf("%s: %+v, want %+v", s.Name, s, w)
		}
		for i := range w {
			if !s.Samples[i].Time.Equal(w[i].Time) || math.Abs(s.Samples[i].Value-w[i].Value) > 1e-9 {
				t.Errorf("%s[%d] = %+v, want %+v", s.Name, i, s.Samples[i], w[i])
			}
		}
	}
}

// TestSummarizeOwnEpochs: a counter with an epoch of its own (PostgreSQL's
// WAL, a log position) goes on through a change of the reading's epoch
// (pg_stat_reset(), or a restart for a log position) and starts again when
// its own epoch changes (pg_stat_reset_shared('wal')), which is a restart
// of the window's counters too.
func TestSummarizeOwnEpochs(t *testing.T) {
	at := func(sec int, epoch string, commits, wal float64, walEpoch string) Observation {
		o := obsAt(sec, epoch, map[string]float64{"c": commits, "w": wal}, nil)
		o.Epochs = map[string]string{"w": walEpoch}
		return o
	}
	defs := []Def{{Name: "commitsPerSecond", Kind: PerSecond, Key: "c"}, {Name: "walBytesPerSecond", Kind: PerSecond, Key: "w"}}
	for name, tc := range map[string]struct {
		obs                []Observation
		commits, wal, rest float64
	}{
		"the database's statistics reset, WAL's not": {
			obs:     []Observation{at(0, "a", 1000, 5e6, "x"), at(5, "a", 1500, 5.5e6, "x"), at(10, "b", 400, 6e6, "x")},
			commits: (500 + 400) / 10.0, wal: 1e6 / 10, rest: 1,
		},
		"WAL's statistics reset, the database's not": {
			obs:     []Observation{at(0, "a", 1000, 5e6, "x"), at(5, "a", 1500, 5.5e6, "x"), at(10, "a", 2000, 7e5, "y")},
			commits: 1000 / 10.0, wal: (5e5 + 7e5) / 10, rest: 1,
		},
		"WAL's grew past its old value after its reset: its epoch says so": {
			obs:     []Observation{at(0, "a", 1000, 5e5, "x"), at(10, "a", 2000, 9e5, "y")},
			commits: 1000 / 10.0, wal: 9e5 / 10, rest: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			rep := Summarize("test", defs, tc.obs, nil)
			for fig, want := range map[string]float64{"commitsPerSecond": tc.commits, "walBytesPerSecond": tc.wal, "serverRestarts": tc.rest} {
				if got, ok := figureValue(rep, fig); !ok || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", fig, got, ok, want)
				}
			}
		})
	}
}
