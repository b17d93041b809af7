package pod

import (
	"fmt"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

func formatMetric(m MetricDeclaration) string {
	return m.Name + "," + m.Unit + "," + string(m.Direction)
}

// parseMetric reads NAME,UNIT,DIRECTION.
func parseMetric(v string) (MetricDeclaration, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 3 || parts[0] == "" {
		return MetricDeclaration{}, fmt.Errorf("want NAME,UNIT,DIRECTION")
	}
	d := results.Direction(parts[2])
	switch d {
	case results.HigherIsBetter, results.LowerIsBetter, results.Neutral:
	default:
		return MetricDeclaration{}, fmt.Errorf("direction must be %s, %s or %s", results.HigherIsBetter, results.LowerIsBetter, results.Neutral)
	}
	return MetricDeclaration{Name: parts[0], Unit: parts[1], Direction: d}, nil
}

// Stage is one part of a measurement the tool ramps through by itself:
// its name and when it ends, from the start of the measurement.
type Stage struct {
	Name string
	End  time.Duration
}

func formatStage(s Stage) string { return s.Name + "=" + s.End.String() }

// parseStage reads NAME=END (the name may hold "=", the end cannot).
func parseStage(v string) (Stage, error) {
	i := strings.LastIndex(v, "=")
	if i <= 0 {
		return Stage{}, fmt.Errorf("want NAME=END")
	}
	d, err := time.ParseDuration(v[i+1:])
	if err != nil || d <= 0 {
		return Stage{}, fmt.Errorf("want a positive duration after =")
	}
	return Stage{Name: v[:i], End: d}, nil
}

func formatAPDEX(a APDEXTarget) string {
	return a.Operation + "=" + a.Target.String()
}

// parseAPDEX reads OPERATION=DURATION; the operation may hold "=" (a
// k6 URL), the duration cannot.
func parseAPDEX(v string) (APDEXTarget, error) {
	i := strings.LastIndex(v, "=")
	if i <= 0 {
		return APDEXTarget{}, fmt.Errorf("want OPERATION=DURATION")
	}
	d, err := time.ParseDuration(v[i+1:])
	if err != nil || d <= 0 {
		return APDEXTarget{}, fmt.Errorf("want a positive duration after =")
	}
	return APDEXTarget{Operation: v[:i], Target: d}, nil
}
