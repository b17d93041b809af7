package osb

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

var get = testutil.MetricValue

func TestEveryFixture(t *testing.T) {
	type expect struct {
		verdict results.Verdict
		task    string
		mean    float64
		reason  string
	}
	want := map[string]expect{
		"docs-quickstart-percolator-test-mode-summary.txt":              {results.Succeeded, "index", 3008.97, ""},
		"docs-vectorsearch-train-summary-docs-s-percentiles.txt":        {results.Succeeded, "custom-vector-bulk", 25527, ""},
		"issue332-test-execution-json-op-metrics-TRUNCATED-excerpt.txt": {results.Failed, "", 0, "no OpenSearch Benchmark summary"},
		"issue605-connect-call-failed-cannot-execute-test.txt":          {results.Failed, "", 0, "Cannot connect to host elasticsearch-master:9200"},
	}
	testutil.EachFixture(t, "osb", want, func(t *testing.T, name string, raw []byte, w expect) {
		r := Parser{}.Parse(workloads.ParseInput{Output: raw})
		testutil.CheckVerdict(t, r, w.verdict, w.reason)
		if r.Verdict != w.verdict {
			return
		}
		if w.task != "" {
			if r.Primary != (results.Key{Name: "throughputMean", Operation: w.task}) || get(t, r, "throughputMean", w.task) != w.mean {
				t.Errorf("primary %v = %v, want mean throughput of %s %v", r.Primary, get(t, r, "throughputMean", w.task), w.task, w.mean)
			}
		}
	})
	r := Parser{}.Parse(workloads.ParseInput{Output: testutil.ReadFixture(t, "osb", "docs-vectorsearch-train-summary-docs-s-percentiles.txt")})
	for name, v := range map[string]float64{"latencyP99Millis": 5.56238, "latencyP999Millis": 9.95666, "latencyP9999Millis": 39.7922,
		"serviceTimeP50Millis": 3.43405, "throughputMedian": 213.48, "errorPercent": 0} {
		if got := get(t, r, name, "prod-queries"); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if get(t, r, "segmentCount", "") != 9 {
		t.Error("cluster-level rows not read")
	}
}

// The results file wins over the output: CSV, and test_execution.json.
func TestResultsFiles(t *testing.T) {
	csvFile := "Metric,Task,Value,Unit\nMean Throughput,index-append,12345.6,docs/s\n99th percentile latency,index-append,812.5,ms\nerror rate,index-append,0.5,%\n"
	r := Parser{}.Parse(workloads.ParseInput{Files: map[string][]byte{"osb-results.csv": []byte(csvFile)}})
	if r.Verdict != results.Succeeded || get(t, r, "throughputMean", "index-append") != 12345.6 || get(t, r, "latencyP99Millis", "index-append") != 812.5 {
		t.Errorf("csv: %s %+v", r.Verdict, r.Metrics)
	}
	results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: 0})
	if r.Verdict != results.Invalid {
		t.Error("an error rate above maxErrorPercent must make the measurement Invalid")
	}
	js := `{"results":{"op_metrics":[{"task":"index-append","throughput":{"min":1,"mean":2,"median":2,"max":3,"unit":"docs/s"},
	  "latency":{"50_0":10,"99_9":90,"100_0":100,"mean":11,"unit":"ms"},"service_time":{"50_0":9},"error_rate":0.01}]}}`
	r = Parser{}.Parse(workloads.ParseInput{Files: map[string][]byte{"test_execution.json": []byte(js)}})
	if get(t, r, "throughputMean", "index-append") != 2 || get(t, r, "latencyP999Millis", "index-append") != 90 || get(t, r, "errorPercent", "index-append") != 1 {
		t.Errorf("json: %+v", r.Metrics)
	}
}

func TestCommandAndJob(t *testing.T) {
	spec := &benchv1.WorkloadSpec{OSB: &benchv1.OSBWorkload{Name: "http_logs", TestProcedure: "append-no-conflicts-index-only",
		IncludeTasks: []string{"index-append"}, WorkloadParams: map[string]string{"number_of_replicas": "0"}, Clients: []int32{8, 16},
		CorpusClaim: "osb-corpus"}}
	ep := pod.Endpoint{Host: "run-os.perf.svc", Port: 9200, TLS: true,
		Username: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "os"}, Key: "username"},
		Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "os"}, Key: "password"}}
	steps := OSB{}.Steps(spec)
	inv := OSB{}.Run(spec, ep, steps[1])
	got := strings.Join(inv.Command, " ")
	want := "opensearch-benchmark execute-test --pipeline=benchmark-only --target-hosts=run-os.perf.svc:9200 --workload=http_logs " +
		"--results-format=markdown --results-file=/dbperf/out/osb-results.md --kill-running-processes --test-procedure=append-no-conflicts-index-only " +
		"--include-tasks=index-append --workload-params=bulk_indexing_clients:16,number_of_replicas:0 " +
		"--client-options=basic_auth_password:'$(DBPERF_TARGET_PASSWORD)',basic_auth_user:'$(DBPERF_TARGET_USERNAME)',use_ssl:true,verify_certs:false --offline"
	if got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "os", Namespace: "perf", UID: "u"}, Spec: benchv1.BenchmarkRunSpec{Workload: *spec}}
	pod := specs.Job(specs.JobParams{Run: run, Name: "os-s1-r1", Role: benchv1.RoleLoadgen, Workload: "osb", Invocation: inv, Image: "i", RunnerImage: "r"}).Spec.Template.Spec
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.MountPath == "/tmp/.benchmark/benchmarks" {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("corpus claim not mounted: %+v", pod.Containers[0].VolumeMounts)
	}
	bad := &benchv1.WorkloadSpec{OSB: &benchv1.OSBWorkload{ClientOptions: map[string]string{"use_ssl": "false"}, WorkloadParams: map[string]string{"a": "b,c"}}}
	errs := OSB{}.Validate(bad, field.NewPath("spec", "workload")).ToAggregate().Error()
	if !strings.Contains(errs, "clientOptions[use_ssl]") || !strings.Contains(errs, "workloadParams[a]") {
		t.Errorf("validation: %s", errs)
	}
}

// OSB asks the runner for the nodes stats of its OpenSearch target.
func TestServerStatisticsAreOpenSearchs(t *testing.T) {
	s := workloads.SpeaksOf(OSB{}, &benchv1.WorkloadSpec{OSB: &benchv1.OSBWorkload{}})
	if s != (workloads.Speaks{Protocol: pod.ProtocolOpenSearch}) || !s.Protocol.HasStatistics() {
		t.Errorf("Speaks = %+v; want %q with statistics, no database", s, pod.ProtocolOpenSearch)
	}
}
