package specs

import (
	"fmt"
	"net"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Paths inside workload pods.
const (
	RunnerDir       = "/dbperf"
	RunnerPath      = RunnerDir + "/bin/dbperf-runner"
	LoadgenName     = "loadgen"
	InstallerName   = "install-runner"
	nonRootUID      = 65532
	filesVolume     = "workload-files"
	caVolume        = "target-ca"
	runnerVolume    = "dbperf"
	tmpVolume       = "tmp"
	terminationPath = "/dev/termination-log"
)

// JobParams is everything a workload Job is built from.
type JobParams struct {
	Run  *benchv1.BenchmarkRun
	Name string
	// Role is RolePrepare or RoleLoadgen.
	Role     string
	Workload string
	// Step (from 0) and Repetition (from 1) of a measurement.
	Step       int
	Repetition int32
	Invocation workloads.Invocation
	Image      string
	// RunnerImage holds the static dbperf-runner binary.
	RunnerImage string
	// FilesConfigMap holds Invocation.Files; empty when there are none.
	FilesConfigMap string
	Endpoint       workloads.Endpoint
	// AvoidPods keeps load generators off the nodes of the pods it selects
	// (the target's), so that they never compete for the platform under test.
	AvoidPods map[string]string
	// ActiveDeadlineSeconds bounds the Job by what is left of the run's timeout.
	ActiveDeadlineSeconds *int64
	// ServerStatistics, when its Source is set, makes the runner poll the
	// target's own statistics while the tool runs.
	ServerStatistics ServerStatistics
	// SQLProtocol is the SQL protocol the tool speaks to the target
	// (workloads.SQLProtocolOf): over MySQL's, each measurement checks a
	// session of the workload's user against the Endpoint's TLS version,
	// cipher and session variables.
	SQLProtocol string
}

// ServerStatistics is what the runner polls of the target's own
// statistics: the source (one of dbstats.Sources), the database to read
// them in (empty: the endpoint's) and the time between polls.
type ServerStatistics struct {
	Source   string
	Database string
	Interval time.Duration
}

// Job builds the Job that runs a tool through dbperf-runner: an init
// container copies the runner from its image into an emptyDir, and the
// tool's own image runs `dbperf-runner exec -- <tool command>`.
func Job(p JobParams) *batchv1.Job {
	labels := BaseLabels(p.Run, p.Role)
	labels[LabelJob] = p.Name
	if p.Role == RoleLoadgen {
		labels[LabelStep] = strconv.Itoa(p.Step)
		labels[LabelRepetition] = strconv.Itoa(int(p.Repetition))
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
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{AnnotationRunName: p.Run.Name}},
				Spec:       podSpec(p),
			},
		},
	}
	if n := Generators(p); n > 1 {
		// N pods, one per completion index, held at the start barrier
		// until the operator sees all of them running.
		job.Spec.Parallelism, job.Spec.Completions = ptr.To(n), ptr.To(n)
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		spec := &job.Spec.Template.Spec
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: barrierVolume, VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "start-at", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + AnnotationStartAt + "']"}}},
		}}})
		c := &spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: barrierVolume, MountPath: BarrierDir, ReadOnly: true})
	}
	return job
}

// Generators is the number of load-generator pods of a Job.
func Generators(p JobParams) int32 {
	if p.Role != RoleLoadgen {
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
	BarrierDir                = "/etc/dbperf/barrier"
	barrierVolume             = "start-barrier"
)

func podSpec(p JobParams) corev1.PodSpec {
	w := p.Run.Spec.Workload
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](nonRootUID),
			RunAsGroup:     ptr.To[int64](nonRootUID),
			FSGroup:        ptr.To[int64](nonRootUID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		NodeSelector: w.Placement.Selector(),
		Tolerations:  w.Placement.Tolerations,
		Affinity:     loadgenAffinity(w.Placement.Affinity, p.AvoidPods),
		InitContainers: []corev1.Container{{
			Name:            InstallerName,
			Image:           p.RunnerImage,
			Command:         []string{"/dbperf-runner", "install", RunnerPath},
			SecurityContext: containerSecurity(),
			VolumeMounts:    []corev1.VolumeMount{{Name: runnerVolume, MountPath: RunnerDir}},
		}},
		Containers: []corev1.Container{{
			Name:                     LoadgenName,
			Image:                    p.Image,
			Command:                  []string{RunnerPath},
			Args:                     runnerArgs(p),
			Env:                      containerEnv(p),
			Resources:                w.Resources,
			SecurityContext:          containerSecurity(),
			TerminationMessagePath:   terminationPath,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			VolumeMounts: []corev1.VolumeMount{
				{Name: runnerVolume, MountPath: RunnerDir},
				{Name: tmpVolume, MountPath: "/tmp"},
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
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: filesVolume, MountPath: workloads.FilesDir, ReadOnly: true})
	}
	for i, f := range p.Invocation.ConfigMapFiles {
		name := fmt.Sprintf("configmap-%d", i)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: f.ConfigMap},
				Items: []corev1.KeyToPath{{Key: f.Key, Path: f.Key}}},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: workloads.ConfigMapFilesDir + "/" + f.ConfigMap, ReadOnly: true})
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
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: caVolume, MountPath: workloads.TLSDir, ReadOnly: true})
	}
	return spec
}

// tlsVolume projects the target's CA (ca.crt) and the client certificate of
// two-way TLS (tls.crt, tls.key) into one directory, as tools expect them.
func tlsVolume(ep workloads.Endpoint) (corev1.Volume, bool) {
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
	if p.ServerStatistics.Source == "" && len(sessionCheckArgs(p)) == 0 {
		return env
	}
	has := map[string]bool{}
	for _, e := range env {
		has[e.Name] = true
	}
	for _, e := range p.Endpoint.CredentialEnv(workloads.EnvUsername, workloads.EnvPassword) {
		if !has[e.Name] {
			env = append(env, e)
		}
	}
	return env
}

// serverStatisticsArgs are the runner's flags of the statistics poller:
// where the server is and how to reach it. Credentials are never flags.
func serverStatisticsArgs(p JobParams) []string {
	s, ep := p.ServerStatistics, p.Endpoint
	if s.Source == "" {
		return nil
	}
	db := ep.Database
	if s.Database != "" && p.Role == RoleLoadgen {
		db = s.Database // the tool's schema exists once prepared
	}
	args := []string{"--server-statistics", s.Source, "--server-address", net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))}
	if db != "" {
		args = append(args, "--server-database", db)
	}
	if s.Interval > 0 {
		args = append(args, "--server-poll-interval", s.Interval.String())
	}
	if ep.TLS {
		args = append(args, "--server-tls")
		if ep.CASecret != "" {
			args = append(args, "--server-tls-ca", workloads.CAFile)
		}
		if ep.ClientCertSecret != "" {
			args = append(args, "--server-tls-cert", workloads.TLSDir+"/tls.crt", "--server-tls-key", workloads.TLSDir+"/tls.key")
		}
		if ep.ServerName != "" {
			args = append(args, "--server-tls-name", ep.ServerName)
		}
	}
	return args
}

// sampleStreamArgs are the runner's flags of a tool's raw sample stream:
// where it is, the units and directions the user declared, and the APDEX
// targets whose counts the runner records per window.
func sampleStreamArgs(p JobParams) []string {
	inv := p.Invocation
	if p.Role != RoleLoadgen || inv.SampleStream == "" {
		return nil
	}
	args := []string{"--sample-stream", inv.SampleStream}
	for _, m := range inv.Metrics {
		args = append(args, "--declare-metric", m.Name+","+m.Unit+","+string(m.Direction))
	}
	for _, a := range p.Run.Spec.APDEX {
		args = append(args, "--apdex", a.Operation+"="+a.Target.Duration.String())
	}
	return args
}

func runnerArgs(p JobParams) []string {
	v := p.Run.Spec.Validity
	maxCPU := v.MaxLoadGeneratorCPUPercent
	if maxCPU == 0 {
		maxCPU = 90
	}
	args := []string{"exec"}
	if n := Generators(p); n > 1 {
		args = append(args, "--start-barrier", BarrierDir+"/start-at", "--generators", strconv.Itoa(int(n)))
	}
	args = append(args, "--workload", p.Workload,
		"--max-cpu-percent", formatPercent(maxCPU),
		"--max-error-percent", formatPercent(v.MaxErrorPercent))
	args = append(args, stabilityArgs(p)...)
	if p.Role == RolePrepare {
		args = append(args, "--prepare")
	}
	for _, f := range p.Invocation.ResultFiles {
		args = append(args, "--result-file", f)
	}
	if c := p.Invocation.ParserConfig; c != "" && p.Role == RoleLoadgen {
		args = append(args, "--parser-config", c)
	}
	args = append(args, sampleStreamArgs(p)...)
	redacted := map[string]bool{}
	for _, e := range p.Invocation.SecretEnv {
		args = append(args, "--redact-env", e)
		redacted[e] = true
	}
	stats, session := serverStatisticsArgs(p), sessionCheckArgs(p)
	args = append(append(args, stats...), session...)
	if len(stats)+len(session) > 0 && !redacted[workloads.EnvPassword] && p.Endpoint.Password != nil {
		args = append(args, "--redact-env", workloads.EnvPassword)
	}
	if p.ActiveDeadlineSeconds != nil {
		// Stop the tool a little before the Job's deadline kills the pod,
		// so that the runner still writes what was measured.
		args = append(args, "--timeout", fmt.Sprintf("%ds", max(*p.ActiveDeadlineSeconds-15, 1)))
	}
	args = append(args, "--")
	return append(args, p.Invocation.Command...)
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

// FilesConfigMap holds an invocation's files, mounted at workloads.FilesDir.
func FilesConfigMap(run *benchv1.BenchmarkRun, files map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: ObjectMeta(run, FilesConfigMapName(run), RoleLoadgen),
		Data:       files,
	}
}

// stabilityArgs pass the checks of the throughput inside a measurement
// (stalls, dips, drift after the warm-up), which the runner judges; unset
// fields leave the runner's defaults.
func stabilityArgs(p JobParams) []string {
	v := p.Run.Spec.Validity
	var args []string
	if w := p.Run.Spec.Workload.Warmup; w != nil && w.Duration > 0 {
		args = append(args, "--warmup", w.Duration.String())
	}
	if v.StallPercent > 0 {
		args = append(args, "--stall-percent", formatPercent(v.StallPercent))
	}
	if v.MaxStall != nil {
		args = append(args, "--max-stall", v.MaxStall.Duration.String())
	}
	if v.DipPercent > 0 {
		args = append(args, "--dip-percent", formatPercent(v.DipPercent))
	}
	if v.MaxDip != nil {
		args = append(args, "--max-dip", v.MaxDip.Duration.String())
	}
	if v.MaxDriftPercent > 0 {
		args = append(args, "--max-drift-percent", formatPercent(v.MaxDriftPercent))
	}
	return args
}

// formatPercent writes a percent as the runner's flags take it: 90, 0.5.
func formatPercent(p benchv1.Percent) string {
	return strconv.FormatFloat(float64(p), 'f', -1, 64)
}
