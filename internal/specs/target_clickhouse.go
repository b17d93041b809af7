package specs

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The clickhouse target kind: the official images, used when the spec
// names none. Clients use the HTTP interface; the native protocol and the
// interserver port (replicas fetching parts from each other) are peer ports.
const (
	DefaultClickHouseImage       = "clickhouse/clickhouse-server:25.8"
	DefaultClickHouseKeeperImage = "clickhouse/clickhouse-keeper:25.8"
	ClickHousePort               = 8123
	ClickHouseNativePort         = 9000
	ClickHouseInterserverPort    = 9009
	ClickHouseKeeperPort         = 9181
	ClickHouseRaftPort           = 9234
	// ClickHouseKind is the kind as spec.target spells it; it names the generated Secrets.
	ClickHouseKind = "clickhouse"
	// ClickHouseUser is the account of the generated credentials.
	ClickHouseUser = "dbperf"
	// ClickHouseCluster is the cluster (remote_servers) of the shard's
	// replicas, for ON CLUSTER statements.
	ClickHouseCluster = "dbperf"
	// ClickHouseConfigDir and ClickHouseUsersDir are where the image merges
	// configuration overrides from.
	ClickHouseConfigDir = "/etc/clickhouse-server/config.d"
	ClickHouseUsersDir  = "/etc/clickhouse-server/users.d"
	clickHouseKeeperDir = "/etc/clickhouse-keeper/dbperf"
	// The keys of the configuration ConfigMap.
	ClickHouseConfigKey = "config.xml"
	ClickHouseUsersKey  = "users.xml"
	ClickHouseKeeperKey = "keeper.xml"
	// clickHouseOverride is the name of the override files the pods see.
	clickHouseOverride = "dbperf.xml"
)

// The kind's default images, for the registry remap and the allow-list
// (images.go).
func init() {
	addDefaultImage("spec.target.clickhouse.image", DefaultClickHouseImage, func(t *benchv1.TargetSpec) *string {
		if t.ClickHouse == nil {
			return nil
		}
		return &t.ClickHouse.Image
	})
	addDefaultImage("spec.target.clickhouse.keeper.image", DefaultClickHouseKeeperImage, func(t *benchv1.TargetSpec) *string {
		if t.ClickHouse == nil || t.ClickHouse.Keeper == nil {
			return nil
		}
		return &t.ClickHouse.Keeper.Image
	})
}

// ClickHouse is a ClickHouse target: the lead server (the one server, or
// the replica clients connect to), the shard's other replicas and the
// Keeper ensemble, with the configuration they share.
type ClickHouse struct {
	Run *benchv1.BenchmarkRun
	// Lead is pod 0 of the shard, alone in its StatefulSet on placement;
	// the client Service points at it.
	Lead Server
	// Replicas are the shard's other replicas (replicas − 1 pods) on
	// replicaPlacement; nil for an unreplicated shard.
	Replicas *Server
	// Keeper is the ClickHouse Keeper ensemble; nil without spec keeper.
	Keeper *Server
}

// ClickHouseTargetFor describes a run's ClickHouse target.
func ClickHouseTargetFor(run *benchv1.BenchmarkRun) ClickHouse {
	t := run.Spec.Target.ClickHouse
	creds := CredentialsSecretName(run, ClickHouseKind)
	lead := Server{Run: run, Name: ServerName(run, ClickHouseKind), Container: "clickhouse", User: ClickHouseUser,
		Image: orDefault(t.Image, DefaultClickHouseImage), Args: t.Args,
		Port: ClickHousePort, PortName: "http", Replicas: 1, UID: 101, DataPath: "/var/lib/clickhouse", Storage: t.Storage, Resources: t.Resources,
		PeerPorts: []corev1.ContainerPort{{Name: "native", ContainerPort: ClickHouseNativePort}, {Name: "interserver", ContainerPort: ClickHouseInterserverPort}},
		// The root file system stays writable: the entrypoint writes the
		// user's file into users.d.
		ExtraVolumes: []string{"/var/log/clickhouse-server"},
		Role:         benchv1.InstanceServer,
		Readiness: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ping", Port: intstr.FromInt32(ClickHousePort)}},
			PeriodSeconds: 2, FailureThreshold: 3, TimeoutSeconds: 2,
		},
		Env: []corev1.EnvVar{
			secretEnv("CLICKHOUSE_USER", creds, "username"), secretEnv("CLICKHOUSE_PASSWORD", creds, "password"),
			{Name: "CLICKHOUSE_DB", Value: orDefault(t.Database, "bench")},
			{Name: "CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT", Value: "1"},
		},
	}
	ch := ClickHouse{Run: run, Lead: lead}
	if t.Keeper == nil {
		return ch // Replicas above 1 need Keeper (the API refuses them without)
	}
	// With Keeper every server is a replica of the shard, one alone too
	// (Replicated tables then work): each names itself (macros) and tells
	// the others where to fetch its parts (interserver_http_host) by its
	// pod's DNS name.
	ch.Keeper = clickHouseKeeper(run, t)
	ch.Lead.Env = clickHouseReplicaEnv(ch.Lead)
	if t.Replicas <= 1 {
		return ch
	}
	ch.Lead.Role = benchv1.InstancePrimary
	replicas := lead
	replicas.Name, replicas.Role, replicas.Replicas = ServerName(run, ClickHouseKind+"-replicas"), benchv1.InstanceReplica, t.Replicas-1
	replicas.Placement = ptr.To(run.Spec.Target.ReplicasPlacement())
	replicas.Env = clickHouseReplicaEnv(replicas)
	ch.Replicas = &replicas
	return ch
}

func clickHouseReplicaEnv(s Server) []corev1.EnvVar {
	return append(append([]corev1.EnvVar{}, s.Env...),
		corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "CLICKHOUSE_INTERSERVER_HOST", Value: fmt.Sprintf("$(POD_NAME).%s.%s.svc", s.HeadlessName(), s.Run.Namespace)})
}

// clickHouseKeeper is the Keeper ensemble: its server id is the pod's
// ordinal + 1, which a shell wrapper computes from the pod's name ($$ is
// how a container's command spells a $ that Kubernetes must not expand).
func clickHouseKeeper(run *benchv1.BenchmarkRun, t *benchv1.ClickHouseTarget) *Server {
	k := &Server{Run: run, Name: ServerName(run, ClickHouseKind+"-keeper"), Container: "keeper",
		Image: orDefault(t.Keeper.Image, DefaultClickHouseKeeperImage),
		Command: []string{"/bin/sh", "-c", `export KEEPER_SERVER_ID=$$(( $${POD_NAME##*-} + 1 )) && exec clickhouse-keeper --config-file=` +
			clickHouseKeeperDir + "/" + ClickHouseKeeperKey},
		Port: ClickHouseKeeperPort, PortName: "keeper", PeerPorts: []corev1.ContainerPort{{Name: "raft", ContainerPort: ClickHouseRaftPort}},
		Replicas: max(t.Keeper.Replicas, 1), UID: 101, DataPath: "/var/lib/clickhouse-keeper", Role: benchv1.InstanceKeeper,
		Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
	}
	// Keeper keeps little: a small volume of the data's class, so that a
	// restarted Keeper keeps the replicas' metadata.
	if t.Storage != nil {
		k.Storage = &benchv1.StorageSpec{Size: resource.MustParse("1Gi"), StorageClassName: t.Storage.StorageClassName}
	}
	return k
}

// ConfigMapName is the ConfigMap of the target's configuration overrides.
func (c ClickHouse) ConfigMapName() string { return ChildName(c.Run, ClickHouseKind+"-config") }

// ConfigMap holds the server's config.d and users.d overrides and Keeper's
// configuration.
func (c ClickHouse) ConfigMap() *corev1.ConfigMap {
	data := map[string]string{ClickHouseConfigKey: c.ServerXML(), ClickHouseUsersKey: clickHouseUsersXML}
	if c.Keeper != nil {
		data[ClickHouseKeeperKey] = c.KeeperXML()
	}
	return &corev1.ConfigMap{ObjectMeta: ObjectMeta(c.Run, c.ConfigMapName(), benchv1.RoleTarget), Data: data}
}

// clickHouseUsersXML logs every query of the default profile (the
// generated user's) to system.query_log, which the workloads read.
const clickHouseUsersXML = `<clickhouse>
  <profiles><default><log_queries>1</log_queries></default></profiles>
</clickhouse>
`

// ServerXML is the servers' config.d override: listen on every address,
// log to the console, and with Keeper the cluster of the one shard, the
// replica's macros and the Keeper servers.
func (c ClickHouse) ServerXML() string {
	var b strings.Builder
	b.WriteString(`<clickhouse>
  <listen_host>::</listen_host>
  <listen_host>0.0.0.0</listen_host>
  <listen_try>1</listen_try>
  <logger><console>1</console></logger>
`)
	fmt.Fprintf(&b, "  <http_port>%d</http_port>\n  <tcp_port>%d</tcp_port>\n", ClickHousePort, ClickHouseNativePort)
	if c.Keeper != nil {
		fmt.Fprintf(&b, "  <interserver_http_port>%d</interserver_http_port>\n", ClickHouseInterserverPort)
		b.WriteString("  <interserver_http_host from_env=\"CLICKHOUSE_INTERSERVER_HOST\"/>\n")
		fmt.Fprintf(&b, "  <remote_servers>\n    <%s>\n      <shard>\n        <internal_replication>true</internal_replication>\n", ClickHouseCluster)
		for _, host := range c.ReplicaHosts() {
			fmt.Fprintf(&b, "        <replica><host>%s</host><port>%d</port></replica>\n", host, ClickHouseNativePort)
		}
		fmt.Fprintf(&b, "      </shard>\n    </%s>\n  </remote_servers>\n", ClickHouseCluster)
		fmt.Fprintf(&b, "  <macros>\n    <cluster>%s</cluster>\n    <shard>1</shard>\n    <replica from_env=\"POD_NAME\"/>\n  </macros>\n", ClickHouseCluster)
		b.WriteString("  <zookeeper>\n")
		for i := range int(c.Keeper.Replicas) {
			fmt.Fprintf(&b, "    <node><host>%s</host><port>%d</port></node>\n", c.Keeper.PodHost(i), ClickHouseKeeperPort)
		}
		b.WriteString("  </zookeeper>\n  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>\n")
	}
	b.WriteString("</clickhouse>\n")
	return b.String()
}

// ReplicaHosts are the DNS names of the shard's replicas, the lead first.
func (c ClickHouse) ReplicaHosts() []string {
	hosts := []string{c.Lead.PodHost(0)}
	if c.Replicas != nil {
		for i := range int(c.Replicas.Replicas) {
			hosts = append(hosts, c.Replicas.PodHost(i))
		}
	}
	return hosts
}

// KeeperXML is Keeper's configuration: every server of the ensemble by
// its pod's DNS name, server ids from 1.
func (c ClickHouse) KeeperXML() string {
	k := c.Keeper
	var b strings.Builder
	b.WriteString(`<clickhouse>
  <listen_host>::</listen_host>
  <listen_host>0.0.0.0</listen_host>
  <listen_try>1</listen_try>
  <logger><level>information</level><console>1</console></logger>
  <path>` + k.DataPath + `</path>
  <keeper_server>
`)
	fmt.Fprintf(&b, "    <tcp_port>%d</tcp_port>\n    <server_id from_env=\"KEEPER_SERVER_ID\"/>\n", ClickHouseKeeperPort)
	fmt.Fprintf(&b, "    <log_storage_path>%[1]s/coordination/log</log_storage_path>\n    <snapshot_storage_path>%[1]s/coordination/snapshots</snapshot_storage_path>\n", k.DataPath)
	b.WriteString("    <coordination_settings><operation_timeout_ms>10000</operation_timeout_ms><session_timeout_ms>30000</session_timeout_ms>" +
		"<raft_logs_level>warning</raft_logs_level></coordination_settings>\n    <raft_configuration>\n")
	for i := range int(k.Replicas) {
		fmt.Fprintf(&b, "      <server><id>%d</id><hostname>%s</hostname><port>%d</port></server>\n", i+1, k.PodHost(i), ClickHouseRaftPort)
	}
	b.WriteString("    </raft_configuration>\n  </keeper_server>\n</clickhouse>\n")
	return b.String()
}

// Servers are the ClickHouse servers' sets: the lead, then the replicas.
func (c ClickHouse) Servers() []Server {
	out := []Server{c.Lead}
	if c.Replicas != nil {
		out = append(out, *c.Replicas)
	}
	return out
}

// StatefulSets are the lead's, the replicas' and Keeper's, with the
// configuration mounted. The replicas keep off the lead's node as they keep
// off each other's (Server.StatefulSet): a shard of N replicas measures N
// machines.
func (c ClickHouse) StatefulSets() []*appsv1.StatefulSet {
	var out []*appsv1.StatefulSet
	for _, s := range c.Servers() {
		sts := s.StatefulSet()
		pod := &sts.Spec.Template.Spec
		c.mount(pod, "config", ClickHouseConfigKey, corev1.VolumeMount{MountPath: ClickHouseConfigDir})
		// One file among the users.d files the image's entrypoint writes.
		c.mount(pod, "users", ClickHouseUsersKey, corev1.VolumeMount{MountPath: ClickHouseUsersDir + "/" + clickHouseOverride, SubPath: clickHouseOverride})
		out = append(out, sts)
	}
	if c.Keeper != nil {
		sts := c.Keeper.StatefulSet()
		c.mount(&sts.Spec.Template.Spec, "config", ClickHouseKeeperKey, corev1.VolumeMount{MountPath: clickHouseKeeperDir})
		out = append(out, sts)
	}
	return out
}

// mount adds a volume of one key of the ConfigMap, as the file
// clickHouseOverride, and mounts it in the pod's container.
func (c ClickHouse) mount(pod *corev1.PodSpec, volume, key string, m corev1.VolumeMount) {
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: c.ConfigMapName()},
		Items:                []corev1.KeyToPath{{Key: key, Path: keyPath(key)}},
	}}})
	m.Name, m.ReadOnly = volume, true
	pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, m)
}

// keyPath is the file a key becomes: Keeper's own name, or the override.
func keyPath(key string) string {
	if key == ClickHouseKeeperKey {
		return key
	}
	return clickHouseOverride
}

// Services are the client Service (the lead's HTTP port) and a headless
// Service per StatefulSet, which names its pods.
func (c ClickHouse) Services() []*corev1.Service {
	out := c.Lead.Services()
	if c.Replicas != nil {
		out = append(out, c.Replicas.Services()[1])
	}
	if c.Keeper != nil {
		out = append(out, c.Keeper.Services()[1])
	}
	return out
}
