package testutil

import (
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// FigureKey is a telemetry figure's name and subject.
type FigureKey struct{ Name, Subject string }

// Figures are a telemetry report's figures by name and subject.
type Figures map[FigureKey]float64

// FiguresOf indexes a report's figures.
func FiguresOf(r *telemetry.Report) Figures {
	out := Figures{}
	for _, f := range r.Figures {
		out[FigureKey{f.Name, f.Subject}] = f.Value
	}
	return out
}

// Get is a figure, or fails the test naming it.
func (f Figures) Get(t testing.TB, name, subject string) float64 {
	t.Helper()
	v, ok := f[FigureKey{name, subject}]
	if !ok {
		t.Fatalf("no figure %s[%s]", name, subject)
	}
	return v
}
