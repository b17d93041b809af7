package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

func TestRejectRefusesWhatItCannotRecord(t *testing.T) {
	for _, args := range [][]string{{"reject"}, {"reject", "a", "b", "--reason", "x"}, {"reject", "run"}, {"reject", "run", "--reason", "x", "--repetition", "-1"}} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestRejectChecksTheStepAndRepetition(t *testing.T) {
	r := &benchv1.BenchmarkRun{}
	r.Name = "r"
	r.Status.Steps = []benchv1.StepStatus{{Name: "clients=20", Repetitions: []benchv1.RepetitionStatus{{Index: 1}, {Index: 2}}}}
	for _, c := range []struct {
		rj   benchv1.Rejection
		want string
	}{
		{benchv1.Rejection{}, ""},
		{benchv1.Rejection{Step: "clients=20"}, ""},
		{benchv1.Rejection{Step: "clients=20", Repetition: 2}, ""},
		{benchv1.Rejection{Repetition: 1}, ""},
		{benchv1.Rejection{Step: "clients=40"}, `no step "clients=40"`},
		{benchv1.Rejection{Step: "clients=20", Repetition: 3}, "no measurement of repetition 3 in step clients=20"},
	} {
		err := checkScope(r, c.rj)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.rj, err, c.want)
		}
	}
}

func TestRejectionsCoverAndRead(t *testing.T) {
	rs, err := benchv1.Rejections(map[string]string{benchv1.AnnotationRejections: `[{"step":"s","repetition":2,"reason":"disk failed","by":"alice","at":"2026-11-25T12:00:00Z"}]`})
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	if _, ok := benchv1.Rejected(rs, "s", 2); !ok {
		t.Error("step s repetition 2 not covered")
	}
	if _, ok := benchv1.Rejected(rs, "s", 1); ok {
		t.Error("step s repetition 1 covered")
	}
	if got := rs[0].String(); got != "step s repetition 2 rejected by alice at 2026-11-25T12:00:00Z: disk failed" {
		t.Error(got)
	}
	if _, err := benchv1.Rejections(map[string]string{benchv1.AnnotationRejections: "yes"}); err == nil {
		t.Error("an unreadable annotation accepted")
	}
}
