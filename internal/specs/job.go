package specs

import (
	"fmt"
	"strconv"

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
	return &batchv1.Job{
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
}

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
		NodeSelector: w.Placement.NodeSelector,
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
			Env:                      p.Invocation.Env,
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
	if p.Endpoint.CASecret != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: caVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: p.Endpoint.CASecret, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: caVolume, MountPath: "/etc/dbperf/tls", ReadOnly: true})
	}
	return spec
}

func runnerArgs(p JobParams) []string {
	v := p.Run.Spec.Validity
	maxCPU := v.MaxLoadGeneratorCPUPercent
	if maxCPU == 0 {
		maxCPU = 90
	}
	maxErr := v.MaxErrorPercent
	if maxErr == "" {
		maxErr = "0"
	}
	args := []string{"exec", "--workload", p.Workload,
		"--max-cpu-percent", strconv.Itoa(int(maxCPU)),
		"--max-error-percent", maxErr,
	}
	if p.Role == RolePrepare {
		args = append(args, "--prepare")
	}
	for _, f := range p.Invocation.ResultFiles {
		args = append(args, "--result-file", f)
	}
	for _, e := range p.Invocation.SecretEnv {
		args = append(args, "--redact-env", e)
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
// every node running a pod the avoid selector matches.
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
