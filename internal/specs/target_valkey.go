package specs

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The valkey target kind: the official image, used when the spec names none.
const (
	DefaultValkeyImage = "valkey/valkey:8.1"
	ValkeyPort         = 6379
	// ValkeyKind is the kind as spec.target spells it; it names the generated Secrets.
	ValkeyKind = "valkey"
	valkeyDir  = "/data"
)

// The kind's default images, for the registry remap and the allow-list
// (images.go).
func init() {
	addDefaultImage("spec.target.valkey.image", DefaultValkeyImage, func(t *benchv1.TargetSpec) *string {
		if t.Valkey == nil {
			return nil
		}
		return &t.Valkey.Image
	})
}

// ValkeyName names the Valkey server's StatefulSet and Service.
func ValkeyName(run *benchv1.BenchmarkRun) string { return ServerName(run, ValkeyKind) }

// ValkeyReplicasName names the replicas' StatefulSet and their Service.
func ValkeyReplicasName(run *benchv1.BenchmarkRun) string {
	return ServerName(run, ValkeyKind+"-replicas")
}

// ValkeyArgs are a Valkey server's arguments on port, without persistence:
// a benchmark measures the serving path, and snapshots would add noise at
// random times. dir holds what the server must write (a cluster's nodes file).
func ValkeyArgs(port int, dir string) []string {
	return []string{"--port", strconv.Itoa(port), "--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", dir}
}

// ValkeyReplicaArgs make a server replicate the primary at host:port.
func ValkeyReplicaArgs(host string, port int) []string {
	return []string{"--replicaof", host, strconv.Itoa(port)}
}

// ValkeyReplicaReadyCommand succeeds when the replica on port has its link
// to the primary up: a replica's readiness probe, with cli the image's
// client (valkey-cli, redis-cli).
func ValkeyReplicaReadyCommand(cli string, port int) []string {
	return []string{"sh", "-c", cli + " -p " + strconv.Itoa(port) + " info replication | grep -q master_link_status:up"}
}

// ValkeyServer runs one Valkey server: the target itself, or the primary
// of spec.target.valkey.replicas.
func ValkeyServer(run *benchv1.BenchmarkRun) Server {
	t := run.Spec.Target.Valkey
	s := Server{Run: run, Name: ValkeyName(run), Container: "valkey", Image: orDefault(t.Image, DefaultValkeyImage),
		Command: []string{"valkey-server"},
		Args:    append(ValkeyArgs(ValkeyPort, valkeyDir), t.Args...),
		Port:    ValkeyPort, PortName: "valkey", Replicas: 1, UID: 999, DataPath: valkeyDir, Storage: t.Storage, Resources: t.Resources,
		ReadOnlyRoot: true}
	if t.Replicas > 0 {
		s.Role = benchv1.InstancePrimary
	}
	return s
}

// ValkeyReplicas are the replicas of spec.target.valkey.replicas, on
// replicaPlacement, with a Service of their own for reads. A replica is
// ready once its link to the primary is up, so a ready StatefulSet
// replicates.
func ValkeyReplicas(run *benchv1.BenchmarkRun) Server {
	primary := ValkeyServer(run)
	s := primary
	s.Name, s.Role, s.Replicas = ValkeyReplicasName(run), benchv1.InstanceReplica, run.Spec.Target.Valkey.Replicas
	s.Args = append(append([]string{}, primary.Args...), ValkeyReplicaArgs(primary.Host(), ValkeyPort)...)
	s.Placement = ptr.To(run.Spec.Target.ReplicasPlacement())
	s.Readiness = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: ValkeyReplicaReadyCommand("valkey-cli", ValkeyPort)}},
		PeriodSeconds: 2, FailureThreshold: 3, TimeoutSeconds: 2,
	}
	return s
}

// ValkeyClusterBusOffset is the distance of a cluster member's bus port
// (node-to-node gossip) from its client port, Valkey's default.
const ValkeyClusterBusOffset = 10000

// ValkeyCluster is a Valkey Cluster (spec.target.valkey.cluster): shards ×
// (1 + replicasPerShard) servers, instancesPerNode of them in each pod, one
// container each on ports 6379 and up, and one pod per node. The servers
// start empty; a Job joins them into a cluster once every pod is ready.
type ValkeyCluster struct {
	Server
	Shards, ReplicasPerShard, PerNode int32
}

// NewValkeyCluster describes the run's Valkey Cluster.
func NewValkeyCluster(run *benchv1.BenchmarkRun) ValkeyCluster {
	c := run.Spec.Target.Valkey.Cluster
	v := ValkeyCluster{Server: ValkeyServer(run), Shards: c.Shards, ReplicasPerShard: c.ReplicasPerShard, PerNode: max(c.InstancesPerNode, 1)}
	v.Role, v.Replicas = benchv1.InstanceShard, v.Instances()/v.PerNode
	return v
}

// Instances is the number of servers.
func (v ValkeyCluster) Instances() int32 { return v.Shards * (1 + v.ReplicasPerShard) }

// Addresses are every server's host:port, pod by pod.
func (v ValkeyCluster) Addresses() []string {
	var out []string
	for i := range int(v.Replicas) {
		for j := range int(v.PerNode) {
			out = append(out, net.JoinHostPort(v.PodHost(i), strconv.Itoa(ValkeyPort+j)))
		}
	}
	return out
}

// ValkeyClusterArgs make a server on port a cluster member that announces
// the address ip (the pod's): its nodes file is in the server's --dir, one
// per port, as the servers of a pod share it.
func ValkeyClusterArgs(port int, ip string) []string {
	return []string{"--cluster-enabled", "yes", "--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port), "--cluster-announce-ip", ip}
}

// podIPEnv is the variable of the pod's address, which the kubelet expands
// in arguments as $(POD_IP).
const podIPEnv = "POD_IP"

// StatefulSet is the Server's, with one container per server: each with
// the target's resources (with whole CPUs as both request and limit and
// the kubelet's static CPU manager, its own cores) and a TCP readiness
// probe on its port. The pods are on separate nodes (Server's required
// anti-affinity among them).
func (v ValkeyCluster) StatefulSet() *appsv1.StatefulSet {
	sts := v.Server.StatefulSet()
	spec := &sts.Spec.Template.Spec
	model := spec.Containers[0]
	spec.Containers = nil
	for j := range int(v.PerNode) {
		port := ValkeyPort + j
		c := *model.DeepCopy()
		c.Name = fmt.Sprintf("valkey-%d", j)
		c.Args = append(append(ValkeyArgs(port, valkeyDir), ValkeyClusterArgs(port, "$("+podIPEnv+")")...), v.Run.Spec.Target.Valkey.Args...)
		c.Env = append(c.Env, corev1.EnvVar{Name: podIPEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}})
		c.Ports = []corev1.ContainerPort{{Name: fmt.Sprintf("valkey-%d", j), ContainerPort: int32(port)},
			{Name: fmt.Sprintf("bus-%d", j), ContainerPort: int32(port + ValkeyClusterBusOffset)}}
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
			PeriodSeconds: 2, FailureThreshold: 3,
		}
		spec.Containers = append(spec.Containers, c)
	}
	return sts
}

// JobName names the Job that creates the cluster.
func (v ValkeyCluster) JobName() string { return ChildName(v.Run, ValkeyKind+"-cluster-create") }

// ValkeyClusterCreateScript joins the servers its arguments name (host:port)
// into a cluster with cli (valkey-cli, redis-cli) and waits until it
// serves: every server says cluster_state:ok (the state spreads by gossip,
// and a server that has not heard yet answers CLUSTERDOWN; the first one
// alone was once ok while another refused a third of memtier's writes).
// Run again, it finds the cluster made and does nothing. Hosts are
// resolved first: CLUSTER MEET takes addresses only.
func ValkeyClusterCreateScript(cli string, replicasPerShard int32) string {
	return strings.NewReplacer("$CLI", cli, "$REPLICAS", strconv.Itoa(int(replicasPerShard))).Replace(`set -eu
ok() {
  for a in "$@"; do
    $CLI -h "${a%:*}" -p "${a##*:}" cluster info 2>/dev/null | grep -q cluster_state:ok || return 1
  done
}
# made: the slots are assigned (an earlier try created the cluster and
# ended before every server said ok): waited for, not created again.
made() { $CLI -h "${1%:*}" -p "${1##*:}" cluster info 2>/dev/null | grep -q cluster_slots_assigned:16384; }
if ok "$@"; then echo "the cluster exists"; exit 0; fi
if ! made "$@"; then
  nodes=""
  for a in "$@"; do
    h=${a%:*} p=${a##*:}
    ip=$(getent hosts "$h" 2>/dev/null | head -n 1 | cut -d ' ' -f 1)
    nodes="$nodes ${ip:-$h}:$p"
  done
  $CLI --cluster create $nodes --cluster-replicas $REPLICAS --cluster-yes
fi
i=0
until ok "$@"; do
  i=$((i + 1))
  if [ "$i" -ge 120 ]; then echo "cluster_state is not ok on every server 60 s after the cluster was created" >&2; exit 1; fi
  sleep 0.5
done
echo "the cluster serves"
`)
}

// CreateJob runs ValkeyClusterCreateScript in the target's image, as the
// other Jobs run: not as root, without a service-account token, on the
// target's placement. A failure is retried twice (a server slow to accept
// CLUSTER MEET), then the target is not ready with the Job's reason.
func (v ValkeyCluster) CreateJob() *batchv1.Job {
	pl := v.Run.Spec.Target.Placement
	labels := BaseLabels(v.Run, benchv1.RoleTarget)
	labels[benchv1.LabelJob] = v.JobName()
	meta := ObjectMeta(v.Run, v.JobName(), benchv1.RoleTarget)
	meta.Labels = labels
	// Its pod prepares the target, it is none of its servers: the target's
	// pod selector (ServerPodLabels) must not find it, or the environment,
	// the disturbance checks and the telemetry would count it.
	podLabels := BaseLabels(v.Run, benchv1.RolePrepare)
	podLabels[benchv1.LabelJob] = v.JobName()
	command := append([]string{"sh", "-c", ValkeyClusterCreateScript("valkey-cli", v.ReplicasPerShard), "create-cluster"}, v.Addresses()...)
	return &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{
		BackoffLimit:          ptr.To[int32](2),
		ActiveDeadlineSeconds: ptr.To[int64](600),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks:           ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(v.UID), RunAsGroup: ptr.To(v.UID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			NodeSelector:     pl.Selector(),
			Tolerations:      pl.Tolerations,
			ImagePullSecrets: v.Run.Spec.ImagePullSecrets,
			Containers: []corev1.Container{{Name: "create-cluster", Image: v.Image, Command: command,
				SecurityContext: containerSecurity(),
				// The end of its log is what a failed Job reports on the run.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Env:                      []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
				VolumeMounts:             []corev1.VolumeMount{{Name: tmpVolume, MountPath: "/tmp"}}}},
			Volumes: []corev1.Volume{{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}},
	}}
}
