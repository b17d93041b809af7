package specs

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// Random phases replay from the seed: the same seed, disturbance and
// repetition give the same offset, always inside the range, to the
// millisecond; repetitions and seeds draw differently; without a seed the
// run's UID is the seed, so every reconcile of a run draws alike.
func TestDisturbanceOffsetsReplayFromTheSeed(t *testing.T) {
	d := benchv1.Disturbance{Name: "neighbour", Between: &benchv1.OffsetRange{
		From: metav1.Duration{Duration: 60 * time.Second}, To: metav1.Duration{Duration: 90 * time.Second}}}
	seen := map[time.Duration]bool{}
	for rep := int32(1); rep <= 50; rep++ {
		a, b := DisturbanceOffset(7, d, rep), DisturbanceOffset(7, d, rep)
		if a != b {
			t.Fatalf("repetition %d drew %s then %s", rep, a, b)
		}
		if a < 60*time.Second || a > 90*time.Second || a%time.Millisecond != 0 {
			t.Fatalf("repetition %d: %s outside [60s, 90s] or not whole milliseconds", rep, a)
		}
		seen[a] = true
	}
	if len(seen) < 45 {
		t.Errorf("50 repetitions drew %d distinct offsets", len(seen))
	}
	if DisturbanceOffset(7, d, 1) == DisturbanceOffset(8, d, 1) && DisturbanceOffset(7, d, 2) == DisturbanceOffset(8, d, 2) {
		t.Error("another seed draws the same offsets")
	}
	at := d
	at.Between, at.At = nil, &metav1.Duration{Duration: 42 * time.Second}
	if got := DisturbanceOffset(7, at, 3); got != 42*time.Second {
		t.Errorf("a fixed offset moved: %s", got)
	}

	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{UID: types.UID("8d0c0c0e-1")}}
	run.Spec.Disturbances = &benchv1.DisturbancesSpec{Schedule: []benchv1.Disturbance{d,
		{Name: "early", At: &metav1.Duration{Duration: 10 * time.Second}, Repetitions: []int32{2}}}}
	if DisturbanceSeed(run) != DisturbanceSeed(run.DeepCopy()) {
		t.Error("the seed drawn from the UID changed")
	}
	if p := Disturbances(run, 1); len(p) != 1 || p[0].Name != "neighbour" {
		t.Errorf("repetition 1: %+v", p)
	}
	p := Disturbances(run, 2)
	if len(p) != 2 || p[0].Name != "early" || SteadyUntil(p) != 10*time.Second {
		t.Errorf("repetition 2, in offset order: %+v (steady until %s)", p, SteadyUntil(p))
	}
	seed := int64(99)
	run.Spec.Disturbances.Seed = &seed
	if DisturbanceSeed(run) != 99 || Disturbances(run, 1)[0].Offset != DisturbanceOffset(99, d, 1) {
		t.Error("spec.disturbances.seed is not the seed")
	}
}

// A SQL load runs as the target's administrator (its superuser Secret, or
// sqlLoad.secretRef), or as the workload's user when it says so; the
// password reaches the runner from its Secret and is redacted; the first
// load generator gets the disturbances as flags, with the steady window's
// end.
func TestDisturbancesReachTheRunner(t *testing.T) {
	ref := func(secret, key string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}
	}
	ep := pod.Endpoint{Host: "pg-rw.perf.svc", Port: 5432, Database: "app", Username: ref("pg-app", "username"), Password: ref("pg-app", "password"),
		Superuser: ref("pg-superuser", "username"), SuperuserPassword: ref("pg-superuser", "password")}
	load := benchv1.Disturbance{Name: "heavy", At: &metav1.Duration{Duration: time.Minute}, Duration: &metav1.Duration{Duration: time.Minute},
		SQLLoad: &benchv1.SQLLoadDisturbance{Sessions: 8, Statements: []string{"SELECT 1"}}}
	for name, tc := range map[string]struct {
		mutate func(*benchv1.Disturbance)
		secret string
	}{
		"administrator":   {func(*benchv1.Disturbance) {}, "pg-superuser"},
		"workload":        {func(d *benchv1.Disturbance) { d.SQLLoad.Credentials = benchv1.CredentialsWorkload }, "pg-app"},
		"its own account": {func(d *benchv1.Disturbance) { d.SQLLoad.SecretRef = &corev1.LocalObjectReference{Name: "dba"} }, "dba"},
	} {
		t.Run(name, func(t *testing.T) {
			d := load.DeepCopy()
			tc.mutate(d)
			run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "u"}}
			run.Spec.Disturbances = &benchv1.DisturbancesSpec{Schedule: []benchv1.Disturbance{*d}}
			p := JobParams{Run: run, Role: benchv1.RoleLoadgen, Repetition: 1, Endpoint: ep, Protocol: pod.ProtocolPostgres}
			env := map[string]string{}
			for _, e := range disturbEnv(p) {
				env[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			}
			if env[pod.EnvDisturbUsername] != tc.secret+"/username" || env[pod.EnvDisturbPassword] != tc.secret+"/password" {
				t.Errorf("credentials from %v, want Secret %s", env, tc.secret)
			}
			c := execCommand(p)
			if len(c.Disturbances) != 1 || c.Disturbances[0].Sessions != 8 || c.SteadyUntil != time.Minute || !slices.Contains(c.RedactEnv, pod.EnvDisturbPassword) {
				t.Errorf("runner flags %+v steady until %s redact %v", c.Disturbances, c.SteadyUntil, c.RedactEnv)
			}
			if !Disturbed(p) || Generators(p) != 1 {
				t.Error("a disturbed measurement without its start barrier")
			}
			if c.RestartAfter != 0 {
				t.Errorf("a SQL load restarts nothing, yet --restart-after %s", c.RestartAfter)
			}
		})
	}
}

// A member loss makes the runner restart a tool that ends early after it
// (--restart-after: the first loss's offset), even without its ledger.
func TestMemberLossRestartsTheTool(t *testing.T) {
	off := false
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "u"}}
	run.Spec.Disturbances = &benchv1.DisturbancesSpec{Schedule: []benchv1.Disturbance{
		{Name: "late", At: &metav1.Duration{Duration: 90 * time.Second}, MemberLoss: &benchv1.MemberLossDisturbance{Member: benchv1.MemberPrimary}},
		{Name: "early", At: &metav1.Duration{Duration: 40 * time.Second}, MemberLoss: &benchv1.MemberLossDisturbance{Member: benchv1.MemberReplica, WriteLedger: &off}},
		{Name: "load", At: &metav1.Duration{Duration: 10 * time.Second}, Duration: &metav1.Duration{Duration: time.Second},
			SQLLoad: &benchv1.SQLLoadDisturbance{Sessions: 1, Statements: []string{"SELECT 1"}}},
	}}
	p := JobParams{Run: run, Role: benchv1.RoleLoadgen, Repetition: 1, Endpoint: pod.Endpoint{Host: "pg-rw", Port: 5432}, Protocol: pod.ProtocolPostgres}
	if c := execCommand(p); c.RestartAfter != 40*time.Second || c.SteadyUntil != 10*time.Second {
		t.Errorf("restart after %s, steady until %s; want 40s and 10s", c.RestartAfter, c.SteadyUntil)
	}
	p.Role = benchv1.RoleTarget
	if c := execCommand(p); c.RestartAfter != 0 {
		t.Errorf("a pod that is not a load generator restarts after %s", c.RestartAfter)
	}
}
