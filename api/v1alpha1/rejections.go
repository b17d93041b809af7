package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationRejections on a BenchmarkRun records the measurements a person
// rejected (`kubectl dbperf reject`), as a JSON list of Rejection. A
// rejected measurement keeps its results but is left out of comparisons
// and of a schedule's history; the run's condition Rejected says so, and
// reports show it struck through with the reason. Removing an entry (or
// the annotation) undoes it.
const AnnotationRejections = "bench.dbperf.io/rejections"

// Rejection is one person's rejection of measurements of a run.
type Rejection struct {
	// Step is the step's name; empty for every step.
	Step string `json:"step,omitempty"`
	// Repetition counts from 1; 0 for every repetition.
	Repetition int32 `json:"repetition,omitempty"`
	// Reason in the person's words.
	Reason string `json:"reason"`
	// By is who rejected it, as the API server authenticated them.
	By string `json:"by,omitempty"`
	// At is when.
	At metav1.Time `json:"at"`
}

// Covers says whether the rejection takes in a step's repetition.
func (r Rejection) Covers(step string, repetition int32) bool {
	return (r.Step == "" || r.Step == step) && (r.Repetition == 0 || r.Repetition == repetition)
}

// Whole says whether the rejection takes in the whole run.
func (r Rejection) Whole() bool { return r.Step == "" && r.Repetition == 0 }

// What names what was rejected: "the whole run", "step S", "step S
// repetition N" or "repetition N of every step".
func (r Rejection) What() string {
	switch {
	case r.Whole():
		return "the whole run"
	case r.Repetition == 0:
		return "step " + r.Step
	case r.Step == "":
		return fmt.Sprintf("repetition %d of every step", r.Repetition)
	}
	return fmt.Sprintf("step %s repetition %d", r.Step, r.Repetition)
}

// String says what, by whom and why.
func (r Rejection) String() string {
	by := r.By
	if by == "" {
		by = "someone"
	}
	return fmt.Sprintf("%s rejected by %s at %s: %s", r.What(), by, r.At.UTC().Format("2006-01-02T15:04:05Z"), r.Reason)
}

// Rejections reads a run's rejections; an unreadable annotation is an
// error (the run's condition says so and nothing is rejected).
func Rejections(annotations map[string]string) ([]Rejection, error) {
	raw := strings.TrimSpace(annotations[AnnotationRejections])
	if raw == "" {
		return nil, nil
	}
	var out []Rejection
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list of rejections: %w", AnnotationRejections, err)
	}
	return out, nil
}

// Rejected returns the first rejection covering a step's repetition.
func Rejected(rs []Rejection, step string, repetition int32) (Rejection, bool) {
	for _, r := range rs {
		if r.Covers(step, repetition) {
			return r, true
		}
	}
	return Rejection{}, false
}
