package specs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads/hammerdb"
	"github.com/dbperf-io/dbperf-operator/workloads/k6"
)

func serverRun(target benchv1.TargetSpec) *benchv1.BenchmarkRun {
	target.Placement = benchv1.Placement{NodeSelector: map[string]string{"pool": "standard-v4a"}}
	return &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "gen4", Namespace: "perf", UID: "3c59dc04-8f6d-4b2a-9d1e-0c2b7a6e5f41"},
		Spec: benchv1.BenchmarkRunSpec{Target: target}}
}

// The provisioned targets as the API server receives them.
func TestServerTargetsGolden(t *testing.T) {
	storage := &benchv1.StorageSpec{Size: resource.MustParse("100Gi"), StorageClassName: ptr.To("premium-rwo")}
	limits := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")}}
	for name, s := range map[string]Server{
		"mysql-tls": MySQLServer(serverRun(benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{
			ServerTarget: benchv1.ServerTarget{Args: []string{"--innodb-buffer-pool-size=24G"}, Storage: storage, Resources: limits},
			TLS:          &benchv1.ServerTLS{Enabled: true, RequireClientCertificates: true}}})),
		"opensearch-3-nodes": OpenSearchServer(serverRun(benchv1.TargetSpec{OpenSearch: &benchv1.OpenSearchTarget{
			ServerTarget: benchv1.ServerTarget{Storage: storage, Resources: limits}, Nodes: 3, Security: true, HeapSize: "16g"}})),
		"mongodb": MongoDBServer(serverRun(benchv1.TargetSpec{MongoDB: &benchv1.MongoDBTarget{ServerTarget: benchv1.ServerTarget{Resources: limits}}})),
	} {
		sts := s.StatefulSet()
		golden(t, name+"-statefulset", sts)
		golden(t, name+"-services", s.Services())
		checkRestricted(t, name, &sts.Spec.Template.ObjectMeta, &sts.Spec.Template.Spec)
	}
}

// A measurement of four k6 generators: an Indexed Job held at the start
// barrier, each runner told its index and the generator count.
func TestParallelJobGolden(t *testing.T) {
	run := serverRun(benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "kv.example", Port: 6379}})
	run.Spec.Workload = benchv1.WorkloadSpec{Parallelism: 4, K6: &benchv1.K6Workload{Script: "export default function () {}", VUs: []int32{400}}}
	w := k6.K6{}
	ep := pod.Endpoint{Host: "kv.example", Port: 6379}
	job := Job(JobParams{Run: run, Name: MeasureJobName(run, 0, 1), Role: benchv1.RoleLoadgen, Workload: w.Name(), Repetition: 1,
		Invocation: w.Run(&run.Spec.Workload, ep, w.Steps(&run.Spec.Workload)[0]), Image: w.DefaultImage(), RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:v0.1.0",
		Endpoint: ep, ActiveDeadlineSeconds: ptr.To[int64](3600)})
	golden(t, "k6-parallel-job", job)
	checkRestricted(t, "k6 job", &job.Spec.Template.ObjectMeta, &job.Spec.Template.Spec)
}

// HammerDB over two-way TLS: the CA and client certificate projected into
// one directory, the time-profile file collected.
func TestHammerDBJobGolden(t *testing.T) {
	run := serverRun(benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Enabled: true, RequireClientCertificates: true}}})
	run.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: "mysql", Warehouses: 1, VirtualUsers: []int32{20, 40}}}
	w := hammerdb.HammerDB{}
	creds := corev1.LocalObjectReference{Name: CredentialsSecretName(run, "mysql")}
	ep := pod.Endpoint{Host: "gen4-mysql.perf.svc", Port: 3306, TLS: true, CASecret: TLSSecretName(run, "mysql"), ClientCertSecret: ClientTLSSecretName(run, "mysql"),
		Username: &corev1.SecretKeySelector{LocalObjectReference: creds, Key: "username"}, Password: &corev1.SecretKeySelector{LocalObjectReference: creds, Key: "password"}}
	job := Job(JobParams{Run: run, Name: MeasureJobName(run, 1, 1), Role: benchv1.RoleLoadgen, Workload: w.Name(), Step: 1, Repetition: 1,
		Invocation: w.Run(&run.Spec.Workload, ep, w.Steps(&run.Spec.Workload)[1]), Image: w.DefaultImage(), RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:v0.1.0",
		FilesConfigMap: FilesConfigMapName(run), Endpoint: ep, AvoidPods: ServerPodLabels(run)})
	golden(t, "hammerdb-mysql-tls-job", job)
	checkRestricted(t, "hammerdb job", &job.Spec.Template.ObjectMeta, &job.Spec.Template.Spec)
}

// checkRestricted evaluates a pod against the restricted Pod Security
// Standard with the admission plugin's own library: targets and workload
// pods run in namespaces that enforce it.
func checkRestricted(t *testing.T, what string, meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range ev.EvaluatePod(lv, meta, spec) {
		if !r.Allowed {
			t.Errorf("%s violates restricted: %s: %s", what, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}
