package hammerdb

import (
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// An autopilot (spec.workload.hammerdb.autopilot) runs its timed tests one
// after another in one measurement; its script prints HammerDB's clock at
// its start and around each test, and each test becomes a stage of the
// result, over its measured period.

var (
	clockLine = regexp.MustCompile(`^` + clockMarker + ` ([0-9]+)$`)
	stageLine = regexp.MustCompile(`^` + stageMarker + ` ([0-9]+) (vu=[0-9]+) (begin|end) ([0-9]+)$`)
)

// stageMark is one timed test of an autopilot as its script printed it:
// its number, its virtual users (vu=N), and HammerDB's clock in
// milliseconds before and after it (0: not printed).
type stageMark struct {
	n          int
	vu         string
	begin, end int64
}

// mark reads a line of the autopilot's clock; false when it is none.
func (p *outputParser) mark(line string) bool {
	if x := clockLine.FindStringSubmatch(line); x != nil {
		p.clock, _ = strconv.ParseInt(x[1], 10, 64)
		return true
	}
	x := stageLine.FindStringSubmatch(line)
	if x == nil {
		return false
	}
	n, _ := strconv.Atoi(x[1])
	at, _ := strconv.ParseInt(x[4], 10, 64)
	if x[3] == "begin" {
		p.marks = append(p.marks, stageMark{n: n, vu: x[2], begin: at})
		return true
	}
	if k := len(p.marks) - 1; k >= 0 && p.marks[k].n == n {
		p.marks[k].end = at
	}
	return true
}

// addStages makes each timed test of an autopilot a stage over its
// measured period, measured from the script's start: from its beginning
// after its ramp-up, for its timed minutes (to its end at most), with the
// NOPM and TPM HammerDB printed for it and its transactions' figures from
// the time profile (profiles, one per completed test, in order). A test
// cut short is a stage without figures, with a warning.
func (p *outputParser) addStages(profiles [][]results.Metric) {
	if len(p.marks) == 0 {
		return
	}
	r := p.r
	if p.clock == 0 {
		r.Warnings = append(r.Warnings, "the autopilot's script printed no clock at its start: its stages are left out")
		return
	}
	if len(p.tests) > len(p.marks) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("HammerDB began %d timed tests in %d stages of the autopilot: the stages are left out", len(p.tests), len(p.marks)))
		return
	}
	completed := 0
	for i, m := range p.marks {
		st := results.Stage{Name: fmt.Sprintf("test %d (%s)", m.n, m.vu)}
		var t *test
		if i < len(p.tests) {
			t = p.tests[i]
		}
		if t == nil || !t.complete || m.end == 0 {
			st.FromSeconds = float64(m.begin-p.clock) / 1000
			st.ToSeconds = st.FromSeconds
			if m.end > 0 {
				st.ToSeconds = float64(m.end-p.clock) / 1000
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("stage %s of the autopilot printed no TEST RESULT: it was cut short", st.Name))
			r.Stages = append(r.Stages, st)
			continue
		}
		from := m.begin - p.clock + int64(t.rampupMinutes)*60000
		to := min(from+int64(t.minutes)*60000, m.end-p.clock)
		st.FromSeconds, st.ToSeconds = float64(from)/1000, float64(to)/1000
		st.Metrics = []results.Metric{
			{Name: "nopm", Value: t.nopm, Unit: "NOPM", Direction: results.HigherIsBetter},
			{Name: "tpm", Value: t.tpm, Unit: "TPM", Direction: results.HigherIsBetter},
		}
		if completed < len(profiles) {
			st.Metrics = append(st.Metrics, profiles[completed]...)
		}
		completed++
		r.Stages = append(r.Stages, st)
	}
	r.SetParam("autopilotStages", strconv.Itoa(len(p.marks)))
}

var _ workloads.CapacityChecker = HammerDB{}

// CheckCapacity: a capacity run sets each level's virtual users itself,
// one measurement a level; an autopilot runs its own list in one.
func (HammerDB) CheckCapacity(spec *benchv1.WorkloadSpec, _ *benchv1.CapacitySpec, _ *field.Path) field.ErrorList {
	if !spec.HammerDB.Autopilot {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "workload", "hammerdb", "autopilot"), true,
		"a capacity run sets the virtual users of each level itself, one measurement a level: leave autopilot off (spec.capacity) or drop spec.capacity (autopilot)")}
}
