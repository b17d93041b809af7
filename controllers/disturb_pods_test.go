package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Of a disturbed measurement, a target pod made again after the
// disturbance acted (the lost member back as a replica) is an event of the
// disturbance; one made again before it is what it always is, a reason
// not to trust the measurement.
func TestTargetPodsOfADisturbedMeasurement(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	end := start.Add(3 * time.Minute)
	took := start.Add(60 * time.Second)
	pod := func(created time.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pg-1", CreationTimestamp: metav1.NewTime(created)}, Spec: corev1.PodSpec{NodeName: "n1"}}
	}
	res := results.New("pgbench")
	res.StartTime, res.EndTime = &start, &end
	res.Disturbances = []results.Disturbance{{Name: "lose-primary", Kind: "memberLoss", TookEffect: &took}}
	cut, ok := disturbedFrom(res)
	if !ok || !cut.Equal(took) {
		t.Fatalf("disturbed from %s (%v), want %s", cut, ok, took)
	}
	judgeDisturbedPod(res, pod(took.Add(3*time.Second)), start, cut, end)
	if res.Verdict != results.Succeeded || len(res.Disturbances[0].Events) != 1 || !strings.Contains(res.Disturbances[0].Events[0].Message, "recreated") {
		t.Errorf("the member made again after the loss: verdict %s %q, events %+v", res.Verdict, res.Reasons, res.Disturbances[0].Events)
	}
	judgeDisturbedPod(res, pod(start.Add(20*time.Second)), start, cut, end)
	if res.Verdict != results.Invalid || !strings.Contains(strings.Join(res.Reasons, ";"), "before the disturbance") {
		t.Errorf("a pod made again before the disturbance: verdict %s %q", res.Verdict, res.Reasons)
	}
}

func TestServiceOfATargetsEndpoint(t *testing.T) {
	for host, want := range map[string]string{"pg-rw": "pg-rw", "pg-rw.perf": "pg-rw", "pg-rw.perf.svc": "pg-rw",
		"pg-rw.perf.svc.cluster.local": "pg-rw", "pg-rw.other.svc": "", "db.example.com": "", "10.0.0.1": ""} {
		if got := serviceOf(host, "perf"); got != want {
			t.Errorf("serviceOf(%q) = %q, want %q", host, got, want)
		}
	}
}
