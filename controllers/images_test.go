package controllers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

const mirror = "registry.internal:5000/mirror"

// airgapped restarts the harness's manager with the air-gapped flags.
func airgapped(t *testing.T, im specs.Images, runner string) *harness {
	t.Helper()
	h := newHarness(t)
	h.images, h.runnerImage = im, runner
	h.RestartManager(cfg)
	return h
}

func secretNames(refs []corev1.LocalObjectReference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

// With --image-registry and --image-pull-secrets, the workload Job runs the
// tool's default image and the runner image remapped, the target's
// StatefulSet its default image remapped, and both pull with the
// manager's Secrets then the run's; an image the spec names stays as
// written, and the run's spec is never changed.
func TestAirGappedRunRemapsDefaultsAndPullsWithSecrets(t *testing.T) {
	runner := mirror + "/dbperf-io/dbperf-runner:test"
	h := airgapped(t, specs.Images{Registry: mirror, PullSecrets: []string{"mirror-pull"}, Allowed: []string{"registry.internal:5000/", "my.registry/"}}, runner)
	ctx := context.Background()
	wantSecrets := []string{"mirror-pull", "own-pull"}

	run := kit.MeasureOnly("airgap-job", 4, 1)
	run.Spec.AllowSharedNodes = true
	run.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "own-pull"}}
	h.Create(run)
	job := h.WaitJob(specs.MeasureJobName(h.Run(run.Name), 0, 1))
	pod := job.Spec.Template.Spec
	if got, want := pod.Containers[0].Image, mirror+"/library/postgres:17"; got != want {
		t.Errorf("load generator image %s, want %s", got, want)
	}
	if got := pod.InitContainers[0].Image; got != runner {
		t.Errorf("runner image %s, want %s", got, runner)
	}
	if got := secretNames(pod.ImagePullSecrets); !slices.Equal(got, wantSecrets) {
		t.Errorf("Job imagePullSecrets %v, want %v", got, wantSecrets)
	}
	stored := h.Run(run.Name)
	if stored.Spec.Workload.Image != "" || len(stored.Spec.ImagePullSecrets) != 1 {
		t.Errorf("the run's spec was changed: image %q, pull secrets %v", stored.Spec.Workload.Image, stored.Spec.ImagePullSecrets)
	}
	if got := stored.Status.Environment; got != nil && got.Images["loadgen"] != mirror+"/library/postgres:17" {
		t.Errorf("environment records the load generator image %q", got.Images["loadgen"])
	}

	// A target the operator runs: its default image remapped; the
	// workload's image written in the spec stays as written.
	mysql := kit.MakeRun("airgap-mysql").Target(benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{}}).
		Workload(benchv1.WorkloadSpec{Image: "my.registry/tools/hammerdb:1", HammerDB: &benchv1.HammerDBWorkload{Database: "mysql", VirtualUsers: []int32{1}}}).Obj()
	mysql.Spec.AllowSharedNodes = true
	mysql.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "own-pull"}, {Name: "mirror-pull"}}
	h.Create(mysql)
	var sts appsv1.StatefulSet
	testutil.Eventually(t, 20*time.Second, "mysql statefulset", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ChildName(h.Run(mysql.Name), "mysql")}, &sts)
	})
	spec := sts.Spec.Template.Spec
	if got, want := spec.Containers[0].Image, mirror+"/library/mysql:8.4"; got != want {
		t.Errorf("mysql image %s, want %s", got, want)
	}
	if got := secretNames(spec.ImagePullSecrets); !slices.Equal(got, wantSecrets) {
		t.Errorf("StatefulSet imagePullSecrets %v, want %v", got, wantSecrets)
	}
}

// --allowed-images applies to the default images too, after the remap: a
// run whose default image matches no prefix fails at once, reason
// ImageNotAllowed, naming the image, its field and the flags, and creates
// nothing; the runner image is checked the same way.
func TestDefaultImageOutsideTheAllowListFailsTheRun(t *testing.T) {
	h := airgapped(t, specs.Images{Allowed: []string{"registry.internal:5000/"}}, mirror+"/dbperf-io/dbperf-runner:test")
	run := kit.MeasureOnly("not-allowed", 4, 1)
	run.Spec.AllowSharedNodes = true
	h.Create(run)
	got := h.WaitPhase(run.Name, 20*time.Second, benchv1.PhaseFailed)
	c := meta.FindStatusCondition(got.Status.Conditions, benchv1.ConditionCompleted)
	if c == nil || c.Reason != benchv1.ReasonImageNotAllowed {
		t.Fatalf("Completed condition %+v, want reason %s", c, benchv1.ReasonImageNotAllowed)
	}
	for _, w := range []string{"postgres:17", "spec.workload.image", "--allowed-images", "admission.allowedImages", "registry.internal:5000/", "--image-registry"} {
		if !strings.Contains(c.Message, w) {
			t.Errorf("the message %q does not say %s", c.Message, w)
		}
	}
	if jobs := h.Jobs(); len(jobs) != 0 {
		t.Errorf("%d Jobs created for a run refused", len(jobs))
	}

	// The same run with the image written in the spec is admission's
	// business, not the manager's: it runs.
	ok := kit.MeasureOnly("written", 4, 1)
	ok.Spec.AllowSharedNodes = true
	ok.Spec.Workload.Image = "elsewhere.example/postgres:17"
	h.Create(ok)
	h.WaitJob(specs.MeasureJobName(h.Run(ok.Name), 0, 1))
}

// The runner image outside the list fails a run the same way, naming
// --runner-image.
func TestRunnerImageOutsideTheAllowListFailsTheRun(t *testing.T) {
	h := airgapped(t, specs.Images{Registry: mirror, Allowed: []string{"registry.internal:5000/"}}, "ghcr.io/dbperf-io/dbperf-runner:test")
	run := kit.MeasureOnly("runner-not-allowed", 4, 1)
	run.Spec.AllowSharedNodes = true
	h.Create(run)
	got := h.WaitPhase(run.Name, 20*time.Second, benchv1.PhaseFailed)
	c := meta.FindStatusCondition(got.Status.Conditions, benchv1.ConditionValid)
	if c == nil || c.Reason != benchv1.ReasonImageNotAllowed || !strings.Contains(c.Message, "--runner-image") || !strings.Contains(c.Message, "ghcr.io/dbperf-io/dbperf-runner:test") {
		t.Fatalf("Valid condition %+v", c)
	}
}
