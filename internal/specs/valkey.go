package specs

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// ValkeyPort is the port the Valkey target listens on.
const ValkeyPort = 6379

// DefaultValkeyImage is used when the spec names none.
const DefaultValkeyImage = "valkey/valkey:8.1"

// ValkeyPodLabels select the target's pod.
func ValkeyPodLabels(run *benchv1.BenchmarkRun) map[string]string {
	return map[string]string{LabelRunUID: string(run.UID), LabelRole: RoleTarget}
}

// ValkeyImage is the image a valkey target runs.
func ValkeyImage(run *benchv1.BenchmarkRun) string {
	if img := run.Spec.Target.Valkey.Image; img != "" {
		return img
	}
	return DefaultValkeyImage
}

// ValkeyStatefulSet runs one Valkey server without persistence: a benchmark
// measures the serving path, and snapshots would add noise at random times.
func ValkeyStatefulSet(run *benchv1.BenchmarkRun) *appsv1.StatefulSet {
	vk := run.Spec.Target.Valkey
	name := ValkeyName(run)
	labels := BaseLabels(run, RoleTarget)
	args := append([]string{"--port", "6379", "--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", "/data"}, vk.Args...)
	pl := run.Spec.Target.Placement
	sts := &appsv1.StatefulSet{
		ObjectMeta: ObjectMeta(run, name, RoleTarget),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: ValkeyPodLabels(run)},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999), FSGroup: ptr.To[int64](999),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					NodeSelector: pl.NodeSelector,
					Tolerations:  pl.Tolerations,
					Affinity:     pl.Affinity,
					Containers: []corev1.Container{{
						Name:            "valkey",
						Image:           ValkeyImage(run),
						Command:         []string{"valkey-server"},
						Args:            args,
						Ports:           []corev1.ContainerPort{{Name: "valkey", ContainerPort: ValkeyPort}},
						Resources:       vk.Resources,
						SecurityContext: containerSecurity(),
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ValkeyPort)}},
							PeriodSeconds: 2, FailureThreshold: 3,
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
					}},
				},
			},
		},
	}
	if vk.Storage == nil {
		sts.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		return sts
	}
	size := vk.Storage.Size
	if size.IsZero() {
		size = resource.MustParse("10Gi")
	}
	sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: vk.Storage.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}}
	return sts
}

// ValkeyService is the stable address of the Valkey target.
func ValkeyService(run *benchv1.BenchmarkRun) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: ObjectMeta(run, ValkeyName(run), RoleTarget),
		Spec: corev1.ServiceSpec{
			Selector: ValkeyPodLabels(run),
			Ports:    []corev1.ServicePort{{Name: "valkey", Port: ValkeyPort, TargetPort: intstr.FromInt32(ValkeyPort)}},
		},
	}
}
