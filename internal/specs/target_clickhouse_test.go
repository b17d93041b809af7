package specs

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

func clickHouseRun(t benchv1.ClickHouseTarget, replicaPlacement *benchv1.Placement) *benchv1.BenchmarkRun {
	run := serverRun(benchv1.TargetSpec{ClickHouse: &t})
	run.Spec.Target.ReplicaPlacement = replicaPlacement
	return run
}

// replicatedClickHouse: three replicas, the two besides the lead in
// another zone, and three Keeper servers.
func replicatedClickHouse() ClickHouse {
	return ClickHouseTargetFor(clickHouseRun(benchv1.ClickHouseTarget{
		ServerTarget: benchv1.ServerTarget{Storage: &benchv1.StorageSpec{Size: resource.MustParse("50Gi"), StorageClassName: ptr.To("premium-rwo")}},
		Database:     "ssb", Replicas: 3, Keeper: &benchv1.ClickHouseKeeper{Replicas: 3}},
		&benchv1.Placement{Zone: "zone-b", NodeSelector: map[string]string{"pool": "standard-v4a"}}))
}

// The replicated target as the API server receives it.
func TestClickHouseReplicatedGolden(t *testing.T) {
	ch := replicatedClickHouse()
	sets := ch.StatefulSets()
	golden(t, "clickhouse-replicas-statefulsets", sets)
	golden(t, "clickhouse-replicas-services", ch.Services())
	golden(t, "clickhouse-replicas-configmap", ch.ConfigMap())
	for _, sts := range sets {
		checkRestricted(t, sts.Name, &sts.Spec.Template.ObjectMeta, &sts.Spec.Template.Spec)
	}
}

// One server: one StatefulSet from the official image with the generated
// user, the database, an HTTP readiness probe and the overrides mounted.
func TestClickHouseOneServer(t *testing.T) {
	ch := ClickHouseTargetFor(clickHouseRun(benchv1.ClickHouseTarget{}, nil))
	if ch.Replicas != nil || ch.Keeper != nil {
		t.Fatalf("an unreplicated shard has replicas %v, keeper %v", ch.Replicas, ch.Keeper)
	}
	sets := ch.StatefulSets()
	if len(sets) != 1 {
		t.Fatalf("%d StatefulSets, want 1", len(sets))
	}
	sts := sets[0]
	pod := sts.Spec.Template.Spec
	c := pod.Containers[0]
	if sts.Name != "gen4-clickhouse" || *sts.Spec.Replicas != 1 || c.Image != DefaultClickHouseImage || *pod.SecurityContext.RunAsUser != 101 {
		t.Errorf("StatefulSet %s: %d pods of %s as uid %d", sts.Name, *sts.Spec.Replicas, c.Image, *pod.SecurityContext.RunAsUser)
	}
	if got := sts.Spec.Template.Labels[benchv1.LabelInstanceRole]; got != string(benchv1.InstanceServer) {
		t.Errorf("instance role %q, want server", got)
	}
	if p := c.ReadinessProbe.HTTPGet; p == nil || p.Path != "/ping" || p.Port.IntVal != ClickHousePort {
		t.Errorf("readiness probe %+v, want GET /ping on %d", c.ReadinessProbe, ClickHousePort)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			env[e.Name] = r.SecretKeyRef.Name + "/" + r.SecretKeyRef.Key
		}
	}
	want := map[string]string{"CLICKHOUSE_USER": "gen4-clickhouse-credentials/username", "CLICKHOUSE_PASSWORD": "gen4-clickhouse-credentials/password",
		"CLICKHOUSE_DB": "bench", "CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT": "1"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name + ":" + m.SubPath
	}
	for path, vol := range map[string]string{"/var/lib/clickhouse": "data:", ClickHouseConfigDir: "config:", ClickHouseUsersDir + "/dbperf.xml": "users:dbperf.xml"} {
		if mounts[path] != vol {
			t.Errorf("mount at %s is %q, want %q (mounts %v)", path, mounts[path], vol, mounts)
		}
	}
	svcs := ch.Services()
	if len(svcs) != 2 || svcs[0].Name != "gen4-clickhouse" || svcs[0].Spec.Ports[0].Port != ClickHousePort || len(svcs[1].Spec.Ports) != 3 {
		t.Errorf("services %s", describeServices(svcs))
	}
	xmlOf := ch.ConfigMap().Data
	for _, s := range []string{"<listen_host>::</listen_host>", "<listen_host>0.0.0.0</listen_host>", "<http_port>8123</http_port>"} {
		if !strings.Contains(xmlOf[ClickHouseConfigKey], s) {
			t.Errorf("config.d override lacks %s:\n%s", s, xmlOf[ClickHouseConfigKey])
		}
	}
	for _, s := range []string{"remote_servers", "zookeeper", "macros"} {
		if strings.Contains(xmlOf[ClickHouseConfigKey], s) {
			t.Errorf("an unreplicated server's override has %s:\n%s", s, xmlOf[ClickHouseConfigKey])
		}
	}
	if !strings.Contains(xmlOf[ClickHouseUsersKey], "<log_queries>1</log_queries>") {
		t.Errorf("users.d override does not log queries:\n%s", xmlOf[ClickHouseUsersKey])
	}
	checkRestricted(t, "clickhouse", &sts.Spec.Template.ObjectMeta, &pod)
}

// With replicas: the lead alone on placement, the others on
// replicaPlacement and off the lead's node, and Keeper on placement; the
// three sets select only their own pods, the client Service only the lead.
func TestClickHouseReplicasSplit(t *testing.T) {
	ch := replicatedClickHouse()
	sets := ch.StatefulSets()
	type want struct {
		name, role string
		pods       int32
		selector   map[string]string
	}
	onPlacement := map[string]string{"pool": "standard-v4a"}
	onReplicas := map[string]string{"pool": "standard-v4a", benchv1.ZoneLabel: "zone-b"}
	wants := []want{{"gen4-clickhouse", "primary", 1, onPlacement}, {"gen4-clickhouse-replicas", "replica", 2, onReplicas},
		{"gen4-clickhouse-keeper", "keeper", 3, onPlacement}}
	if len(sets) != len(wants) {
		t.Fatalf("%d StatefulSets, want %d", len(sets), len(wants))
	}
	for i, w := range wants {
		sts := sets[i]
		got := want{sts.Name, sts.Spec.Template.Labels[benchv1.LabelInstanceRole], *sts.Spec.Replicas, sts.Spec.Template.Spec.NodeSelector}
		if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{})); diff != "" {
			t.Errorf("StatefulSet %d (-want +got):\n%s", i, diff)
		}
		for j, other := range sets {
			sel := labels.SelectorFromSet(sts.Spec.Selector.MatchLabels)
			if matches := sel.Matches(labels.Set(other.Spec.Template.Labels)); matches != (i == j) {
				t.Errorf("the selector of %s matches the pods of %s: %v", sts.Name, other.Name, matches)
			}
		}
	}
	// Replicas keep off each other's and the lead's nodes.
	var avoided []map[string]string
	for _, term := range sets[1].Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		avoided = append(avoided, term.LabelSelector.MatchLabels)
	}
	if len(avoided) != 2 || !maps.Equal(avoided[0], sets[1].Spec.Selector.MatchLabels) || !maps.Equal(avoided[1], sets[0].Spec.Selector.MatchLabels) {
		t.Errorf("the replicas avoid %v, want their own pods and the lead's", avoided)
	}
	svcs := ch.Services()
	if svcs[0].Name != "gen4-clickhouse" || !maps.Equal(svcs[0].Spec.Selector, sets[0].Spec.Selector.MatchLabels) {
		t.Errorf("the client Service %s selects %v, want the lead's pods", svcs[0].Name, svcs[0].Spec.Selector)
	}
	for i, sts := range sets {
		if h := svcs[i+1]; h.Name != sts.Spec.ServiceName || h.Spec.ClusterIP != corev1.ClusterIPNone || !maps.Equal(h.Spec.Selector, sts.Spec.Selector.MatchLabels) {
			t.Errorf("StatefulSet %s has no headless Service of its own: %s", sts.Name, describeServices(svcs))
		}
	}
	if got := sets[2].Spec.Template.Spec.Containers[0].Command[2]; !strings.Contains(got, "KEEPER_SERVER_ID=$$(( $${POD_NAME##*-} + 1 ))") {
		t.Errorf("Keeper's server id does not come from the pod's ordinal: %s", got)
	}
}

// The configuration: one shard of every replica by its pod's DNS name,
// the replica's macros, Keeper's servers, and Keeper's raft list with ids
// from 1; every file is well-formed XML.
func TestClickHouseConfigXML(t *testing.T) {
	ch := replicatedClickHouse()
	data := ch.ConfigMap().Data
	for key, body := range data {
		d := xml.NewDecoder(strings.NewReader(body))
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed: %v\n%s", key, err, body)
			}
		}
	}
	hosts := []string{"gen4-clickhouse-0.gen4-clickhouse-nodes.perf.svc", "gen4-clickhouse-replicas-0.gen4-clickhouse-replicas-nodes.perf.svc",
		"gen4-clickhouse-replicas-1.gen4-clickhouse-replicas-nodes.perf.svc"}
	if diff := cmp.Diff(hosts, ch.ReplicaHosts()); diff != "" {
		t.Errorf("replica hosts (-want +got):\n%s", diff)
	}
	var shard strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&shard, "        <replica><host>%s</host><port>9000</port></replica>\n", h)
	}
	server := data[ClickHouseConfigKey]
	for _, s := range []string{"<dbperf>\n      <shard>\n        <internal_replication>true</internal_replication>\n" + shard.String() + "      </shard>",
		`<replica from_env="POD_NAME"/>`, "<shard>1</shard>", `<interserver_http_host from_env="CLICKHOUSE_INTERSERVER_HOST"/>`,
		"<node><host>gen4-clickhouse-keeper-0.gen4-clickhouse-keeper-nodes.perf.svc</host><port>9181</port></node>",
		"<node><host>gen4-clickhouse-keeper-2.gen4-clickhouse-keeper-nodes.perf.svc</host><port>9181</port></node>"} {
		if !strings.Contains(server, s) {
			t.Errorf("config.d override lacks\n%s\nin:\n%s", s, server)
		}
	}
	keeper := data[ClickHouseKeeperKey]
	for i := range 3 {
		s := fmt.Sprintf("<server><id>%d</id><hostname>gen4-clickhouse-keeper-%d.gen4-clickhouse-keeper-nodes.perf.svc</hostname><port>9234</port></server>", i+1, i)
		if !strings.Contains(keeper, s) {
			t.Errorf("Keeper's raft configuration lacks %s:\n%s", s, keeper)
		}
	}
	if !strings.Contains(keeper, `<server_id from_env="KEEPER_SERVER_ID"/>`) {
		t.Errorf("Keeper's server id is not the wrapper's:\n%s", keeper)
	}
	// Each replica's interserver host is its own pod's name.
	for _, sts := range ch.StatefulSets()[:2] {
		for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "CLICKHOUSE_INTERSERVER_HOST" && e.Value != "$(POD_NAME)."+sts.Spec.ServiceName+".perf.svc" {
				t.Errorf("%s: interserver host %q", sts.Name, e.Value)
			}
		}
	}
}

// A replicated shard whose placement sets an affinity keeps the spec's
// own affinity untouched when it adds the replicas' anti-affinity.
func TestClickHouseLeavesTheSpecAffinityAlone(t *testing.T) {
	run := clickHouseRun(benchv1.ClickHouseTarget{Replicas: 2, Keeper: &benchv1.ClickHouseKeeper{Replicas: 1}}, nil)
	run.Spec.Target.Placement.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	before := run.Spec.Target.DeepCopy()
	_ = ClickHouseTargetFor(run).StatefulSets()
	if diff := cmp.Diff(before, &run.Spec.Target); diff != "" {
		t.Errorf("building the StatefulSets changed the spec:\n%s", diff)
	}
}

func describeServices(svcs []*corev1.Service) string {
	var parts []string
	for _, s := range svcs {
		parts = append(parts, fmt.Sprintf("%s %v %d ports", s.Name, s.Spec.Selector, len(s.Spec.Ports)))
	}
	return strings.Join(parts, "; ")
}

// One server with Keeper is a shard of one replica: Replicated tables
// work (macros, Keeper), and there is no replicas' StatefulSet.
func TestClickHouseOneReplicaWithKeeper(t *testing.T) {
	ch := ClickHouseTargetFor(clickHouseRun(benchv1.ClickHouseTarget{Keeper: &benchv1.ClickHouseKeeper{Replicas: 1}}, nil))
	sets := ch.StatefulSets()
	if len(sets) != 2 || sets[0].Name != "gen4-clickhouse" || sets[1].Name != "gen4-clickhouse-keeper" {
		t.Fatalf("StatefulSets %d, want the server's and Keeper's", len(sets))
	}
	if role := sets[0].Spec.Template.Labels[benchv1.LabelInstanceRole]; role != string(benchv1.InstanceServer) {
		t.Errorf("the one server's role is %q, want server", role)
	}
	server := ch.ConfigMap().Data[ClickHouseConfigKey]
	for _, s := range []string{"<replica><host>gen4-clickhouse-0.gen4-clickhouse-nodes.perf.svc</host>", `<replica from_env="POD_NAME"/>`,
		"<node><host>gen4-clickhouse-keeper-0.gen4-clickhouse-keeper-nodes.perf.svc</host><port>9181</port></node>"} {
		if !strings.Contains(server, s) {
			t.Errorf("config.d override lacks %s:\n%s", s, server)
		}
	}
}
