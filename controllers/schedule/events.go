package schedule

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
)

// A schedule's transitions (a regression or an improvement opened or
// closed, an acknowledgement) are said once each, whatever happens between
// the status write that records one and its event: the transition is
// stored in status.regression.unannounced with that write, its event is
// created by the API client (not the recorder, which sends in the
// background and loses what a stopped manager had not sent) under a name
// made of the schedule's and the transition's number, and the list is
// emptied after. A manager stopped in between leaves the list for the next
// reconcile; a retry finds the event already there.

// maxUnannounced bounds status.regression.unannounced (its schema's MaxItems).
const maxUnannounced = 16

// queueTransitions numbers the transitions just judged and keeps them to
// announce once the status recording them is stored.
func queueTransitions(s *benchv1.BenchmarkSchedule, events []status.Event, now time.Time) {
	reg := s.Status.Regression
	if reg == nil || len(events) == 0 {
		return
	}
	for _, e := range events {
		reg.Transitions++
		reg.Unannounced = append(reg.Unannounced, benchv1.TransitionEvent{Sequence: reg.Transitions, Type: e.Type, Reason: e.Reason,
			Message: status.Truncate(e.Message, status.MaxEventMessage), Time: metav1.NewTime(now)})
	}
	if n := len(reg.Unannounced); n > maxUnannounced {
		reg.Unannounced = reg.Unannounced[n-maxUnannounced:]
	}
}

// announce creates the events of the unannounced transitions and empties
// the list in s's status (the caller stores it).
func (r *Reconciler) announce(ctx context.Context, s *benchv1.BenchmarkSchedule) error {
	reg := s.Status.Regression
	if reg == nil || len(reg.Unannounced) == 0 {
		return nil
	}
	for _, e := range reg.Unannounced {
		if err := r.Create(ctx, transitionEvent(s, e)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the event of transition %d (%s): %w", e.Sequence, e.Reason, err)
		}
	}
	reg.Unannounced = nil
	return nil
}

// transitionEvent is the event of transition e, as the recorder would have
// written it, named after the schedule (its name and UID) and e's number.
func transitionEvent(s *benchv1.BenchmarkSchedule, e benchv1.TransitionEvent) *corev1.Event {
	prefix := s.Name
	if len(prefix) > 200 {
		prefix = strings.TrimRight(prefix[:200], "-.")
	}
	uid := string(s.UID)
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s.t%d", prefix, uid, e.Sequence), Namespace: s.Namespace},
		InvolvedObject: corev1.ObjectReference{APIVersion: benchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
			Namespace: s.Namespace, Name: s.Name, UID: s.UID},
		Type: e.Type, Reason: e.Reason, Message: e.Message,
		FirstTimestamp: e.Time, LastTimestamp: e.Time, Count: 1,
		Source:              corev1.EventSource{Component: status.EventSource},
		ReportingController: status.EventSource,
	}
}

// announceStored announces the transitions of a status just stored and
// stores the emptied list; a refused write leaves it to the next reconcile,
// which finds the events made.
func (r *Reconciler) announceStored(ctx context.Context, s *benchv1.BenchmarkSchedule) error {
	if s.Status.Regression == nil || len(s.Status.Regression.Unannounced) == 0 {
		return nil
	}
	base := s.DeepCopy()
	if err := r.announce(ctx, s); err != nil {
		return err
	}
	_, err := status.Patch(ctx, r.Client, base, s, base.Status, s.Status)
	return err
}
