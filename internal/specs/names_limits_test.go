package specs

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// A run's name is any DNS-1123 subdomain: up to 253 characters, dots, a
// digit first. Every name function gives each of its children a name its
// kind accepts (a Service a DNS-1035 label, a StatefulSet one short enough
// for its pods' revision label, a CloudNativePG Cluster one of at most 50
// characters, a Job one that is its pods' job-name label and, with several
// load generators, their hostnames), and two runs
// whose names agree in everything a cut or a dot keeps get distinct children.
func TestEveryChildNameOfEveryRunName(t *testing.T) {
	long := strings.Repeat("r", MaxObjectNameLength)
	dotted := strings.Repeat("a.", 126) + "z"
	names := []string{"a", "v1.2", "v1-2", "1run", "0", long, long[:252] + "s", dotted, "9" + long[:252], "a-b." + strings.Repeat("c", 200)}
	byKind := map[string]map[string]string{} // kind → child name → run
	for i, name := range names {
		run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf", UID: types.UID(fmt.Sprintf("u%d", i))},
			Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{Cluster: &benchv1.ValkeyCluster{Shards: 3, InstancesPerNode: 1}}, MySQL: &benchv1.MySQLTarget{Replicas: 1},
				MongoDB: &benchv1.MongoDBTarget{}, OpenSearch: &benchv1.OpenSearchTarget{Nodes: 3}, ClickHouse: &benchv1.ClickHouseTarget{Replicas: 2, Keeper: &benchv1.ClickHouseKeeper{Replicas: 1}}}}}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Fatalf("test name %q: %v", name, errs)
		}
		children := map[string][]string{
			"Job":       {PrepareJobName(run), MeasureJobName(run, 0, 1), MeasureJobName(run, 255, 100), NewValkeyCluster(run).JobName()},
			"ConfigMap": {FilesConfigMapName(run), ResultsConfigMapName(run), ClickHouseTargetFor(run).ConfigMapName()},
			"Secret": {CredentialsSecretName(run, ValkeyKind), TLSSecretName(run, MySQLKind), ClientTLSSecretName(run, MySQLKind),
				CredentialsSecretName(run, OpenSearchKind)},
			"Cluster": {PostgresClusterName(run)},
		}
		parallel := run.DeepCopy()
		parallel.Spec.Workload.Parallelism = 64
		// The hostname of the last pod of an Indexed Job.
		children["IndexedJobPod"] = []string{MeasureJobName(parallel, 0, 1) + "-63", MeasureJobName(parallel, 255, 100) + "-63"}
		servers := []Server{ValkeyServer(run), MySQLServer(run), MongoDBServer(run), OpenSearchServer(run)}
		servers = append(servers, ClickHouseTargetFor(run).Servers()...)
		for _, s := range servers {
			children["StatefulSet"] = append(children["StatefulSet"], s.StatefulSet().Name)
			for _, svc := range s.Services() {
				children["Service"] = append(children["Service"], svc.Name)
			}
		}
		children["StatefulSet"] = append(children["StatefulSet"], ValkeyReplicasName(run), MySQLReplicasName(run))
		for kind, list := range children {
			if byKind[kind] == nil {
				byKind[kind] = map[string]string{}
			}
			for _, child := range list {
				if errs := nameRule(kind, child); len(errs) > 0 {
					t.Errorf("run %q: %s %q: %v", name, kind, child, errs)
				}
				if other, ok := byKind[kind][child]; ok && other != name {
					t.Errorf("runs %q and %q share the %s %q", other, name, kind, child)
				}
				byKind[kind][child] = name
			}
		}
	}
	// A name that needs no change keeps the readable form it always had.
	plain := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "u"}}
	if got := ServerName(plain, ValkeyKind); got != "nightly-valkey" {
		t.Errorf("ServerName of nightly: %q", got)
	}
	if got := PostgresClusterName(plain); got != "nightly-pg" {
		t.Errorf("PostgresClusterName of nightly: %q", got)
	}
}

// nameRule checks a child's name against what its kind demands.
func nameRule(kind, name string) []string {
	var errs []string
	limit := map[string]int{"Job": MaxNameLength, "ConfigMap": MaxObjectNameLength, "Secret": MaxObjectNameLength,
		"Cluster": MaxClusterNameLength, "IndexedJobPod": MaxNameLength, "StatefulSet": MaxServerNameLength, "Service": MaxNameLength}[kind]
	if len(name) > limit {
		errs = append(errs, fmt.Sprintf("%d characters, over %d", len(name), limit))
	}
	switch kind {
	case "Service", "Cluster", "StatefulSet": // StatefulSet: its pods' names are their hostnames
		errs = append(errs, validation.IsDNS1035Label(name)...)
	case "IndexedJobPod":
		errs = append(errs, validation.IsDNS1123Label(name)...)
	case "Job": // its name is its pods' job-name label
		errs = append(errs, validation.IsDNS1123Subdomain(name)...)
		errs = append(errs, validation.IsValidLabelValue(name)...)
	default:
		errs = append(errs, validation.IsDNS1123Subdomain(name)...)
	}
	return errs
}

// FuzzChildNames: for any run name the API server accepts, every child name
// is valid for its kind. `go test -fuzz FuzzChildNames ./internal/specs`
// explores further; plain `go test` runs the seeds.
func FuzzChildNames(f *testing.F) {
	for _, s := range []string{"a", "v1.2", "1run", strings.Repeat("r", 253), strings.Repeat("a.", 126) + "z", "a-b.c-d"} {
		f.Add(s, "u1")
	}
	f.Fuzz(func(t *testing.T, name, uid string) {
		if len(validation.IsDNS1123Subdomain(name)) > 0 {
			return // the API server refuses the run
		}
		run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)},
			Spec: benchv1.BenchmarkRunSpec{Workload: benchv1.WorkloadSpec{Parallelism: 64}}}
		for kind, child := range map[string]string{
			"Cluster": PostgresClusterName(run), "StatefulSet": ServerName(run, ValkeyKind+"-replicas"),
			"Job": PrepareJobName(run), "IndexedJobPod": MeasureJobName(run, 255, 100) + "-63",
			"ConfigMap": ResultsConfigMapName(run), "Secret": ClientTLSSecretName(run, MySQLKind),
		} {
			if errs := nameRule(kind, child); len(errs) > 0 {
				t.Errorf("run %q: %s %q: %v", name, kind, child, errs)
			}
		}
	})
}
