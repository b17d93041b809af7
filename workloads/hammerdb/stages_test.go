package hammerdb

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// A recording of the real hammerdbcli 4.12 running an autopilot of 1 then
// 3 virtual users (TestRealAutopilotStages, testdata/README.md): each test
// is a stage over its measured minute with its own NOPM, TPM and
// transactions' percentiles (from its own report of the time profile,
// which HammerDB appends test by test), and the headline is the last
// test's, its profile the last report's — never the first test's users
// counted into the second's.
func TestAutopilotStagesOfARealRecording(t *testing.T) {
	log := string(readTestdata(t, "real-4.12-pg15-autopilot-1-3vu-duration1.log"))
	profile := readTestdata(t, "real-4.12-pg15-autopilot-1-3vu-duration1-hdbxtprofile.log")
	r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte(log), Files: map[string][]byte{TimeProfileFile: profile}})
	checkAutopilot(t, r, log, []int32{1, 3})
	if got := [2]float64{r.Stages[0].FromSeconds, r.Stages[1].FromSeconds}; got != [2]float64{0.048, 63.08} {
		t.Errorf("the stages begin at %v s, want 0.048 and 63.08 (the clock's lines)", got)
	}
	calls := func(ms []results.Metric) float64 {
		for _, m := range ms {
			if m.Operation == "NEWORD" && m.Name == "calls" {
				return m.Value
			}
		}
		t.Fatalf("no NEWORD calls in %+v", ms)
		return 0
	}
	// The reports' own per-user counts: one user's 55,274 calls in the
	// first, three users' in the second (the summaries count each twice).
	if c := calls(r.Stages[0].Metrics); c != 55274 {
		t.Errorf("stage 1: %v NEWORD calls, want 55274", c)
	}
	if c, s := calls(r.Stages[1].Metrics), calls(r.Metrics); c != s || c <= 55274 {
		t.Errorf("stage 2: %v NEWORD calls, the headline %v: want the second report's, alone", c, s)
	}
	if slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "sequence") }) {
		t.Errorf("an autopilot's tests are stages, not a sequence: %q", r.Warnings)
	}
	if _, ok := r.Get(results.Key{Name: "nopm", Operation: "test 1 (1 VU)"}); ok {
		t.Error("an autopilot's tests are stages, not nopm[test N]")
	}

	// Cut short in its second test: that stage has no figures and says so.
	cut, _, found := strings.Cut(log, "Vuser 1:3 Active Virtual Users configured")
	if !found {
		t.Fatal("the recording lacks its second test's result")
	}
	r = HammerDB{}.Parse(workloads.ParseInput{Output: []byte(cut)})
	if len(r.Stages) != 2 || len(r.Stages[1].Metrics) != 0 || r.Verdict != results.Failed ||
		!slices.ContainsFunc(r.Warnings, func(w string) bool {
			return strings.Contains(w, "test 2 (vu=3) of the autopilot printed no TEST RESULT")
		}) {
		t.Errorf("cut short: %s, stages %+v, warnings %q", r.Verdict, r.Stages, r.Warnings)
	}
}

// The autopilot's one step runs one script of every test, in order, each
// between its clock lines; a capacity run refuses it, naming the field.
func TestAutopilotScriptAndStep(t *testing.T) {
	spec := seed(benchv1.HammerDBPostgres, 1)
	spec.HammerDB.VirtualUsers, spec.HammerDB.Autopilot = []int32{4, 8, 16}, true
	steps := HammerDB{}.Steps(spec)
	if len(steps) != 1 || steps[0].Name != AutopilotStep {
		t.Fatalf("steps %+v", steps)
	}
	inv := HammerDB{}.Run(spec, pod.Endpoint{Host: "db", Port: 5432}, steps[0])
	body := inv.Files[autopilotScript]
	if got := inv.Command[len(inv.Command)-1]; got != pod.FilesDir+"/"+autopilotScript || body == "" {
		t.Fatalf("command %q, script %q", inv.Command, body)
	}
	var order []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "vuset vu ") || strings.Contains(line, stageMarker) || strings.Contains(line, clockMarker) {
			order = append(order, line)
		}
	}
	want := []string{`puts "DBPERF CLOCK [clock milliseconds]"`}
	for i, vu := range []string{"4", "8", "16"} {
		n := string(rune('1' + i))
		want = append(want, `puts "DBPERF STAGE `+n+` vu=`+vu+` begin [clock milliseconds]"`, "vuset vu "+vu, `puts "DBPERF STAGE `+n+` vu=`+vu+` end [clock milliseconds]"`)
	}
	if !slices.Equal(order, want) {
		t.Errorf("script order:\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	errs := HammerDB{}.CheckCapacity(spec, &benchv1.CapacitySpec{Parameter: "vu"}, field.NewPath("spec", "capacity"))
	if len(errs) != 1 || errs[0].Field != "spec.workload.hammerdb.autopilot" {
		t.Errorf("capacity with autopilot: %v", errs)
	}
}
