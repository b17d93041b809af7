package telemetry

import (
	"strings"
	"testing"
	"time"
)

// TestCoarsenMembersFirst: over its budget, a report's per-core series are
// halved first, then (still over) every series; the window's figures are
// untouched and a warning says by how much.
func TestCoarsenMembersFirst(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	mk := func(name string, n int) Series {
		s := Series{Name: name, Subject: "host/db-01"}
		for i := range n {
			s.Samples = append(s.Samples, Sample{Time: t0.Add(time.Duration(i) * 5 * time.Second), Value: float64(i % 2)})
		}
		return s
	}
	rep := &Report{Figures: []Figure{{Name: "cpuBusyPercent", Value: 42}}, Series: []Series{mk("cpuBusyPercent", 100)}}
	for c := range 8 {
		rep.Series = append(rep.Series, mk("cpuBusyPercent.cpu"+string(rune('0'+c)), 100))
	}
	if f := rep.Coarsen(500, "host db-01"); f != 2 {
		t.Errorf("factor %d, want 2 (8 cores' 100 samples halved to 50: 500 with the host's 100)", f)
	}
	if n := len(rep.Series[0].Samples); n != 100 {
		t.Errorf("the host's series has %d samples, want its 100: members go first", n)
	}
	if got := rep.Series[1].Samples[0]; got.Value != 0.5 || !got.Time.Equal(t0.Add(5*time.Second)) {
		t.Errorf("the first merged sample %+v, want the mean 0.5 at the later instant", got)
	}
	if rep.Figures[0].Value != 42 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "coarsened up to 2×") {
		t.Errorf("figures %+v, warnings %q", rep.Figures, rep.Warnings)
	}
	small := &Report{Series: []Series{mk("load1", 10)}}
	if f := small.Coarsen(0, "x"); f != 1 || len(small.Warnings) != 0 {
		t.Errorf("a report within its budget was coarsened: %d %q", f, small.Warnings)
	}
}
