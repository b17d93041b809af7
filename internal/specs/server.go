package specs

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Server describes an operator-owned database server: a StatefulSet of
// identical pods, a Service in front, and a headless Service for the pods'
// own names.
type Server struct {
	Run *benchv1.BenchmarkRun
	// Name of the StatefulSet and the Service; the headless Service is
	// Name-nodes.
	Name      string
	Container string
	Image     string
	Command   []string
	Args      []string
	Env       []corev1.EnvVar
	Port      int32
	PortName  string
	Replicas  int32
	// UID the server runs as; its data directory belongs to this group.
	UID      int64
	DataPath string
	Storage  *benchv1.StorageSpec
	// Resources of the server container.
	Resources corev1.ResourceRequirements
	// Secrets mounted read-only: volume name → (Secret, mount path).
	Secrets []SecretMount
	// ReadOnlyRoot is false for images that write outside their volumes
	// (their entrypoints write configuration at start).
	ReadOnlyRoot bool
	// ExtraVolumes are emptyDirs for paths the server writes.
	ExtraVolumes []string
	// User is the account of the generated credentials Secret the server
	// reads (CredentialsSecretName); empty when the server has none.
	User string
	// PeerPorts are ports the pods use among themselves (OpenSearch's
	// transport), published on the headless Service.
	PeerPorts []corev1.ContainerPort
	// Role is the part the pods play (benchv1.LabelInstanceRole), which then also
	// selects them: a target of several StatefulSets sets it on each.
	// Empty: the one server, or the nodes of a cluster without a primary.
	Role benchv1.InstanceRole
	// Placement of the pods; nil: spec.target.placement.
	Placement *benchv1.Placement
	// Readiness replaces the TCP probe on Port (a replica is ready when it
	// replicates, not when it listens).
	Readiness *corev1.Probe
}

// SecretMount mounts a Secret's keys in a directory.
type SecretMount struct {
	Volume, Secret, Path string
}

// ServerPodLabels select a server's pods.
func ServerPodLabels(run *benchv1.BenchmarkRun) map[string]string {
	return map[string]string{benchv1.LabelRunUID: string(run.UID), benchv1.LabelRole: benchv1.RoleTarget}
}

// Selector selects the server's own pods: ServerPodLabels, and its Role
// when it has one.
func (s Server) Selector() map[string]string {
	l := ServerPodLabels(s.Run)
	if s.Role != "" {
		l[benchv1.LabelInstanceRole] = string(s.Role)
	}
	return l
}

// podLabels are the labels of the server's pods.
func (s Server) podLabels() map[string]string {
	l := BaseLabels(s.Run, benchv1.RoleTarget)
	l[benchv1.LabelInstanceRole] = string(s.Role)
	if s.Role == "" {
		l[benchv1.LabelInstanceRole] = string(benchv1.InstanceServer)
	}
	return l
}

// HeadlessName is the headless Service that names each pod.
func (s Server) HeadlessName() string { return Name(s.Name, "nodes", s.Run.UID, MaxNameLength) }

// PodHost is the DNS name of replica i.
func (s Server) PodHost(i int) string {
	return fmt.Sprintf("%s-%d.%s.%s.svc", s.Name, i, s.HeadlessName(), s.Run.Namespace)
}

// Host is the Service's DNS name.
func (s Server) Host() string { return fmt.Sprintf("%s.%s.svc", s.Name, s.Run.Namespace) }

// StatefulSet runs the server on its placement, as non-root, with its
// Readiness probe, else a TCP probe on its port.
func (s Server) StatefulSet() *appsv1.StatefulSet {
	run := s.Run
	labels := s.podLabels()
	pl := run.Spec.Target.Placement
	if s.Placement != nil {
		pl = *s.Placement
	}
	probe := s.Readiness
	if probe == nil {
		probe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(s.Port)}},
			PeriodSeconds: 2, FailureThreshold: 3,
		}
	}
	replicas := max(s.Replicas, 1)
	c := corev1.Container{
		Name: s.Container, Image: s.Image, Command: s.Command, Args: s.Args, Env: s.Env,
		Ports:     append([]corev1.ContainerPort{{Name: s.PortName, ContainerPort: s.Port}}, s.PeerPorts...),
		Resources: s.Resources,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(s.ReadOnlyRoot),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		ReadinessProbe: probe,
		VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: s.DataPath}},
	}
	var volumes []corev1.Volume
	for _, m := range s.Secrets {
		volumes = append(volumes, corev1.Volume{Name: m.Volume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: m.Secret, DefaultMode: ptr.To[int32](0o440)}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: m.Volume, MountPath: m.Path, ReadOnly: true})
	}
	for i, p := range s.ExtraVolumes {
		name := fmt.Sprintf("scratch-%d", i)
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: p})
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: ObjectMeta(run, s.Name, benchv1.RoleTarget),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         s.HeadlessName(),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: s.Selector()},
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
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(s.UID), RunAsGroup: ptr.To(s.UID), FSGroup: ptr.To(s.UID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					NodeSelector:     pl.Selector(),
					Tolerations:      pl.Tolerations,
					Affinity:         s.affinity(pl.Affinity, replicas),
					Containers:       []corev1.Container{c},
					Volumes:          volumes,
					ImagePullSecrets: run.Spec.ImagePullSecrets,
				},
			},
		},
	}
	if s.Storage == nil {
		sts.Spec.Template.Spec.Volumes = append(sts.Spec.Template.Spec.Volumes,
			corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		return sts
	}
	size := s.Storage.Size
	if size.IsZero() {
		size = resource.MustParse("10Gi")
	}
	sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: s.Storage.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}}
	return sts
}

// affinity spreads the pods of a multi-node server over nodes, and keeps
// a replica off its primary's node: a primary and its replicas measure
// replication between machines, never within one.
func (s Server) affinity(user *corev1.Affinity, replicas int32) *corev1.Affinity {
	a := serverAffinity(user, replicas, s.Selector())
	if s.Role != benchv1.InstanceReplica {
		return a
	}
	primary := s.Selector()
	primary[benchv1.LabelInstanceRole] = string(benchv1.InstancePrimary)
	return loadgenAffinity(a, primary)
}

// serverAffinity spreads the replicas of a multi-node server over nodes,
// so that a cluster of N measures N machines.
func serverAffinity(user *corev1.Affinity, replicas int32, self map[string]string) *corev1.Affinity {
	if replicas < 2 {
		return user
	}
	return loadgenAffinity(user, self)
}

// Services are the client Service and the headless one.
func (s Server) Services() []*corev1.Service {
	port := []corev1.ServicePort{{Name: s.PortName, Port: s.Port, TargetPort: intstr.FromInt32(s.Port)}}
	client := &corev1.Service{ObjectMeta: ObjectMeta(s.Run, s.Name, benchv1.RoleTarget),
		Spec: corev1.ServiceSpec{Selector: s.Selector(), Ports: port}}
	peers := append([]corev1.ServicePort{}, port...)
	for _, p := range s.PeerPorts {
		peers = append(peers, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromInt32(p.ContainerPort)})
	}
	headless := &corev1.Service{ObjectMeta: ObjectMeta(s.Run, s.HeadlessName(), benchv1.RoleTarget),
		Spec: corev1.ServiceSpec{Selector: s.Selector(), Ports: peers, ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true}}
	return []*corev1.Service{client, headless}
}

// CredentialsSecretName is the generated Secret with username and password.
func CredentialsSecretName(run *benchv1.BenchmarkRun, kind string) string {
	return ChildName(run, kind+"-credentials")
}

// TLSSecretName is the generated server certificate (ca.crt, tls.crt, tls.key).
func TLSSecretName(run *benchv1.BenchmarkRun, kind string) string { return ChildName(run, kind+"-tls") }

// ClientTLSSecretName is the generated client certificate of two-way TLS.
func ClientTLSSecretName(run *benchv1.BenchmarkRun, kind string) string {
	return ChildName(run, kind+"-client-tls")
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
