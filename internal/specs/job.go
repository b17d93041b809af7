package specs

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// The containers and volumes of workload pods (their paths are the pod
// contract's, internal/pod).
const (
	LoadgenName   = "loadgen"
	InstallerName = "install-runner"
	nonRootUID    = 65532
	filesVolume   = "workload-files"
	caVolume      = "target-ca"
	runnerVolume  = "dbperf"
	tmpVolume     = "tmp"
)

// JobParams is everything a workload Job is built from.
type JobParams struct {
	Run  *benchv1.BenchmarkRun
	Name string
	// Role is benchv1.RolePrepare or benchv1.RoleLoadgen.
	Role     string
	Workload string
	// Step (from 0) and Repetition (from 1) of a measurement.
	Step       int
	Repetition int32
	Invocation pod.Invocation
	Image      string
	// RunnerImage holds the static dbperf-runner binary.
	RunnerImage string
	// FilesConfigMap holds Invocation.Files; empty when there are none.
	FilesConfigMap string
	Endpoint       pod.Endpoint
	// AvoidPods keeps load generators off the nodes of the pods it selects
	// (the target's), so that they never compete for the platform under test.
	AvoidPods map[string]string
	// ActiveDeadlineSeconds bounds the Job by what is left of the run's timeout.
	ActiveDeadlineSeconds *int64
	// ServerStatistics, when its Protocol is set, makes the runner poll the
	// target's own statistics while the tool runs.
	ServerStatistics ServerStatistics
	// Protocol is what the tool speaks to the target (workloads.SpeaksOf):
	// over one that is Checked (MySQL's), each measurement checks a
	// session of the workload's user against the Endpoint's TLS version,
	// cipher and session variables.
	Protocol pod.Protocol
}

// ServerStatistics is what the runner polls of the target's own
// statistics: the protocol of the server (one that HasStatistics), the
// database to read them in (empty: the endpoint's) and the time between
// polls.
type ServerStatistics struct {
	Protocol pod.Protocol
	Database string
	Interval time.Duration
	// Diagnostics: where the server spends its time; WaitInterval
	// samples its sessions' waits; Plans explains its top statements;
	// ProfileHz profiles the server's processes at that frequency (0: no
	// profile).
	Diagnostics  bool
	WaitInterval time.Duration
	Plans        bool
	ProfileHz    int32
}

// Job builds the Job that runs a tool through dbperf-runner: an init
// container copies the runner from its image into an emptyDir, and the
// tool's own image runs `dbperf-runner exec -- <tool command>`.
func Job(p JobParams) *batchv1.Job {
	labels := BaseLabels(p.Run, p.Role)
	labels[benchv1.LabelJob] = p.Name
	if p.Role == benchv1.RoleLoadgen {
		labels[benchv1.LabelStep] = strconv.Itoa(p.Step)
		labels[benchv1.LabelRepetition] = strconv.Itoa(int(p.Repetition))
	}
	meta := ObjectMeta(p.Run, p.Name, p.Role)
	meta.Labels = labels
	job := &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			// A retried measurement is a different measurement: never retry.
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: p.ActiveDeadlineSeconds,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{benchv1.AnnotationRunName: p.Run.Name}},
				Spec:       podSpec(p),
			},
		},
	}
	if n := Generators(p); n > 1 || Disturbed(p) {
		// N pods, one per completion index, held at the start barrier
		// until the operator sees all of them running (a disturbed
		// measurement's one pod too: the barrier's instant is the clock
		// its disturbances act on).
		job.Spec.Parallelism, job.Spec.Completions = ptr.To(n), ptr.To(n)
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		spec := &job.Spec.Template.Spec
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: barrierVolume, VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: path.Base(pod.StartAtFile), FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + AnnotationStartAt + "']"}}},
		}}})
		c := &spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: barrierVolume, MountPath: pod.BarrierDir, ReadOnly: true})
	}
	return job
}

// HasStartBarrier says whether a Job's pods wait at the start barrier: an
// Indexed Job (several load generators, or a disturbed measurement).
func HasStartBarrier(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// Generators is the number of load-generator pods of a Job.
func Generators(p JobParams) int32 {
	if p.Role != benchv1.RoleLoadgen {
		return 1
	}
	return max(p.Run.Spec.Workload.Parallelism, 1)
}

// The start barrier of parallel load generators.
const (
	// AnnotationStartAt carries the instant all generators start (RFC 3339).
	AnnotationStartAt = "bench.dbperf.io/start-at"
	// AnnotationCompletionIndex is the Job controller's index of a pod.
	AnnotationCompletionIndex = "batch.kubernetes.io/job-completion-index"
	barrierVolume             = "start-barrier"
)

func podSpec(p JobParams) corev1.PodSpec {
	w := p.Run.Spec.Workload
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SecurityContext:               podSecurity(),
		NodeSelector:                  w.Placement.Selector(),
		Tolerations:                   w.Placement.Tolerations,
		Affinity:                      loadgenAffinity(w.Placement.Affinity, p.AvoidPods),
		ImagePullSecrets:              p.Run.Spec.ImagePullSecrets,
		InitContainers: []corev1.Container{{
			Name:            InstallerName,
			Image:           p.RunnerImage,
			Command:         []string{pod.InstallerPath, "install", pod.RunnerPath},
			SecurityContext: containerSecurity(),
			VolumeMounts:    []corev1.VolumeMount{{Name: runnerVolume, MountPath: pod.RunnerDir}},
		}},
		Containers: []corev1.Container{{
			Name:                     LoadgenName,
			Image:                    p.Image,
			Command:                  []string{pod.RunnerPath},
			Args:                     execCommand(p).Args(),
			Env:                      containerEnv(p),
			Resources:                w.Resources,
			SecurityContext:          containerSecurity(),
			TerminationMessagePath:   pod.TerminationLog,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			VolumeMounts: []corev1.VolumeMount{
				{Name: runnerVolume, MountPath: pod.RunnerDir},
				{Name: tmpVolume, MountPath: pod.TmpDir},
			},
		}},
		Volumes: []corev1.Volume{
			{Name: runnerVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
	c := &spec.Containers[0]
	if p.FilesConfigMap != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: filesVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: p.FilesConfigMap}},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: filesVolume, MountPath: pod.FilesDir, ReadOnly: true})
	}
	for i, f := range p.Invocation.ConfigMapFiles {
		name := fmt.Sprintf("configmap-%d", i)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: f.ConfigMap},
				Items: []corev1.KeyToPath{{Key: f.Key, Path: f.Key}}},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: pod.ConfigMapFilesDir + "/" + f.ConfigMap, ReadOnly: true})
	}
	for i, m := range p.Invocation.ClaimMounts {
		name := fmt.Sprintf("claim-%d", i)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: m.Claim, ReadOnly: m.ReadOnly},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: m.MountPath, ReadOnly: m.ReadOnly})
	}
	if v, ok := tlsVolume(p.Endpoint); ok {
		spec.Volumes = append(spec.Volumes, v)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: caVolume, MountPath: pod.TLSDir, ReadOnly: true})
	}
	return spec
}

// tlsVolume projects the target's CA (ca.crt) and the client certificate of
// two-way TLS (tls.crt, tls.key) into one directory, as tools expect them.
func tlsVolume(ep pod.Endpoint) (corev1.Volume, bool) {
	var sources []corev1.VolumeProjection
	if ep.CASecret != "" {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: ep.CASecret}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}})
	}
	if ep.ClientCertSecret != "" {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: ep.ClientCertSecret},
			Items:                []corev1.KeyToPath{{Key: "tls.crt", Path: "tls.crt"}, {Key: "tls.key", Path: "tls.key", Mode: ptr.To[int32](0o400)}}}})
	}
	if len(sources) == 0 {
		return corev1.Volume{}, false
	}
	return corev1.Volume{Name: caVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}}, true
}

// containerEnv is the invocation's environment, plus the credentials the
// statistics poller and the session check read when the tool itself takes
// none from it.
func containerEnv(p JobParams) []corev1.EnvVar {
	env := p.Invocation.Env
	if hosts := hostEnv(p.Run); len(hosts) > 0 {
		env = append(slices.Clone(env), hosts...)
	}
	if d := disturbEnv(p); len(d) > 0 {
		env = append(slices.Clone(env), d...)
	}
	if !statistics(p).Enabled() && !sessionCheck(p).Enabled() {
		return env
	}
	has := map[string]bool{}
	for _, e := range env {
		has[e.Name] = true
	}
	for _, e := range p.Endpoint.CredentialEnv(pod.EnvUsername, pod.EnvPassword) {
		if !has[e.Name] {
			env = append(env, e)
		}
	}
	return env
}

// statistics are the runner's flags of the statistics poller: where the
// server is and how to reach it. Credentials are never flags.
func statistics(p JobParams) pod.Statistics {
	s, ep := p.ServerStatistics, p.Endpoint
	if s.Protocol == "" {
		return pod.Statistics{}
	}
	db := ep.Database
	if s.Database != "" && p.Role == benchv1.RoleLoadgen {
		db = s.Database // the tool's schema exists once prepared
	}
	out := pod.Statistics{Protocol: s.Protocol, Address: ep.Address(), Database: db, PollInterval: s.Interval, TLS: ep.ClientTLS()}
	if p.Role == benchv1.RoleLoadgen {
		out.Diagnostics, out.WaitInterval, out.Plans, out.ProfileHz = s.Diagnostics, s.WaitInterval, s.Plans, int(s.ProfileHz) // measurements only
	}
	return out
}

// MaxLoadGeneratorCPUPercent is the load generators' CPU use above which
// a measurement is invalid (spec.validity, else the runner's default):
// what the runner judges and what the capacity pre-flight plans with.
func MaxLoadGeneratorCPUPercent(run *benchv1.BenchmarkRun) float64 {
	if v := float64(run.Spec.Validity.MaxLoadGeneratorCPUPercent); v != 0 {
		return v
	}
	return pod.DefaultMaxLoadGeneratorCPUPercent
}

// DefaultCanary is a canary's duration when spec.canary gives none (the
// schema's default, for a spec that skipped admission).
const DefaultCanary = 2 * time.Second

// execCommand is the runner's command line: the tool's invocation, the
// thresholds it judges, and the runner's own connections to the target.
func execCommand(p JobParams) pod.ExecCommand {
	inv, v := p.Invocation, p.Run.Spec.Validity
	maxCPU := MaxLoadGeneratorCPUPercent(p.Run)
	c := pod.ExecCommand{Workload: p.Workload, MaxLoadGeneratorCPUPercent: &maxCPU, MaxErrorPercent: ptr.To(float64(v.MaxErrorPercent)),
		Stability: stability(p.Run), Prepare: p.Role == benchv1.RolePrepare, ResultFiles: inv.ResultFiles, RedactEnv: inv.SecretEnv,
		Statistics: statistics(p), Session: sessionCheck(p), Command: inv.Command}
	c.Hosts = hostEndpoints(p)
	if iv := p.Run.Spec.Telemetry.PollInterval; iv != nil && len(c.Hosts) > 0 {
		c.HostPollInterval = iv.Duration
	}
	for _, e := range hostEnv(p.Run) {
		if k := e.ValueFrom.SecretKeyRef.Key; (k == hostKeyPassword || k == hostKeyToken) && !slices.Contains(c.RedactEnv, e.Name) {
			c.RedactEnv = append(slices.Clone(c.RedactEnv), e.Name)
		}
	}
	if n := Generators(p); n > 1 || Disturbed(p) {
		c.StartBarrier, c.Generators = pod.StartAtFile, int(n)
	}
	if planned := Disturbances(p.Run, p.Repetition); p.Role == benchv1.RoleLoadgen && len(planned) > 0 {
		c.Disturbances, c.SteadyUntil, c.RestartAfter = runnerDisturbances(p), SteadyUntil(planned), RestartAfter(planned)
		if len(c.Disturbances) > 0 && !slices.Contains(c.RedactEnv, pod.EnvDisturbPassword) {
			c.RedactEnv = append(slices.Clone(c.RedactEnv), pod.EnvDisturbPassword)
		}
	}
	if p.Role == benchv1.RoleLoadgen {
		if cn := p.Run.Spec.Canary; cn != nil {
			c.Canary = DefaultCanary
			if cn.Duration != nil {
				c.Canary = cn.Duration.Duration
			}
		}
		c.ParserConfig = inv.ParserConfig
		if inv.SampleStream != "" {
			c.SampleStream, c.DeclaredMetrics, c.Stages = inv.SampleStream, inv.Metrics, inv.Stages
			for _, a := range p.Run.Spec.APDEX {
				c.APDEX = append(c.APDEX, pod.APDEXTarget{Operation: a.Operation, Target: a.Target.Duration})
			}
		}
	}
	if (c.Statistics.Enabled() || c.Session.Enabled()) && !slices.Contains(c.RedactEnv, pod.EnvPassword) && p.Endpoint.Password != nil {
		c.RedactEnv = append(slices.Clone(c.RedactEnv), pod.EnvPassword)
	}
	if p.ActiveDeadlineSeconds != nil {
		// Stop the tool a little before the Job's deadline kills the pod,
		// so that the runner still writes what was measured.
		c.Timeout = time.Duration(max(*p.ActiveDeadlineSeconds-15, 1)) * time.Second
	}
	return c
}

// podSecurity is the security context of every pod the operator runs
// (workload pods, stress pods): non-root, the runtime's seccomp profile.
func podSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](nonRootUID),
		RunAsGroup:     ptr.To[int64](nonRootUID),
		FSGroup:        ptr.To[int64](nonRootUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// loadgenAffinity adds, to the user's affinity, a rule that keeps the pod off
// every node running a pod the avoid selector matches (the target's pods, or
// for a multi-node server its own siblings).
func loadgenAffinity(user *corev1.Affinity, avoid map[string]string) *corev1.Affinity {
	if len(avoid) == 0 {
		return user
	}
	a := &corev1.Affinity{}
	if user != nil {
		a = user.DeepCopy()
	}
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: avoid},
			TopologyKey:   corev1.LabelHostname,
		})
	return a
}

// FilesConfigMap holds an invocation's files, mounted at pod.FilesDir.
func FilesConfigMap(run *benchv1.BenchmarkRun, files map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: ObjectMeta(run, FilesConfigMapName(run), benchv1.RoleLoadgen),
		Data:       files,
	}
}

// stability passes the checks of the throughput inside a measurement
// (stalls, dips, drift after the warm-up), which the runner judges; unset
// fields leave the runner's defaults.
func stability(run *benchv1.BenchmarkRun) pod.Stability {
	v := run.Spec.Validity
	s := pod.Stability{StallPercent: float64(v.StallPercent), DipPercent: float64(v.DipPercent), MaxDriftPercent: float64(v.MaxDriftPercent)}
	if w := run.Spec.Workload.Warmup; w != nil {
		s.Warmup = w.Duration
	}
	if v.MaxStall != nil {
		s.MaxStall = v.MaxStall.Duration
	}
	if v.MaxDip != nil {
		s.MaxDip = v.MaxDip.Duration
	}
	return s
}
