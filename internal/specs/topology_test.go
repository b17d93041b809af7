package specs

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// replicaZone is where the replicas of the topology tests run.
var replicaZone = &benchv1.Placement{Zone: "europe-west4-b", NodeSelector: map[string]string{"pool": "replicas"}}

func withReplicaPlacement(run *benchv1.BenchmarkRun) *benchv1.BenchmarkRun {
	run.Spec.Target.ReplicaPlacement = replicaZone
	return run
}

// A Valkey primary with replicas: the primary is today's StatefulSet and
// Service, marked primary; the replicas a second StatefulSet and Service
// on replicaPlacement that replicate from the primary's Service and are
// ready when their link is up. Neither selects the other's pods.
func TestValkeyReplicas(t *testing.T) {
	run := withReplicaPlacement(serverRun(benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{Replicas: 2, ServerTarget: benchv1.ServerTarget{Args: []string{"--io-threads", "4"}}}}))
	primary, replicas := ValkeyServer(run), ValkeyReplicas(run)
	if primary.Name != "gen4-valkey" || replicas.Name != "gen4-valkey-replicas" || primary.HeadlessName() == replicas.HeadlessName() {
		t.Errorf("names %s, %s (headless %s, %s)", primary.Name, replicas.Name, primary.HeadlessName(), replicas.HeadlessName())
	}
	ps, rs := primary.StatefulSet(), replicas.StatefulSet()
	if *ps.Spec.Replicas != 1 || *rs.Spec.Replicas != 2 {
		t.Errorf("replicas %d and %d, want 1 and 2", *ps.Spec.Replicas, *rs.Spec.Replicas)
	}
	for sts, role := range map[string]benchv1.InstanceRole{"primary": benchv1.InstancePrimary, "replicas": benchv1.InstanceReplica} {
		s := map[string]Server{"primary": primary, "replicas": replicas}[sts]
		set := s.StatefulSet()
		if got := set.Spec.Template.Labels[benchv1.LabelInstanceRole]; got != string(role) {
			t.Errorf("%s: pod role %q, want %s", sts, got, role)
		}
		if got := set.Spec.Selector.MatchLabels[benchv1.LabelInstanceRole]; got != string(role) {
			t.Errorf("%s: the StatefulSet selects role %q", sts, got)
		}
		for _, svc := range s.Services() {
			if svc.Spec.Selector[benchv1.LabelInstanceRole] != string(role) {
				t.Errorf("%s: Service %s selects %v", sts, svc.Name, svc.Spec.Selector)
			}
		}
		checkRestricted(t, sts, &set.Spec.Template.ObjectMeta, &set.Spec.Template.Spec)
	}
	wantArgs := []string{"--port", "6379", "--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", "/data", "--io-threads", "4"}
	if diff := cmp.Diff(wantArgs, ps.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("primary args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(wantArgs, "--replicaof", "gen4-valkey.perf.svc", "6379"), rs.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("replica args (-want +got):\n%s", diff)
	}
	want := map[string]string{"pool": "replicas", benchv1.ZoneLabel: "europe-west4-b"}
	if diff := cmp.Diff(want, rs.Spec.Template.Spec.NodeSelector); diff != "" {
		t.Errorf("replicas' nodeSelector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"pool": "standard-v4a"}, ps.Spec.Template.Spec.NodeSelector); diff != "" {
		t.Errorf("primary's nodeSelector (-want +got):\n%s", diff)
	}
	probe := rs.Spec.Template.Spec.Containers[0].ReadinessProbe
	if probe.Exec == nil || !strings.Contains(strings.Join(probe.Exec.Command, " "), "valkey-cli -p 6379 info replication | grep -q master_link_status:up") {
		t.Errorf("replica readiness %+v", probe)
	}
	if ps.Spec.Template.Spec.Containers[0].ReadinessProbe.TCPSocket == nil {
		t.Error("the primary's readiness is not its port")
	}
	// Two replicas are spread over nodes, among themselves, and never on
	// the primary's node.
	terms := rs.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 2 || terms[0].LabelSelector.MatchLabels[benchv1.LabelInstanceRole] != string(benchv1.InstanceReplica) ||
		!maps.Equal(terms[1].LabelSelector.MatchLabels, ps.Spec.Selector.MatchLabels) || terms[0].TopologyKey != corev1.LabelHostname || terms[1].TopologyKey != corev1.LabelHostname {
		t.Errorf("replicas' anti-affinity %+v, want their own pods' and the primary's nodes", terms)
	}
	// One replica too keeps off the primary's node.
	run.Spec.Target.Valkey.Replicas = 1
	one := ValkeyReplicas(run).StatefulSet().Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(one) != 1 || !maps.Equal(one[0].LabelSelector.MatchLabels, ps.Spec.Selector.MatchLabels) {
		t.Errorf("one replica's anti-affinity %+v, want the primary's node", one)
	}
}

// Without replicas, the server is the one it always was: no role in its
// selector (the pod is labelled server), TCP readiness.
func TestValkeyWithoutReplicasIsOneServer(t *testing.T) {
	s := ValkeyServer(serverRun(benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}}))
	sts := s.StatefulSet()
	if diff := cmp.Diff(ServerPodLabels(s.Run), sts.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if got := sts.Spec.Template.Labels[benchv1.LabelInstanceRole]; got != string(benchv1.InstanceServer) {
		t.Errorf("pod role %q", got)
	}
	if slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--replicaof") || sts.Spec.Template.Spec.Containers[0].ReadinessProbe.TCPSocket == nil {
		t.Errorf("container %+v", sts.Spec.Template.Spec.Containers[0])
	}
}

// A Valkey Cluster of 3 shards with a replica each, 2 servers per node:
// 3 pods on separate nodes, 2 containers each on their own client and bus
// ports with their own nodes file and the target's resources; the Job
// names all 6 servers and runs as the other Jobs do.
func TestValkeyCluster(t *testing.T) {
	cpu := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}}
	run := serverRun(benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{ServerTarget: benchv1.ServerTarget{Resources: cpu},
		Cluster: &benchv1.ValkeyCluster{Shards: 3, ReplicasPerShard: 1, InstancesPerNode: 2}}})
	v := NewValkeyCluster(run)
	sts := v.StatefulSet()
	spec := sts.Spec.Template.Spec
	if *sts.Spec.Replicas != 3 || len(spec.Containers) != 2 || sts.Name != ValkeyName(run) {
		t.Fatalf("%s: %d pods of %d containers, want 3 of 2", sts.Name, *sts.Spec.Replicas, len(spec.Containers))
	}
	if got := sts.Spec.Template.Labels[benchv1.LabelInstanceRole]; got != string(benchv1.InstanceShard) {
		t.Errorf("pod role %q", got)
	}
	for j, c := range spec.Containers {
		port := int32(6379 + j)
		if len(c.Ports) != 2 || c.Ports[0].ContainerPort != port || c.Ports[1].ContainerPort != port+10000 {
			t.Errorf("container %d ports %+v", j, c.Ports)
		}
		args := strings.Join(c.Args, " ")
		for _, want := range []string{"--port " + itoa(port), "--cluster-enabled yes", "--cluster-config-file nodes-" + itoa(port) + ".conf", "--dir /data", "--cluster-announce-ip $(POD_IP)"} {
			if !strings.Contains(args, want) {
				t.Errorf("container %d args %q lack %q", j, args, want)
			}
		}
		if len(c.Env) != 1 || c.Env[0].Name != "POD_IP" || c.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
			t.Errorf("container %d env %+v", j, c.Env)
		}
		if c.ReadinessProbe.TCPSocket.Port.IntVal != port {
			t.Errorf("container %d probes port %v", j, c.ReadinessProbe.TCPSocket.Port)
		}
		if diff := cmp.Diff(cpu, c.Resources); diff != "" {
			t.Errorf("container %d resources (-want +got):\n%s", j, diff)
		}
	}
	terms := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 1 || terms[0].TopologyKey != corev1.LabelHostname || terms[0].LabelSelector.MatchLabels[benchv1.LabelInstanceRole] != string(benchv1.InstanceShard) {
		t.Errorf("anti-affinity %+v", terms)
	}
	checkRestricted(t, "cluster", &sts.Spec.Template.ObjectMeta, &spec)

	job := v.CreateJob()
	js := job.Spec.Template.Spec
	cmd := js.Containers[0].Command
	addrs := cmd[4:]
	if len(addrs) != 6 || addrs[0] != "gen4-valkey-0.gen4-valkey-nodes.perf.svc:6379" || addrs[5] != "gen4-valkey-2.gen4-valkey-nodes.perf.svc:6380" {
		t.Errorf("the Job's servers %q", addrs)
	}
	if cmd[2] != ValkeyClusterCreateScript("valkey-cli", 1) || !strings.Contains(cmd[2], "--cluster-replicas 1 --cluster-yes") {
		t.Errorf("the Job's script:\n%s", cmd[2])
	}
	if job.Name != "gen4-valkey-cluster-create" || *js.AutomountServiceAccountToken || js.Containers[0].Image != DefaultValkeyImage || *js.SecurityContext.RunAsUser != 999 {
		t.Errorf("Job %s: %+v", job.Name, js)
	}
	checkRestricted(t, "cluster job", &job.Spec.Template.ObjectMeta, &js)
	// Its pod is none of the target's servers: the target's selector,
	// which the environment and the telemetry use, does not find it.
	if labels.SelectorFromSet(ServerPodLabels(run)).Matches(labels.Set(job.Spec.Template.Labels)) {
		t.Errorf("the target's pod selector finds the Job's pod: %v", job.Spec.Template.Labels)
	}
}

// MySQL with replicas: the primary logs with GTIDs; the replicas, on
// replicaPlacement, run the image's entrypoint after writing the script
// that points them at the primary (over TLS when the target has it), with
// a server id from their ordinal, read-only, ready when both replication
// threads run. The mariadb image gets MariaDB's spelling.
func TestMySQLReplicas(t *testing.T) {
	for name, c := range map[string]struct {
		image             string
		tls               bool
		primaryArgs, want []string
	}{
		"mysql": {"", false, []string{"--server-id=1", "--log-bin", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"},
			[]string{"CHANGE REPLICATION SOURCE TO SOURCE_HOST='gen4-mysql.perf.svc', SOURCE_PORT=3306", "SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1;", "START REPLICA;", "docker-entrypoint.sh mysqld"}},
		"mysql over TLS": {"", true, []string{"--server-id=1", "--log-bin", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"},
			[]string{"SOURCE_AUTO_POSITION=1, SOURCE_SSL=1;"}},
		"mariadb": {"mariadb:11.4", false, []string{"--server-id=1", "--log-bin"},
			[]string{"CHANGE MASTER TO MASTER_HOST='gen4-mysql.perf.svc', MASTER_PORT=3306", "MASTER_USE_GTID=slave_pos;", "START SLAVE;", "docker-entrypoint.sh mariadbd"}},
	} {
		t.Run(name, func(t *testing.T) {
			target := &benchv1.MySQLTarget{ServerTarget: benchv1.ServerTarget{Image: c.image}, Replicas: 2}
			if c.tls {
				target.TLS = &benchv1.ServerTLS{Enabled: true}
			}
			run := withReplicaPlacement(serverRun(benchv1.TargetSpec{MySQL: target}))
			primary, replicas := MySQLServer(run), MySQLReplicas(run)
			if !slices.Equal(primary.Args[:len(c.primaryArgs)], c.primaryArgs) || primary.Role != benchv1.InstancePrimary {
				t.Errorf("primary args %q, role %q", primary.Args, primary.Role)
			}
			sts := replicas.StatefulSet()
			ctr := sts.Spec.Template.Spec.Containers[0]
			script := ctr.Command[2]
			for _, w := range append(c.want, "'$MYSQL_ROOT_PASSWORD'", `--server-id=$((2 + ${HOSTNAME##*-})) --read-only=ON`,
				"cat > /docker-entrypoint-initdb.d/replicate.sh") {
				if !strings.Contains(script, w) {
					t.Errorf("the replicas' script lacks %q:\n%s", w, script)
				}
			}
			if sts.Name != "gen4-mysql-replicas" || *sts.Spec.Replicas != 2 || !slices.Equal(ctr.Args, primary.Args) {
				t.Errorf("%s: %d replicas, args %q", sts.Name, *sts.Spec.Replicas, ctr.Args)
			}
			if sts.Spec.Template.Spec.NodeSelector[benchv1.ZoneLabel] != "europe-west4-b" || ctr.ReadinessProbe.Exec == nil {
				t.Errorf("nodeSelector %v, readiness %+v", sts.Spec.Template.Spec.NodeSelector, ctr.ReadinessProbe)
			}
			if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/docker-entrypoint-initdb.d" && !m.ReadOnly }) {
				t.Errorf("no writable init directory in %+v", ctr.VolumeMounts)
			}
			checkRestricted(t, "replicas", &sts.Spec.Template.ObjectMeta, &sts.Spec.Template.Spec)
		})
	}
	// Without replicas the primary is the server it always was.
	single := MySQLServer(serverRun(benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{}}))
	if slices.Contains(single.Args, "--log-bin") || single.Role != "" {
		t.Errorf("a single server: args %q, role %q", single.Args, single.Role)
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }
