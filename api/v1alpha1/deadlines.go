package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PhaseDeadlines bound each phase of a run on its own, so that a run that
// cannot go on says so when it stops going on, not at its timeout. Each
// phase's clock starts when its pods are scheduled: a pool scaling up or an
// image pulled slowly is not the phase's time. A pod that does not start
// at all is PodStart's.
type PhaseDeadlines struct {
	// PodStart is how long a pod of the run (the target's, the prepare
	// step's, a load generator's) may stay unstarted: unschedulable, its
	// image not pulled, its container not created, or its creation refused
	// (a quota). The pod is named in status at once (reason
	// PodNotStarted, with Kubernetes' reason and message); past PodStart
	// the run fails with it, keeping what it measured. An evicted pod or
	// an invalid image name fails the run at once. Default 10m.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 10m"
	// +optional
	PodStart *metav1.Duration `json:"podStart,omitempty"`

	// Provision bounds the target's provisioning, from when its first pod
	// is scheduled until it is ready (for an external target: from the
	// start of the phase). Default 30m.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 30m"
	// +optional
	Provision *metav1.Duration `json:"provision,omitempty"`

	// Prepare bounds the prepare step (schema build, data load), from when
	// its pod is scheduled until it ends. Default: none but the run's
	// timeout (a 1000-warehouse build takes hours).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 2h"
	// +optional
	Prepare *metav1.Duration `json:"prepare,omitempty"`

	// Measure bounds each measurement, from when its load generators are
	// scheduled until they end. A measurement past it is recorded Failed
	// with reason DeadlineExceeded, its Job deleted, and the run goes on to
	// the next. Default: three times the longest measurement the run has
	// recorded plus 10 minutes; none before the first is recorded.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 20m"
	// +optional
	Measure *metav1.Duration `json:"measure,omitempty"`

	// Collect bounds the collection of the results after the last
	// measurement (the results document, the environment). A run past it
	// fails with what it has, the missing results reported lost. Default 10m.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 10m"
	// +optional
	Collect *metav1.Duration `json:"collect,omitempty"`
}

// The deadlines' defaults (PhaseDeadlines).
const (
	DefaultPodStartDeadline  = 10 * time.Minute
	DefaultProvisionDeadline = 30 * time.Minute
	DefaultCollectDeadline   = 10 * time.Minute
	// DefaultMeasureFactor and DefaultMeasureMargin make the default
	// measure deadline: factor × the longest recorded measurement + margin.
	DefaultMeasureFactor = 3
	DefaultMeasureMargin = 10 * time.Minute
)

// PodStartDeadline is spec.deadlines.podStart or its default.
func (d PhaseDeadlines) PodStartDeadline() time.Duration {
	return durationOr(d.PodStart, DefaultPodStartDeadline)
}

// ProvisionDeadline is spec.deadlines.provision or its default.
func (d PhaseDeadlines) ProvisionDeadline() time.Duration {
	return durationOr(d.Provision, DefaultProvisionDeadline)
}

// PrepareDeadline is spec.deadlines.prepare; zero: none.
func (d PhaseDeadlines) PrepareDeadline() time.Duration { return durationOr(d.Prepare, 0) }

// CollectDeadline is spec.deadlines.collect or its default.
func (d PhaseDeadlines) CollectDeadline() time.Duration {
	return durationOr(d.Collect, DefaultCollectDeadline)
}

// MeasureDeadline is spec.deadlines.measure, or the default from the
// longest measurement recorded so far (zero: none recorded, no deadline).
func (d PhaseDeadlines) MeasureDeadline(longest time.Duration) time.Duration {
	if d.Measure != nil {
		return d.Measure.Duration
	}
	if longest <= 0 {
		return 0
	}
	return DefaultMeasureFactor*longest + DefaultMeasureMargin
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil || d.Duration <= 0 {
		return def
	}
	return d.Duration
}

// DeadlineStatus is the deadline of what the run waits for now.
type DeadlineStatus struct {
	// Phase is the phase whose deadline it is.
	Phase Phase `json:"phase"`
	// Of says what the clock runs for: the target, the prepare Job, a
	// measurement's Job, the results.
	Of string `json:"of"`
	// ClockStart is when the clock started: when the pods were scheduled
	// (the phase's start when it has none).
	ClockStart metav1.Time `json:"clockStart"`
	// At is when the deadline passes: clockStart + the phase's deadline.
	At metav1.Time `json:"at"`
}

// Condition reasons of deadlines and of pods that do not start.
const (
	// ReasonPodNotStarted (TargetReady, Prepared or Completed False): a pod
	// of the run has not started; the message names it with Kubernetes'
	// reason (Unschedulable with where it may go and what it asks for,
	// ImagePullBackOff with the image, CreateContainerConfigError,
	// Evicted, FailedCreate for a quota refusal). Past
	// spec.deadlines.podStart the run fails with it (Completed False).
	ReasonPodNotStarted = "PodNotStarted"
	// ReasonDeadlineExceeded (Completed False, or a measurement's reason):
	// a phase outlasted its deadline (spec.deadlines); the message says
	// which, how long, and when its clock started.
	ReasonDeadlineExceeded = "DeadlineExceeded"
)
