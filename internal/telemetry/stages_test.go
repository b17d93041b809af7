package telemetry

import (
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Each stage gets the target's CPU over its own window: the mean and p95
// of the samples inside it, from the result's start; other subjects and
// series, and a stage without samples, get nothing.
func TestAddStageFigures(t *testing.T) {
	start := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	r := results.New("k6")
	r.StartTime = &start
	r.Stages = []results.Stage{{Name: "stage 1", FromSeconds: 0, ToSeconds: 30}, {Name: "stage 2", FromSeconds: 30, ToSeconds: 60}, {Name: "stage 3", FromSeconds: 60, ToSeconds: 90}}
	var cpu, other []results.Sample
	for s := 5; s <= 60; s += 5 {
		v := 1.0
		if s > 30 {
			v = 3
		}
		if s == 55 {
			v = 5
		}
		cpu = append(cpu, results.Sample{Time: start.Add(time.Duration(s) * time.Second), Value: v})
		other = append(other, results.Sample{Time: start.Add(time.Duration(s) * time.Second), Value: 100})
	}
	r.Series = []results.Series{
		{Name: FigureCPUCores, Subject: string(RoleTarget), Unit: "cores", Source: "kubernetes", Samples: cpu},
		{Name: FigureCPUCores, Subject: "target/db-0", Unit: "cores", Samples: other},
		{Name: "memoryWorkingSetBytes", Subject: string(RoleTarget), Unit: "bytes", Samples: other},
	}
	AddStageFigures(r)
	AddStageFigures(r) // twice: the same figures, once
	want := []map[string]float64{{"cpuCores": 1, "cpuCoresP95": 1}, {"cpuCores": (3*5 + 5) / 6.0, "cpuCoresP95": 5}, {}}
	for i, st := range r.Stages {
		got := map[string]float64{}
		for _, m := range st.Metrics {
			if m.Operation != string(RoleTarget) || m.Source != "kubernetes" {
				t.Errorf("%s: %+v", st.Name, m)
			}
			got[m.Name] = m.Value
		}
		if len(got) != len(want[i]) {
			t.Errorf("%s: %v, want %v", st.Name, got, want[i])
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("%s %s = %v, want %v", st.Name, k, got[k], v)
			}
		}
	}
}
