package k6

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

func TestRunCommandWithScriptConfigMap(t *testing.T) {
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{
		ScriptConfigMap: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "session-script"}, Key: "session.js"},
		VUs:             []int32{50, 100}, Duration: &metav1.Duration{Duration: 5 * time.Minute},
		Env: map[string]string{"PHASES": "start,continue,end"}, Args: []string{"--no-connection-reuse"},
	}}
	steps := K6{}.Steps(spec)
	if len(steps) != 2 || steps[1].Name != "vus=100" {
		t.Fatalf("steps %+v", steps)
	}
	ep := pod.Endpoint{Host: "kv-valkey.perf.svc", Port: 6379,
		Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "kv"}, Key: "password"}}
	inv := K6{}.Run(spec, ep, steps[1])
	got := strings.Join(inv.Command, " ")
	want := "k6 run --no-color --summary-export /dbperf/out/k6-summary.json --summary-trend-stats avg,min,med,max,p(90),p(95),p(99),p(99.9) --out json=/dbperf/out/k6-samples.json -e DBPERF_TARGET_HOST=kv-valkey.perf.svc -e DBPERF_TARGET_PORT=6379 " +
		"--vus 100 --duration 5m0s -e PHASES=start,continue,end --no-connection-reuse /etc/dbperf/configmaps/session-script/session.js"
	if got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	if inv.SampleStream != "/dbperf/out/k6-samples.json" {
		t.Errorf("sample stream %q", inv.SampleStream)
	}
	if len(inv.ResultFiles) != 1 || len(inv.SecretEnv) != 1 || len(inv.ConfigMapFiles) != 1 {
		t.Errorf("invocation %+v", inv)
	}
	// The Job mounts the user's script key read-only where the command reads it.
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "kv", Namespace: "perf", UID: "u"}, Spec: benchv1.BenchmarkRunSpec{Workload: *spec}}
	job := specs.Job(specs.JobParams{Run: run, Name: "kv-s1-r1", Role: benchv1.RoleLoadgen, Workload: "k6", Invocation: inv, Image: "grafana/k6:1.0.0", RunnerImage: "r"})
	pod := job.Spec.Template.Spec
	found := false
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == "session-script" && len(v.ConfigMap.Items) == 1 && v.ConfigMap.Items[0].Key == "session.js" {
			for _, m := range pod.Containers[0].VolumeMounts {
				if m.Name == v.Name && m.MountPath == "/etc/dbperf/configmaps/session-script" && m.ReadOnly {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("script ConfigMap not mounted: volumes %+v", pod.Volumes)
	}
}

func TestInlineScriptAndValidation(t *testing.T) {
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: "export default function () {}"}}
	steps := K6{}.Steps(spec)
	inv := K6{}.Run(spec, pod.Endpoint{Host: "h", Port: 80}, steps[0])
	if len(steps) != 1 || inv.Files[inlineScript] == "" || !strings.HasSuffix(strings.Join(inv.Command, " "), "/etc/dbperf/workload/script.js") {
		t.Errorf("inline: steps %+v, invocation %+v", steps, inv)
	}
	bad := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: "x", Env: map[string]string{"DBPERF_TARGET_HOST": "x"}, Args: []string{"--vus=3", "-o", "json=x", "-ojson=y", "--out=csv=z", "--no-thresholds"}}}
	errs := K6{}.Validate(bad, field.NewPath("spec", "workload")).ToAggregate().Error()
	if strings.Contains(errs, "args[2]") || strings.Contains(errs, "args[5]") {
		t.Errorf("%q refuses a value or a flag of the user's", errs)
	}
	for _, want := range []string{"spec.workload.k6.env[DBPERF_TARGET_HOST]", "spec.workload.k6.args[0]", "args[1]", "args[3]", "args[4]"} {
		if !strings.Contains(errs, want) {
			t.Errorf("%q lacks %s", errs, want)
		}
	}
}

// A capacity level at a rate runs the user's script through the
// arrival-rate wrapper: no --vus or --duration (they would replace the
// scenario), the level's rate, the vus as the pool, a confirmation's own
// duration; a ConfigMap script is imported from where it is mounted.
func TestRateLevelWrapsTheScript(t *testing.T) {
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: "export default function () {}", VUs: []int32{50},
		Duration: &metav1.Duration{Duration: time.Minute}}}
	step := K6{}.Steps(spec)[0]
	step.Params[workloads.RateParameter] = 1200
	step.Params[workloads.DurationParameter] = 600
	inv := K6{}.Run(spec, pod.Endpoint{Host: "db", Port: 80}, step)
	cmd := strings.Join(inv.Command, " ")
	if strings.Contains(cmd, "--vus") || strings.Contains(cmd, "--duration") || !strings.HasSuffix(cmd, pod.FilesDir+"/"+rateScript) {
		t.Errorf("command %q", cmd)
	}
	w := inv.Files[rateScript]
	for _, want := range []string{`import * as user from "./script.js";`, `export * from "./script.js";`, `executor: "constant-arrival-rate"`,
		"rate: 1200,", `duration: "10m0s"`, "preAllocatedVUs: 50,", "maxVUs: 50,", "export default user.default;"} {
		if !strings.Contains(w, want) {
			t.Errorf("the wrapper lacks %q:\n%s", want, w)
		}
	}
	if inv.Files[inlineScript] != spec.K6.Script {
		t.Error("the user's script is not beside its wrapper")
	}
	spec.K6.Script, spec.K6.ScriptConfigMap = "", &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "scripts"}, Key: "load.js"}
	inv = K6{}.Run(spec, pod.Endpoint{}, step)
	path := pod.ConfigMapFilePath(pod.ConfigMapFile{ConfigMap: "scripts", Key: "load.js"})
	if !strings.Contains(inv.Files[rateScript], fmt.Sprintf("import * as user from %q;", path)) {
		t.Errorf("a ConfigMap script is not imported from %s:\n%s", path, inv.Files[rateScript])
	}
	spec.K6.Duration = nil
	if errs := (K6{}).CheckCapacity(spec, &benchv1.CapacitySpec{Parameter: "rate"}, nil); len(errs) != 1 || errs[0].Field != "spec.workload.k6.duration" {
		t.Errorf("a rate level without a duration: %v", errs)
	}
}

// Stages become k6's --stage flags and the invocation's stages (their
// ends from the start, named by target), in place of --vus and
// --duration; a capacity run refuses them, naming the field.
func TestStagesCommandAndCapacity(t *testing.T) {
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: "export default function () {}", Stages: []benchv1.K6Stage{
		{Duration: metav1.Duration{Duration: 5 * time.Minute}, Target: 5000},
		{Duration: metav1.Duration{Duration: 10 * time.Minute}, Target: 5000},
		{Duration: metav1.Duration{Duration: 30 * time.Second}, Target: 0},
	}}}
	inv := K6{}.Run(spec, pod.Endpoint{Host: "h", Port: 80}, K6{}.Steps(spec)[0])
	cmd := strings.Join(inv.Command, " ")
	if !strings.Contains(cmd, "--stage 5m0s:5000 --stage 10m0s:5000 --stage 30s:0") || strings.Contains(cmd, "--vus") || strings.Contains(cmd, "--duration") {
		t.Errorf("command %q", cmd)
	}
	want := []pod.Stage{{Name: "stage 1 (to 5000 VUs)", End: 5 * time.Minute}, {Name: "stage 2 (to 5000 VUs)", End: 15 * time.Minute}, {Name: "stage 3 (to 0 VUs)", End: 15*time.Minute + 30*time.Second}}
	if !slices.Equal(inv.Stages, want) {
		t.Errorf("stages %+v", inv.Stages)
	}
	errs := K6{}.CheckCapacity(spec, &benchv1.CapacitySpec{Parameter: "vus", Levels: []int32{10, 20}}, field.NewPath("spec", "capacity"))
	if len(errs) != 1 || errs[0].Field != "spec.workload.k6.stages" {
		t.Errorf("capacity with stages: %v", errs)
	}
	// The smoke form keeps the ramp's shape: 2-s stages, at most 10 VUs.
	K6{}.Shrink(spec)
	if spec.K6.Stages[0].Target != 10 || spec.K6.Stages[2].Target != 0 || spec.K6.Stages[1].Duration.Duration != 2*time.Second || spec.K6.Duration != nil {
		t.Errorf("shrunk %+v, duration %v", spec.K6.Stages, spec.K6.Duration)
	}
}
