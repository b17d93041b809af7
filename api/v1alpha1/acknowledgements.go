package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationAcknowledgements on a BenchmarkSchedule records a person's
// acceptance of a detected change (`kubectl dbperf ack`), as a JSON list of
// Acknowledgement. It takes effect after the run it names: the open
// regression (or improvement) closes, and from then on runs are judged
// against its level. The schedule's condition Acknowledged says who, when
// and why; the history marks the run. Removing an entry undoes it.
const AnnotationAcknowledgements = "bench.dbperf.io/acknowledgements"

// Acknowledgement is one person's acceptance of a new level.
type Acknowledgement struct {
	// Run is the newest run of the history when it was made: the change
	// open after that run is the one accepted.
	Run string `json:"run"`
	// From is the run where the accepted level starts; empty for the first
	// run of the open change.
	From string `json:"from,omitempty"`
	// Reason in the person's words.
	Reason string `json:"reason"`
	// By is who made it, as the API server authenticated them.
	By string      `json:"by,omitempty"`
	At metav1.Time `json:"at"`
}

// String says what, by whom and why.
func (a Acknowledgement) String() string {
	by := a.By
	if by == "" {
		by = "someone"
	}
	what := "the change open at run " + a.Run
	if a.From != "" {
		what += " (its level from run " + a.From + ")"
	}
	return fmt.Sprintf("%s acknowledged by %s at %s: %s", what, by, a.At.UTC().Format("2006-01-02T15:04:05Z"), a.Reason)
}

// Acknowledgements reads a schedule's acknowledgements; an unreadable
// annotation is an error (the schedule's condition says so and nothing is
// acknowledged).
func Acknowledgements(annotations map[string]string) ([]Acknowledgement, error) {
	raw := strings.TrimSpace(annotations[AnnotationAcknowledgements])
	if raw == "" {
		return nil, nil
	}
	var out []Acknowledgement
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list of acknowledgements: %w", AnnotationAcknowledgements, err)
	}
	return out, nil
}
