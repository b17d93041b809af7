// Package podstart says why a pod has not started, in the words
// Kubernetes used: the scheduler's Unschedulable message with what the pod
// asked for and where, the kubelet's ImagePullBackOff with the image, a
// container it could not create, an eviction, and a controller's refused
// pod creation (a quota). It reads only what the API server holds (the
// pod's status, the events of its controller), so it needs no kubelet and
// answers the same for every pod of a run: the target's, a prepare step's
// and a load generator's.
package podstart

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Stuck is a pod that has not started, and why.
type Stuck struct {
	// Pod is the pod's name; empty when the pod was never created (a
	// controller's creation was refused: see Refused).
	Pod string
	// Reason is Kubernetes' word for it: Unschedulable, ImagePullBackOff,
	// ErrImagePull, InvalidImageName, CreateContainerConfigError,
	// CreateContainerError, CrashLoopBackOff, Evicted, FailedCreate.
	Reason string
	// Message is Kubernetes' message with what it concerns (the image, the
	// node selector and requests), shortened to MaxMessageBytes.
	Message string
	// Since is when it became so: the condition's transition, or the pod's
	// creation when Kubernetes recorded no time.
	Since time.Time
	// Final: waiting cannot help (an eviction, an image name that is not
	// one); the others may clear by themselves (a node pool scaling up, a
	// registry that answers again, a Secret created late).
	Final bool
}

// MaxMessageBytes bounds a Stuck's message.
const MaxMessageBytes = 480

// String is the stuck pod as a condition's message says it.
func (s *Stuck) String() string {
	if s.Pod == "" {
		return fmt.Sprintf("%s: %s", s.Reason, s.Message)
	}
	return fmt.Sprintf("pod %s cannot start: %s: %s", s.Pod, s.Reason, s.Message)
}

// waitingReasons are the container waiting reasons that mean the
// container will not start by itself soon, and whether they are final.
// ContainerCreating and PodInitializing are a start in progress.
var waitingReasons = map[string]bool{
	"ImagePullBackOff":           false,
	"ErrImagePull":               false,
	"ErrImageNeverPull":          true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": false, // a Secret or ConfigMap key missing: may be created
	"CreateContainerError":       false,
	"RunContainerError":          false,
	"CrashLoopBackOff":           false,
}

// Why says why pod has not started, or nil when it has started (a
// container runs or ran) or is starting normally (scheduled, its image
// being pulled). A pod that started and then failed is not Stuck, except
// when it was evicted: its containers' own ends say why they ended.
func Why(pod *corev1.Pod) *Stuck {
	since := pod.CreationTimestamp.Time
	if pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == "Evicted" {
		return &Stuck{Pod: pod.Name, Reason: "Evicted", Message: shorten(pod.Status.Message), Since: evictedAt(pod), Final: true}
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse {
			continue
		}
		if c.Reason != corev1.PodReasonUnschedulable && c.Reason != corev1.PodReasonSchedulerError {
			return nil // not yet looked at by the scheduler
		}
		if !c.LastTransitionTime.IsZero() {
			since = c.LastTransitionTime.Time
		}
		return &Stuck{Pod: pod.Name, Reason: c.Reason, Message: shorten(schedulerMessage(c.Message) + " (" + asks(pod) + ")"), Since: since}
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		final, known := waitingReasons[w.Reason]
		if !known {
			continue
		}
		if w.Reason == "CrashLoopBackOff" && (cs.LastTerminationState.Terminated == nil || cs.RestartCount == 0) {
			continue
		}
		msg := w.Message
		switch w.Reason {
		case "ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "InvalidImageName":
			img := imageOf(pod, cs.Name)
			if img == "" {
				img = cs.Image
			}
			if msg == "" || !strings.Contains(msg, img) {
				msg = strings.TrimSpace(fmt.Sprintf("image %s of container %s: %s", img, cs.Name, msg))
			} else {
				msg = fmt.Sprintf("container %s: %s", cs.Name, msg)
			}
		case "CrashLoopBackOff":
			t := cs.LastTerminationState.Terminated
			msg = fmt.Sprintf("container %s restarted %d times, last exit code %d (%s)", cs.Name, cs.RestartCount, t.ExitCode, orDash(t.Reason))
			if m := strings.TrimSpace(t.Message); m != "" {
				msg += ": " + m
			}
		default:
			msg = fmt.Sprintf("container %s: %s", cs.Name, msg)
		}
		return &Stuck{Pod: pod.Name, Reason: w.Reason, Message: shorten(msg), Since: scheduledAt(pod, since), Final: final}
	}
	return nil
}

// Started says whether every container of pod has started (runs or ran).
func Started(pod *corev1.Pod) bool {
	if len(pod.Status.ContainerStatuses) == 0 {
		return pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running == nil && cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

// ScheduledAt is when pod was bound to a node, and whether it was.
func ScheduledAt(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			if c.LastTransitionTime.IsZero() {
				return pod.CreationTimestamp.Time, true
			}
			return c.LastTransitionTime.Time, true
		}
	}
	if pod.Spec.NodeName != "" {
		return pod.CreationTimestamp.Time, true
	}
	return time.Time{}, false
}

func scheduledAt(pod *corev1.Pod, fallback time.Time) time.Time {
	if t, ok := ScheduledAt(pod); ok {
		return t
	}
	return fallback
}

func evictedAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// Refused is a controller's refused pod creation (its FailedCreate event,
// a quota or an admission webhook saying no), as Stuck, or nil. events are
// the events of the controller object (a Job, a StatefulSet). The newest
// FailedCreate says why; the oldest says since when: each retry names a new
// pod, so its event is a new one, and a Job controller retrying with
// backoff must not restart the clock.
func Refused(events []corev1.Event) *Stuck {
	var newest *corev1.Event
	var since time.Time
	for i := range events {
		e := &events[i]
		if e.Reason != "FailedCreate" {
			continue
		}
		if newest == nil || eventTime(newest).Before(eventTime(e)) {
			newest = e
		}
		first := e.FirstTimestamp.Time
		if first.IsZero() {
			first = eventTime(e)
		}
		if since.IsZero() || first.Before(since) {
			since = first
		}
	}
	if newest == nil {
		return nil
	}
	what := newest.InvolvedObject.Kind + " " + newest.InvolvedObject.Name
	return &Stuck{Reason: "FailedCreate", Message: shorten(what + " could not create its pod: " + newest.Message), Since: since}
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// schedulerMessage keeps what the scheduler said of the nodes and drops
// its notes on dynamic resource claims and preemption, which only repeat
// that nothing fits.
func schedulerMessage(m string) string {
	for _, tail := range []string{" no new claims to deallocate", " preemption:"} {
		if i := strings.Index(m, tail); i > 0 {
			m = m[:i]
		}
	}
	return strings.TrimSpace(m)
}

// asks is where the pod may go and what it asks for: its node selector,
// its required node affinity's terms, and its containers' requests summed.
func asks(pod *corev1.Pod) string {
	var parts []string
	if sel := pod.Spec.NodeSelector; len(sel) > 0 {
		parts = append(parts, "nodeSelector "+joinMap(sel))
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []string
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				terms = append(terms, fmt.Sprintf("%s %s %s", e.Key, e.Operator, strings.Join(e.Values, ",")))
			}
		}
		if len(terms) > 0 {
			parts = append(parts, "node affinity "+strings.Join(terms, " and "))
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		parts = append(parts, "one per "+a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey)
	}
	req := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		for k, v := range c.Resources.Requests {
			sum := req[k]
			sum.Add(v)
			req[k] = sum
		}
	}
	if len(req) > 0 {
		keys := make([]string, 0, len(req))
		for k := range req {
			keys = append(keys, string(k))
		}
		sort.Strings(keys)
		var rs []string
		for _, k := range keys {
			q := req[corev1.ResourceName(k)]
			rs = append(rs, k+" "+q.String())
		}
		parts = append(parts, "requests "+strings.Join(rs, ", "))
	}
	if len(parts) == 0 {
		return "no node selector, no requests"
	}
	return strings.Join(parts, "; ")
}

// imageOf is the image of the named container or init container.
func imageOf(pod *corev1.Pod, name string) string {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

func joinMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return strings.Join(out, ",")
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxMessageBytes {
		return s
	}
	cut := MaxMessageBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// First is the stuck pod that has been so longest, final ones first
// (they end the wait at once), or nil.
func First(stuck []*Stuck) *Stuck {
	var out *Stuck
	for _, s := range stuck {
		switch {
		case s == nil:
		case out == nil, s.Final && !out.Final, s.Final == out.Final && s.Since.Before(out.Since):
			out = s
		}
	}
	return out
}
