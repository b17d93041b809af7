package specs

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// NoiseParams is what a noisy neighbour's stress pod is built from.
type NoiseParams struct {
	Run *benchv1.BenchmarkRun
	// Name is the pod's (NoisePodName); Disturbance the disturbance's.
	Name, Disturbance string
	Step              int
	Repetition        int32
	// Node is the target's node the pod is placed on by name.
	Node        string
	RunnerImage string
	Stress      pod.StressCommand
	Resources   corev1.ResourceRequirements
}

// NoisePodName names the stress pod (or the Chaos Mesh object) of a
// disturbance in one measurement.
func NoisePodName(run *benchv1.BenchmarkRun, disturbance string, step int, rep int32) string {
	return ChildName(run, "noise-"+disturbance+"-s"+strconv.Itoa(step)+"-r"+strconv.Itoa(int(rep)))
}

// StressOf is a noisy neighbour's stress command for d's duration.
func StressOf(n *benchv1.NoisyNeighbourDisturbance, d time.Duration) pod.StressCommand {
	c := pod.StressCommand{CPUWorkers: int(n.CPUWorkers), DiskWorkers: int(n.DiskWorkers), Dir: pod.StressDir, Duration: d}
	if n.MemoryBytes != nil {
		c.MemoryBytes = int(*n.MemoryBytes)
	}
	return c
}

// stressVolume is the stress pod's scratch volume.
const stressVolume = "scratch"

// NoisePod is a noisy neighbour: `dbperf-runner stress` from the runner's
// image, placed by node name beside the target (bypassing the scheduler,
// tolerating every taint), with no service-account token, as non-root, its
// disk workers writing to a scratch volume, never restarted. Its
// termination message is its report.
func NoisePod(p NoiseParams) *corev1.Pod {
	labels := BaseLabels(p.Run, benchv1.RoleDisturbance)
	labels[benchv1.LabelStep] = strconv.Itoa(p.Step)
	labels[benchv1.LabelRepetition] = strconv.Itoa(int(p.Repetition))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Run.Namespace, Labels: labels,
			Annotations: map[string]string{benchv1.AnnotationRunName: p.Run.Name}, OwnerReferences: []metav1.OwnerReference{OwnerRef(p.Run)}},
		Spec: corev1.PodSpec{
			NodeName: p.Node, RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks: ptr.To(false), ImagePullSecrets: p.Run.Spec.ImagePullSecrets,
			Tolerations:     []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			SecurityContext: podSecurity(),
			Volumes:         []corev1.Volume{{Name: stressVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "stress", Image: p.RunnerImage, Command: p.Stress.Args(), Resources: p.Resources,
				SecurityContext: containerSecurity(), TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				VolumeMounts: []corev1.VolumeMount{{Name: stressVolume, MountPath: pod.StressDir}},
			}},
		},
	}
}
