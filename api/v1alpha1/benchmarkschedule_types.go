package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a trigger does while a run of the schedule is active.
// +kubebuilder:validation:Enum=Forbid;Allow;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyForbid: a cron trigger is skipped; a template change waits
	// for the active run and then starts exactly one run.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyAllow starts the new run alongside (node pools may still queue it).
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyReplace deletes the active run and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// RegressionMethod decides when a run starts a regression (or an
// improvement). Whatever the method, a regression then stays open until a
// run is back within the margin of the level before it, or a person
// acknowledges the new level (docs/comparisons.md).
// +kubebuilder:validation:Enum=Threshold;ChangePoint
type RegressionMethod string

const (
	// RegressionThreshold compares each valid run with the median of the
	// baselineRuns valid runs of the accepted level before it: worse by at
	// least thresholdPercent opens a regression.
	RegressionThreshold RegressionMethod = "Threshold"
	// RegressionChangePoint tests the newest runs against the mean of the
	// accepted level: one to four newest runs that each differ by at least
	// minEffectPercent and whose mean the level's spread makes unlikely
	// (provisional while they are one or two), or a change point found by
	// E-divisive means (a permutation test and Welch pruning) over the
	// level and the new run.
	RegressionChangePoint RegressionMethod = "ChangePoint"
)

// ChangeKind is the direction of a detected change.
// +kubebuilder:validation:Enum=Regression;Improvement
type ChangeKind string

const (
	ChangeRegression  ChangeKind = "Regression"
	ChangeImprovement ChangeKind = "Improvement"
)

// HistoryJudgement is what the regression policy said of one run.
// +kubebuilder:validation:Enum=NotEnoughHistory;NoRegression;Regression;Improvement
type HistoryJudgement string

const (
	// JudgedNotEnoughHistory: the accepted level had fewer valid runs than
	// the policy's baselineRuns; the run was not judged.
	JudgedNotEnoughHistory HistoryJudgement = "NotEnoughHistory"
	// JudgedNoRegression: within the margin of its level.
	JudgedNoRegression HistoryJudgement = "NoRegression"
	// JudgedRegression: a run of an open regression.
	JudgedRegression HistoryJudgement = "Regression"
	// JudgedImprovement: a run of an open improvement.
	JudgedImprovement HistoryJudgement = "Improvement"
)

// RunTemplate is the BenchmarkRun a schedule creates.
type RunTemplate struct {
	// Labels for the runs, such as bench.dbperf.io/release: v1.4.2 (the
	// release label of their history entries and metrics).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	Spec   BenchmarkRunSpec  `json:"spec"`
}

// ComparisonTemplate is the BenchmarkComparison a schedule creates.
type ComparisonTemplate struct {
	// Labels for the comparisons (and the release label of their history entries).
	// +optional
	Labels map[string]string       `json:"labels,omitempty"`
	Spec   BenchmarkComparisonSpec `json:"spec"`
}

// RegressionPolicy says what counts as a regression.
type RegressionPolicy struct {
	// Metric to watch; default the workload's primary metric.
	// +optional
	Metric string `json:"metric,omitempty"`
	// Operation of the metric, such as GET or Totals; optional.
	// +optional
	Operation string `json:"operation,omitempty"`
	// Step to watch, such as clients=40; default the step of the run's
	// headline number.
	// +optional
	Step string `json:"step,omitempty"`
	// +kubebuilder:default=Threshold
	// +optional
	Method RegressionMethod `json:"method,omitempty"`
	// ThresholdPercent for the Threshold method.
	// +kubebuilder:default=5
	// +optional
	ThresholdPercent Percent `json:"thresholdPercent,omitempty"`
	// MinEffectPercent for the ChangePoint method: smaller shifts are noise.
	// +kubebuilder:default=2
	// +optional
	MinEffectPercent Percent `json:"minEffectPercent,omitempty"`
	// BaselineRuns is how many valid runs of the accepted level form the
	// baseline; no run is judged before there are that many (the
	// ChangePoint method needs at least 5).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=5
	// +optional
	BaselineRuns int32 `json:"baselineRuns,omitempty"`
	// BaselineSelector restricts the baseline to runs with these labels,
	// such as the previous release.
	// +optional
	BaselineSelector *metav1.LabelSelector `json:"baselineSelector,omitempty"`
}

// BenchmarkScheduleSpec says when to run what, and what a regression is.
// +kubebuilder:validation:XValidation:rule="has(self.schedule) || !has(self.onTemplateChange) || self.onTemplateChange",message="a schedule needs a cron schedule or onTemplateChange"
// +kubebuilder:validation:XValidation:rule="has(self.runTemplate) != has(self.comparisonTemplate)",message="exactly one of runTemplate or comparisonTemplate must be set"
type BenchmarkScheduleSpec struct {
	// Schedule in cron format ("0 3 * * *"), in UTC; optional.
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// OnTemplateChange starts one run whenever the run template changes
	// (a GitOps commit that bumps a release image).
	// +kubebuilder:default=true
	// +optional
	OnTemplateChange *bool `json:"onTemplateChange,omitempty"`
	// RunOnCreate starts a run when the schedule is created.
	// +optional
	RunOnCreate bool `json:"runOnCreate,omitempty"`
	// Suspend stops new triggers; runs in progress go on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// RunTemplate is the run to create; its history records the watched
	// metric and a regression is judged by spec.regression.method.
	// +optional
	RunTemplate *RunTemplate `json:"runTemplate,omitempty"`
	// ComparisonTemplate is the comparison to create instead (for example a
	// release candidate against the current release on every change); its
	// history records Δ % of the watched metric for the first candidate, and
	// a regression is that metric's verdict Worse.
	// +optional
	ComparisonTemplate *ComparisonTemplate `json:"comparisonTemplate,omitempty"`
	// SuccessfulRunsHistoryLimit and FailedRunsHistoryLimit bound the finished
	// runs kept (their numbers stay in status.history).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=10
	// +optional
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=3
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`
	// HistoryLimit bounds status.history.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=500
	// +kubebuilder:default=100
	// +optional
	HistoryLimit int32 `json:"historyLimit,omitempty"`
	// Regression policy; without it no Regressed condition is computed.
	// +optional
	Regression *RegressionPolicy `json:"regression,omitempty"`
	// DeletionPolicy says what becomes of the runs and comparisons the
	// schedule made when the schedule is deleted: Retain (the default)
	// releases them, so that they and their results ConfigMaps stay (runs
	// in progress run to completion), marked with the annotation
	// bench.dbperf.io/released-from; Delete deletes them with the schedule.
	// The history limits delete old runs and comparisons whatever the
	// policy. (The deletionPolicy of a comparisonTemplate is not part of
	// the template's hash: changing it starts no comparison.)
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// HistoryEntry is one finished run of a schedule.
type HistoryEntry struct {
	// Run is the BenchmarkRun (or BenchmarkComparison) of this entry.
	Run       string      `json:"run"`
	StartTime metav1.Time `json:"startTime"`
	// Phase of the run, or of the comparison (its phases are a subset).
	Phase Phase `json:"phase"`
	// +optional
	Release string `json:"release,omitempty"`
	// Value of the watched metric (the median over the run's valid repetitions).
	// +optional
	Value *float64 `json:"value,omitempty"`
	// +optional
	Unit string `json:"unit,omitempty"`
	// +optional
	Direction Direction `json:"direction,omitempty"`
	// Verdict of the watched metric, for comparison schedules.
	// +optional
	Verdict ComparisonVerdict `json:"verdict,omitempty"`
	// Rejected says that a person rejected measurements of the run
	// (`kubectl dbperf reject`): Value is then the median over the others,
	// or absent when the whole run was rejected, which leaves it out of the
	// regression judgement.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Rejected string `json:"rejected,omitempty"`
	// ChangePoint marks the first run of a new level: where a regression or
	// an improvement started, whatever the method.
	// +optional
	ChangePoint bool `json:"changePoint,omitempty"`
	// Provisional: the change point was found at the newest one or two runs
	// (ChangePoint method) and later runs have not confirmed it yet.
	// +optional
	Provisional bool `json:"provisional,omitempty"`
	// Judgement of this run by the regression policy; absent for runs that
	// were not valid or have no value.
	// +optional
	Judgement HistoryJudgement `json:"judgement,omitempty"`
	// DeltaPercent of Value against the level it was judged against.
	// +optional
	DeltaPercent *float64 `json:"deltaPercent,omitempty"`
	// Transitions are what changed at this run: RegressionOpened,
	// RegressionConfirmed, RegressionRecovered, RegressionNotConfirmed,
	// RegressionAcknowledged and the same of improvements, plus
	// ImprovementAdopted.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=atomic
	// +optional
	Transitions []string `json:"transitions,omitempty"`
	// Acknowledged says who acknowledged the change open at this run, when
	// and why (`kubectl dbperf ack`): later runs are judged against its level.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Acknowledged string `json:"acknowledged,omitempty"`
}

// LevelValue is one valid run of a level.
type LevelValue struct {
	Run string `json:"run"`
	// +optional
	Release string  `json:"release,omitempty"`
	Value   float64 `json:"value"`
}

// RegressionEpisode is an open regression or improvement.
type RegressionEpisode struct {
	Kind ChangeKind `json:"kind"`
	// FirstRun is the run that started it (the history marks it).
	FirstRun string `json:"firstRun"`
	// +optional
	FirstRelease string `json:"firstRelease,omitempty"`
	// Reference is the level before it (the baseline's median, or mean with
	// the ChangePoint method) over ReferenceRuns runs; every later run is
	// judged against it while the episode is open.
	Reference     float64 `json:"reference"`
	ReferenceRuns int32   `json:"referenceRuns"`
	// DeltaPercent of the newest run against Reference.
	DeltaPercent float64 `json:"deltaPercent"`
	// Runs counts its valid runs, the first included: the runs since.
	Runs      int32  `json:"runs"`
	LatestRun string `json:"latestRun"`
	// Provisional: found at the newest one or two runs, not confirmed yet.
	// +optional
	Provisional bool `json:"provisional,omitempty"`
	// Values are its newest runs: the new level should it be acknowledged
	// or adopted.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Values []LevelValue `json:"values,omitempty"`
}

// RegressionLevel is what the judgement carries: the accepted level and the
// open episode.
type RegressionLevel struct {
	// Baseline holds the newest valid runs of the accepted level (frozen
	// while an episode is open: the runs of a regression never become its
	// baseline).
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Baseline []LevelValue `json:"baseline,omitempty"`
	// AcceptedFrom names the run where an acknowledged or adopted level
	// started.
	// +optional
	AcceptedFrom string `json:"acceptedFrom,omitempty"`
	// +optional
	Open *RegressionEpisode `json:"open,omitempty"`
}

// RegressionStatus is the schedule's memory of changes.
type RegressionStatus struct {
	// Open is the regression or improvement in progress; absent when none.
	// +optional
	Open *RegressionEpisode `json:"open,omitempty"`
	// Baseline is the accepted level the next run is judged against.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Baseline []LevelValue `json:"baseline,omitempty"`
	// Carried is the judgement's state before the oldest history entry:
	// what the schedule keeps of runs that historyLimit dropped, so that a
	// regression older than the history is never forgotten.
	// +optional
	Carried *RegressionLevel `json:"carried,omitempty"`
	// RegressionsDetected counts the regressions opened over the schedule's
	// life (the counter dbperf_schedule_regressions_total: an alert on its
	// increase fires once per regression).
	// +optional
	RegressionsDetected int64 `json:"regressionsDetected,omitempty"`
	// ImprovementsDetected counts the improvements opened.
	// +optional
	ImprovementsDetected int64 `json:"improvementsDetected,omitempty"`
	// Transitions counts the transitions (a change opened or closed, an
	// acknowledgement) over the schedule's life: each one's event is named
	// after its number, so it is created once whatever restarts between.
	// +optional
	Transitions int64 `json:"transitions,omitempty"`
	// Unannounced are the transitions stored with the status that records
	// them whose events are not created yet (a manager stopped in between);
	// the next reconcile creates them and empties the list.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Unannounced []TransitionEvent `json:"unannounced,omitempty"`
}

// TransitionEvent is the event of one transition of a schedule's judgement.
type TransitionEvent struct {
	// Sequence is the transition's number (status.regression.transitions
	// when it happened).
	Sequence int64 `json:"sequence"`
	// Type is the event's type.
	// +kubebuilder:validation:Enum=Normal;Warning
	Type string `json:"type"`
	// Reason is the event's reason (Regression, Recovered, Improvement, Acknowledged, ...).
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason"`
	// Message is the event's message.
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
	// Time is when the transition was judged.
	Time metav1.Time `json:"time"`
}

// BenchmarkScheduleStatus is the schedule's memory.
type BenchmarkScheduleStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastScheduleTime is the last cron trigger handled.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// TemplateHash is the hash of the template the last template-triggered run used.
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`
	// Active runs.
	// +optional
	Active []string `json:"active,omitempty"`
	// LastRun is the newest run created.
	// +optional
	LastRun string `json:"lastRun,omitempty"`
	// History of finished runs, oldest first, bounded by spec.historyLimit.
	// +optional
	History []HistoryEntry `json:"history,omitempty"`
	// Regression is what the regression policy found (with spec.regression).
	// +optional
	Regression *RegressionStatus `json:"regression,omitempty"`
	// LatestVerdict is the one verdict of the newest finished run or
	// comparison, what a pipeline or a person reads first: a comparison
	// schedule's is the comparison's own (status.verdict); a run
	// schedule's is its regression judgement of that run (Regression,
	// Improvement, Pass within the margin of its level, Inconclusive
	// without enough history or without spec.regression, Invalid when the
	// run failed or was invalid).
	// +optional
	LatestVerdict OverallVerdict `json:"latestVerdict,omitempty"`
	// LatestHeadline says it first: the comparison's headline (its
	// verdict and the metrics that decided it), or the run's watched
	// metric against its level. The schedule's events of a regression or
	// an improvement begin with it.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	LatestHeadline string `json:"latestHeadline,omitempty"`
	// Conditions of the schedule:
	//   - Regressed (only with spec.regression): True while a regression is
	//     open (reason Regression; the message names the metric, the run that
	//     introduced it, how many runs since and the newest run's change
	//     against the level before it): it stays True through every later run
	//     that is still worse. False when none is open: NoRegression,
	//     NotEnoughHistory (fewer valid runs than baselineRuns), Recovered (the
	//     newest run is back within the margin), Acknowledged (a person
	//     accepted the new level) or NotConfirmed (a provisional change point
	//     the next runs did not bear out). Unknown (absent) without
	//     spec.regression.
	//   - Improved (only with spec.regression): the same of improvements,
	//     never mixed with regressions: True while one is open (Improvement);
	//     False with NoImprovement, NotEnoughHistory, ImprovementAdopted (it
	//     held for baselineRuns runs and is the baseline now),
	//     ImprovementEnded, Acknowledged or NotConfirmed.
	//   - Acknowledged: True when the annotation bench.dbperf.io/acknowledgements
	//     holds acknowledgements (reason AcknowledgedByPerson; the message says
	//     who, when and why of the newest); False once every one is undone
	//     (NotAcknowledged) or when the annotation is unreadable (Unreadable);
	//     absent when none was ever made.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=benchsched;benchscheds,categories=dbperf
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Last run",type=string,JSONPath=`.status.lastRun`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.latestVerdict`
// +kubebuilder:printcolumn:name="Regressed",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].status`
// +kubebuilder:printcolumn:name="Since",type=string,JSONPath=`.status.regression.open.firstRun`
// +kubebuilder:printcolumn:name="Improved",type=string,JSONPath=`.status.conditions[?(@.type=="Improved")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// BenchmarkSchedule runs a BenchmarkRun template on a cron and when the
// template changes, keeps a history of its headline numbers and raises a
// Regressed condition.
type BenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BenchmarkScheduleSpec   `json:"spec"`
	Status BenchmarkScheduleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkScheduleList lists BenchmarkSchedules.
type BenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkSchedule{}, &BenchmarkScheduleList{})
}
