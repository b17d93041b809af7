package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// A disturbed measurement's Job records what its disturbances did, in one
// annotation written with an optimistic lock before each action: the
// intent (which pod, which node, when) is stored before the pod is deleted
// or the stress pod created, so that a manager that restarts between the
// two repeats the same action on the same object (deletion with the pod's
// UID as precondition; creation of a pod of a fixed name) and never acts
// twice, and a removal is recorded the same way so that nothing is
// recreated after it. status.disturbing mirrors it for users.
const annotationDisturbances = "bench.dbperf.io/disturbances"

// stressReportWait is how long after its window a stress pod still
// running is waited for, so that its report is read.
const stressReportWait = 10 * time.Second

// disturbLook is how often a measurement is looked at while one of its
// disturbances acts: the resolution of the instants observed (took effect,
// new primary, full redundancy).
const disturbLook = 500 * time.Millisecond

// disturbRecord is what the operator did for one disturbance of a Job.
type disturbRecord struct {
	benchv1.DisturbanceStatus `json:",inline"`
	// MemberUID is the UID of the pod a member loss acts on: a pod of the
	// same name made afterwards is another pod.
	MemberUID types.UID `json:"memberUID,omitempty"`
	// Cordoned: a drain cordoned Node, to be uncordoned; CordonedTime and
	// UncordonedTime say when.
	Cordoned bool `json:"cordoned,omitempty"`
	// Drain: the disturbance cordons its member's node, stored with the
	// intent before the cordon, so that a record whose Cordoned was lost
	// (its write after the cordon refused) still undoes it.
	Drain          bool              `json:"drain,omitempty"`
	CordonedTime   *metav1.MicroTime `json:"cordonedTime,omitempty"`
	UncordonedTime *metav1.MicroTime `json:"uncordonedTime,omitempty"`
	// Report is the stress pod's own report (its termination message).
	Report string `json:"report,omitempty"`
	// Refused: the operator could not act on it safely; Message says why.
	Refused bool `json:"refused,omitempty"`
	// ChaosKind is the kind of the Chaos Mesh object a network
	// disturbance created (Object names it).
	ChaosKind string `json:"chaosKind,omitempty"`
	// VolumePath is what an IOChaos delays.
	VolumePath string `json:"volumePath,omitempty"`
	// Service, Endpoints and NotReady are what the target showed while a
	// member loss acted (observeTargetEvents): the ready endpoints of the
	// Service the load generators connect to, each change with its time,
	// the first as they were when it was first looked at; and nodes of
	// the target's pods that left Ready.
	Service   string           `json:"service,omitempty"`
	Endpoints []endpointChange `json:"endpoints,omitempty"`
	NotReady  []nodeNotReady   `json:"notReady,omitempty"`
	// Step and Repetition are the measurement's.
	Step       int   `json:"step"`
	Repetition int32 `json:"repetition"`
}

func (d *disturbRecord) active() bool {
	return d.RequestedTime != nil && d.RemovedTime == nil && !d.Refused
}

func readDisturbRecords(job *batchv1.Job) []disturbRecord {
	var recs []disturbRecord
	if v := job.Annotations[annotationDisturbances]; v != "" {
		_ = json.Unmarshal([]byte(v), &recs) // only the operator writes it
	}
	return recs
}

// saveDisturbRecords stores the records on the Job, refused when the Job
// changed since it was read (another reconcile acted): the caller's error
// makes the reconcile start again from the stored records.
func (r *BenchmarkRunReconciler) saveDisturbRecords(ctx context.Context, job *batchv1.Job, recs []disturbRecord) error {
	b, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	if job.Annotations[annotationDisturbances] == string(b) {
		return nil
	}
	patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[annotationDisturbances] = string(b)
	if err := r.Patch(ctx, job, patch); err != nil {
		return fmt.Errorf("while recording the disturbances of job %s: %w", job.Name, err)
	}
	return nil
}

// startOf is the instant a barrier Job's tools start, false before the
// barrier opened.
func startOf(job *batchv1.Job) (time.Time, bool) {
	at, err := time.Parse(time.RFC3339Nano, job.Annotations[specs.AnnotationStartAt])
	return at, err == nil
}

// disturb acts on the disturbances of a measurement in progress that are
// due, observes what they did, and ends those whose duration has passed.
// It returns when to look again (zero: no disturbance pending).
func (r *BenchmarkRunReconciler) disturb(ctx context.Context, st *runState, job *batchv1.Job, u measurement) (time.Duration, error) {
	planned := specs.Disturbances(st.run, u.rep)
	t0, open := startOf(job)
	if len(planned) == 0 || !open {
		return 0, nil
	}
	recs := readDisturbRecords(job)
	now := time.Now()
	var next time.Duration
	soon := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	for _, p := range planned {
		if p.ByRunner() {
			continue // the runner acts on it and reports it in the result
		}
		i := slices.IndexFunc(recs, func(d disturbRecord) bool { return d.Name == p.Name })
		if i < 0 {
			recs = append(recs, disturbRecord{DisturbanceStatus: benchv1.DisturbanceStatus{Name: p.Name, Kind: p.Kind, Job: job.Name,
				Offset: metav1.Duration{Duration: p.Offset}}, Step: u.step, Repetition: u.rep})
			i = len(recs) - 1
		}
		d := &recs[i]
		due := t0.Add(p.Offset)
		if d.RequestedTime == nil {
			if now.Before(due) {
				soon(due.Sub(now))
				continue
			}
			// The intent first, stored; the action after.
			if err := r.planDisturbance(ctx, st, p, d, u, now); err != nil {
				return 0, err
			}
			if err := r.saveDisturbRecords(ctx, job, recs); err != nil {
				return 0, err
			}
			st.note(d.Refused, "Disturbance", "%s (%s) of job %s: %s", p.Name, p.Kind, job.Name, d.Message)
		}
		if d.Refused {
			continue
		}
		if err := r.actOn(ctx, st, p, d); apierrors.IsForbidden(err) {
			d.Refused, d.Message = true, fmt.Sprintf("the operator may not act on it (%v): install the chart with disturbances.enabled=true (docs/security.md)", err)
			st.note(true, "Disturbance", "%s (%s) of job %s: %s", p.Name, p.Kind, job.Name, d.Message)
			continue
		} else if err != nil {
			return 0, err
		}
		if err := r.observeDisturbance(ctx, st, d, time.Now()); err != nil {
			return 0, err
		}
		if over := due.Add(p.Duration()); p.Duration() > 0 && d.RemovedTime == nil && !time.Now().Before(over) {
			// A stress pod ends by itself when its duration has passed:
			// its report (the termination message) is read before it is
			// deleted, waiting for it a little.
			if d.Kind != specs.DisturbNoisyNeighbour || d.EndedTime != nil || time.Now().After(over.Add(stressReportWait)) {
				if err := r.endDisturbance(ctx, st, d, time.Now()); err != nil {
					return 0, err
				}
			}
		}
		if p.Duration() > 0 && d.EndedTime == nil {
			soon(time.Until(due.Add(p.Duration())))
		}
		if d.active() && (d.TookEffectTime == nil || d.EndedTime == nil || d.RemovedTime == nil && d.Kind != specs.DisturbMemberLoss ||
			d.Kind == specs.DisturbMemberLoss && d.FullRedundancyTime == nil) {
			soon(disturbLook)
		}
	}
	run := st.run
	run.Status.Disturbing = mirrorRecords(recs)
	seed := specs.DisturbanceSeed(run)
	run.Status.DisturbanceSeed = &seed
	return next, r.saveDisturbRecords(ctx, job, recs)
}

// undisturb ends what is left of a measurement's disturbances once its
// load generators ended: stress pods and chaos objects deleted, a cordoned
// node uncordoned. done is true when nothing of them is left.
func (r *BenchmarkRunReconciler) undisturb(ctx context.Context, st *runState, job *batchv1.Job) (done bool, _ error) {
	recs := readDisturbRecords(job)
	done = true
	for i := range recs {
		d := &recs[i]
		if d.RequestedTime == nil || d.Refused || d.RemovedTime != nil {
			continue
		}
		now := time.Now()
		if err := r.observeDisturbance(ctx, st, d, now); err != nil {
			return false, err
		}
		if d.EndedTime == nil || d.Kind == specs.DisturbMemberLoss {
			if err := r.endDisturbance(ctx, st, d, now); err != nil {
				return false, err
			}
		}
		if d.RemovedTime == nil {
			done = false
		}
	}
	st.run.Status.Disturbing = mirrorRecords(recs)
	return done, r.saveDisturbRecords(ctx, job, recs)
}

func mirrorRecords(recs []disturbRecord) []benchv1.DisturbanceStatus {
	out := make([]benchv1.DisturbanceStatus, len(recs))
	for i, d := range recs {
		out[i] = d.DisturbanceStatus
	}
	return out
}

// planDisturbance decides what a due disturbance acts on, or refuses it
// when it cannot act safely, and stamps it requested.
func (r *BenchmarkRunReconciler) planDisturbance(ctx context.Context, st *runState, p specs.Planned, d *disturbRecord, u measurement, now time.Time) error {
	t := metav1.NewMicroTime(now)
	d.RequestedTime = &t
	refuse := func(format string, args ...any) error {
		d.Refused, d.Message = true, fmt.Sprintf(format, args...)
		return nil
	}
	switch p.Kind {
	case specs.DisturbNoisyNeighbour, specs.DisturbMemberLoss:
		member, err := r.memberOf(ctx, st, p)
		if err != nil {
			return err
		}
		if member == nil {
			return refuse("no pod of the target to act on (selector %v)", st.target.PodSelector)
		}
		d.Member, d.MemberUID, d.Node = member.Name, member.UID, member.Spec.NodeName
		if p.Kind == specs.DisturbNoisyNeighbour {
			if d.Node == "" {
				return refuse("the target's pod %s is not on a node yet", member.Name)
			}
			d.Object = specs.NoisePodName(st.run, p.Name, u.step, u.rep)
			d.Message = fmt.Sprintf("stress pod %s on node %s, beside %s", d.Object, d.Node, member.Name)
			return nil
		}
		switch p.MemberLoss.Action {
		case benchv1.ActionDrainNode:
			if other, err := r.otherRunOn(ctx, st.run, d.Node); err != nil || other != "" {
				if err != nil {
					return err
				}
				return refuse("node %s also carries %s of another run: it is not drained", d.Node, other)
			}
			d.Message, d.Drain = fmt.Sprintf("cordon and drain node %s of %s", d.Node, member.Name), true
		case benchv1.ActionSwitchover:
			d.Message = fmt.Sprintf("switch over from primary %s", member.Name)
		default:
			d.Message = fmt.Sprintf("delete pod %s on node %s", member.Name, d.Node)
		}
	case specs.DisturbNetwork:
		if _, why, err := r.chaosMissing(st.run); err != nil || why != "" {
			if err != nil {
				return err
			}
			return refuse("%s", why)
		}
		gvk := chaosKind(p.Network)
		d.ChaosKind, d.Object = gvk.Kind, specs.NoisePodName(st.run, p.Name, u.step, u.rep)
		if p.Network.Action == benchv1.NetworkIODelay {
			member, err := r.memberOf(ctx, st, p)
			if err != nil {
				return err
			}
			if member == nil || dataVolumePath(member) == "" {
				return refuse("no volume of the target's pods to delay")
			}
			d.Member, d.VolumePath = member.Name, dataVolumePath(member)
		}
		d.Message = fmt.Sprintf("Chaos Mesh %s %s on the target's pods (%s)", gvk.Kind, d.Object, p.Network.Action)
	}
	return nil
}

// memberOf is the target's pod a disturbance acts on: its primary (or one
// server), or for Member Replica the first replica by name.
func (r *BenchmarkRunReconciler) memberOf(ctx context.Context, st *runState, p specs.Planned) (*corev1.Pod, error) {
	o := st.target
	role := benchv1.MemberPrimary
	if p.MemberLoss != nil && p.MemberLoss.Member != "" {
		role = p.MemberLoss.Member
	}
	list := func(sel map[string]string) ([]corev1.Pod, error) {
		if len(sel) == 0 {
			return nil, nil
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(st.run.Namespace), client.MatchingLabels(sel)); err != nil {
			return nil, err
		}
		live := pods.Items[:0]
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil {
				live = append(live, pod)
			}
		}
		sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
		return live, nil
	}
	primaries, err := list(o.PrimarySelector)
	if err != nil {
		return nil, err
	}
	if role != benchv1.MemberReplica && len(primaries) > 0 {
		return &primaries[0], nil
	}
	all, err := list(o.PodSelector)
	if err != nil {
		return nil, err
	}
	for i := range all {
		isPrimary := slices.ContainsFunc(primaries, func(p corev1.Pod) bool { return p.UID == all[i].UID })
		if role == benchv1.MemberReplica && isPrimary {
			continue
		}
		return &all[i], nil
	}
	return nil, nil
}

// otherRunOn names a pod of another run on node, "" when there is none.
func (r *BenchmarkRunReconciler) otherRunOn(ctx context.Context, run *benchv1.BenchmarkRun, node string) (string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.HasLabels{benchv1.LabelRunUID}); err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == node && p.Labels[benchv1.LabelRunUID] != string(run.UID) && p.DeletionTimestamp == nil {
			return "pod " + p.Namespace + "/" + p.Name, nil
		}
	}
	return "", nil
}

// actOn does what a planned disturbance does, idempotently: a second call
// (a restarted manager, a retried reconcile) finds it done.
func (r *BenchmarkRunReconciler) actOn(ctx context.Context, st *runState, p specs.Planned, d *disturbRecord) error {
	if d.TookEffectTime != nil || d.EndedTime != nil {
		return nil
	}
	switch p.Kind {
	case specs.DisturbNoisyNeighbour:
		pod := r.noisePod(st, p, d)
		if err := r.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("while creating the stress pod %s: %w", pod.Name, err)
		}
	case specs.DisturbNetwork:
		obj := chaosObject(st, p, d.Object, d.VolumePath)
		if err := r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("while creating the Chaos Mesh %s %s: %w", d.ChaosKind, d.Object, err)
		}
	case specs.DisturbMemberLoss:
		switch p.MemberLoss.Action {
		case benchv1.ActionSwitchover:
			sw, ok := st.prov.(targets.Switcher)
			if !ok {
				d.Refused, d.Message = true, "the target cannot switch over"
				return nil
			}
			return sw.Switchover(ctx, r.Client, st.run, d.Member)
		case benchv1.ActionDrainNode:
			if !d.Cordoned {
				if err := r.cordon(ctx, d.Node, true); err != nil {
					return err
				}
				at := metav1.NewMicroTime(time.Now())
				d.Cordoned, d.CordonedTime = true, &at
			}
			return r.evict(ctx, st.run.Namespace, d.Member, d.MemberUID)
		default:
			return r.deleteMember(ctx, st.run.Namespace, d.Member, d.MemberUID, p.MemberLoss.GracePeriod)
		}
	}
	return nil
}

func (r *BenchmarkRunReconciler) deleteMember(ctx context.Context, ns, name string, uid types.UID, grace *metav1.Duration) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	opts := []client.DeleteOption{client.Preconditions{UID: &uid}, client.GracePeriodSeconds(0)}
	if grace != nil {
		opts[1] = client.GracePeriodSeconds(int64(grace.Seconds()))
	}
	err := r.Delete(ctx, pod, opts...)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or already another pod of its name
		return nil
	}
	return err
}

func (r *BenchmarkRunReconciler) evict(ctx context.Context, ns, name string, uid types.UID) error {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	err := r.SubResource("eviction").Create(ctx, pod, ev)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (r *BenchmarkRunReconciler) cordon(ctx context.Context, node string, on bool) error {
	var n corev1.Node
	if err := r.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		if apierrors.IsNotFound(err) && !on {
			return nil
		}
		return err
	}
	if n.Spec.Unschedulable == on {
		return nil
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Spec.Unschedulable = on
	return r.Patch(ctx, &n, patch)
}

// observeDisturbance records the instants the objects show: the member's
// pod gone, a new primary, the target ready again (full redundancy), the
// stress pod running and its report.
func (r *BenchmarkRunReconciler) observeDisturbance(ctx context.Context, st *runState, d *disturbRecord, now time.Time) error {
	at := metav1.NewMicroTime(now)
	switch d.Kind {
	case specs.DisturbNoisyNeighbour:
		var pod corev1.Pod
		err := r.Get(ctx, client.ObjectKey{Namespace: st.run.Namespace, Name: d.Object}, &pod)
		if apierrors.IsNotFound(err) {
			if d.EndedTime != nil && d.RemovedTime == nil {
				d.RemovedTime = &at
			}
			return nil
		}
		if err != nil {
			return err
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if d.TookEffectTime == nil {
				if s := cs.State.Running; s != nil {
					t := metav1.NewMicroTime(s.StartedAt.Time)
					d.TookEffectTime = &t
				} else if s := cs.State.Terminated; s != nil {
					t := metav1.NewMicroTime(s.StartedAt.Time)
					d.TookEffectTime = &t
				}
			}
			if s := cs.State.Terminated; s != nil && d.Report == "" {
				t := metav1.NewMicroTime(s.FinishedAt.Time)
				d.Report, d.EndedTime = s.Message, &t
			}
		}
	case specs.DisturbNetwork:
		u, err := r.getChaos(ctx, st.run.Namespace, d.Object, chaosGVK(d.ChaosKind))
		if err != nil {
			return err
		}
		if u == nil {
			if d.EndedTime != nil && d.RemovedTime == nil {
				d.RemovedTime = &at
			}
			return nil
		}
		if d.TookEffectTime == nil && injected(u) {
			d.TookEffectTime = &at
		}
	case specs.DisturbMemberLoss:
		if d.FullRedundancyTime == nil {
			if err := r.observeTargetEvents(ctx, st, d); err != nil {
				return err
			}
		}
		if d.TookEffectTime == nil {
			gone, err := r.memberGone(ctx, st.run.Namespace, d)
			if err != nil {
				return err
			}
			if gone {
				d.TookEffectTime = &at
			}
		}
		if d.NewPrimary == "" && len(st.target.PrimarySelector) > 0 {
			var pods corev1.PodList
			if err := r.List(ctx, &pods, client.InNamespace(st.run.Namespace), client.MatchingLabels(st.target.PrimarySelector)); err != nil {
				return err
			}
			for _, pod := range pods.Items {
				if pod.UID != d.MemberUID && pod.DeletionTimestamp == nil && (pod.Name != d.Member || d.TookEffectTime != nil) {
					d.NewPrimary, d.NewPrimaryTime = pod.Name, &at
					if d.TookEffectTime == nil { // a switchover takes effect when the primary changed
						d.TookEffectTime = &at
					}
					break
				}
			}
		}
		if d.TookEffectTime != nil && d.FullRedundancyTime == nil && st.target.Ready && now.After(d.TookEffectTime.Time) {
			d.FullRedundancyTime = &at
		}
	}
	return nil
}

// memberGone says whether the member's pod is gone (or replaced by
// another of its name), or evicted off a cordoned node.
func (r *BenchmarkRunReconciler) memberGone(ctx context.Context, ns string, d *disturbRecord) (bool, error) {
	var pod corev1.Pod
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: d.Member}, &pod)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return pod.UID != d.MemberUID || pod.DeletionTimestamp != nil, nil
}

// endDisturbance ends what a disturbance left: the stress pod deleted (its
// report read first), a cordoned node uncordoned; RemovedTime is set once
// nothing of it is left.
func (r *BenchmarkRunReconciler) endDisturbance(ctx context.Context, st *runState, d *disturbRecord, now time.Time) error {
	at := metav1.NewMicroTime(now)
	switch d.Kind {
	case specs.DisturbNoisyNeighbour:
		if d.EndedTime == nil {
			d.EndedTime = &at
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: st.run.Namespace, Name: d.Object}}
		err := r.Delete(ctx, pod, client.GracePeriodSeconds(0))
		if apierrors.IsNotFound(err) {
			d.RemovedTime = &at
			return nil
		}
		return err
	case specs.DisturbNetwork:
		if d.EndedTime == nil {
			d.EndedTime = &at
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(chaosGVK(d.ChaosKind))
		u.SetNamespace(st.run.Namespace)
		u.SetName(d.Object)
		err := r.Delete(ctx, u)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			d.RemovedTime = &at
			return nil
		}
		return err
	case specs.DisturbMemberLoss:
		if d.Cordoned || (d.Drain && d.UncordonedTime == nil) {
			if !d.Cordoned && d.CordonedTime == nil {
				// The cordon's record was lost with a refused write: the
				// node says whether it was made.
				var n corev1.Node
				if err := r.Get(ctx, client.ObjectKey{Name: d.Node}, &n); err == nil && n.Spec.Unschedulable {
					d.CordonedTime = d.RequestedTime
				}
			}
			if err := r.cordon(ctx, d.Node, false); err != nil {
				return err
			}
			d.Cordoned, d.UncordonedTime = false, &at
		}
		d.RemovedTime = &at
	default:
		d.RemovedTime = &at
	}
	return nil
}

// noisePod is the stress pod of a noisy neighbour.
func (r *BenchmarkRunReconciler) noisePod(st *runState, p specs.Planned, d *disturbRecord) *corev1.Pod {
	n := p.NoisyNeighbour
	stress := specs.StressOf(n, p.Duration())
	return specs.NoisePod(specs.NoiseParams{Run: st.built, Name: d.Object, Disturbance: p.Name, Step: d.Step, Repetition: d.Repetition,
		Node: d.Node, RunnerImage: r.RunnerImage, Stress: stress, Resources: n.Resources})
}
