package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
)

// The harness's nodes for the published samples. The database pools have a
// node without a zone (the pools of the single-node samples) and, for
// standard-v4a, one node in each of two zones (the replica-across-zones
// sample); pool loadgen has two nodes in zone-a (the harness puts the two
// load generators of a Job on both) and one in zone-b.
var (
	publishedDBNodes = map[string]map[string]string{
		"v3-node":    {"pool": "standard-v3"},
		"v4a-node":   {"pool": "standard-v4a"},
		"v4a-zone-a": {"pool": "standard-v4a", benchv1.ZoneLabel: "zone-a"},
		"v4a-zone-b": {"pool": "standard-v4a", benchv1.ZoneLabel: "zone-b"},
	}
	publishedLoadgenNodes = []string{"loadgen-1", "loadgen-2", "loadgen-zone-b"}
)

func publishedNodes(h *harness) {
	h.LoadgenNode() // loadgen-1, in zone-a
	h.Node("loadgen-2", map[string]string{"pool": "loadgen", benchv1.ZoneLabel: "zone-a"})
	h.Node("loadgen-zone-b", map[string]string{"pool": "loadgen", benchv1.ZoneLabel: "zone-b"})
	for n, l := range publishedDBNodes {
		h.Node(n, l)
	}
}

// placePods plays the scheduler for pods of spec among the named nodes:
// those its required node affinity and node selector admit, by name.
func placePods(ctx context.Context, t *testing.T, names []string, spec *corev1.PodSpec) []string {
	t.Helper()
	req := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: *spec})
	var out []string
	for _, name := range slices.Sorted(slices.Values(names)) {
		var n corev1.Node
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			t.Fatal(err)
		}
		if ok, _ := req.Match(&n); ok {
			out = append(out, name)
		}
	}
	return out
}

// playCNPG plays CloudNativePG and the scheduler for a Cluster: it places
// the instance pods on the nodes the Cluster's affinity admits (the first
// by name, each further one in another domain of the anti-affinity's
// topology key), the first instance the primary, and reports the cluster
// healthy; and it carries out a switchover the operator asks for
// (status.targetPrimary) by moving the primary's role to that instance.
func playCNPG(ctx context.Context, t *testing.T, h *harness, cluster *unstructured.Unstructured) {
	t.Helper()
	name := cluster.GetName()
	current, _, _ := unstructured.NestedString(cluster.Object, "status", "currentPrimary")
	target, _, _ := unstructured.NestedString(cluster.Object, "status", "targetPrimary")
	if current == "" {
		n, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "instances")
		nodes := cnpgNodes(ctx, t, cluster, int(n))
		inherited, _, _ := unstructured.NestedStringMap(cluster.Object, "spec", "inheritedMetadata", "labels")
		for i, node := range nodes {
			role := "replica"
			if i == 0 {
				role = "primary"
			}
			l := map[string]string{specs.CNPGInstanceRoleLabel: role}
			maps.Copy(l, inherited)
			maps.Copy(l, specs.CNPGInstancePods(name))
			h.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i+1), Labels: l},
				Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:17"}}}})
		}
		setCNPGStatus(ctx, t, cluster, name+"-1", int64(len(nodes)))
		return
	}
	if target == "" || target == current {
		return
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(h.NS), client.MatchingLabels(specs.CNPGInstancePods(name))); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		p.Labels[specs.CNPGInstanceRoleLabel] = map[bool]string{true: "primary", false: "replica"}[p.Name == target]
		if err := k8s.Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	ready, _, _ := unstructured.NestedInt64(cluster.Object, "status", "readyInstances")
	setCNPGStatus(ctx, t, cluster, target, ready)
}

// cnpgNodes are the nodes of a Cluster's n instances.
func cnpgNodes(ctx context.Context, t *testing.T, cluster *unstructured.Unstructured, n int) []string {
	t.Helper()
	aff, _, _ := unstructured.NestedMap(cluster.Object, "spec", "affinity")
	spec := &corev1.PodSpec{}
	if sel, ok, _ := unstructured.NestedStringMap(aff, "nodeSelector"); ok {
		spec.NodeSelector = sel
	}
	if na, ok, _ := unstructured.NestedMap(aff, "nodeAffinity"); ok {
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(na, spec.Affinity.NodeAffinity); err != nil {
			t.Fatal(err)
		}
	}
	key, _, _ := unstructured.NestedString(aff, "topologyKey")
	domain := func(node string) string {
		if key == "" || key == corev1.LabelHostname {
			return node
		}
		return publishedDBNodes[node][key]
	}
	var out []string
	used := map[string]bool{}
	for _, node := range placePods(ctx, t, slices.Collect(maps.Keys(publishedDBNodes)), spec) {
		if d := domain(node); len(out) < n && !used[d] {
			out, used[d] = append(out, node), true
		}
	}
	if len(out) < n {
		t.Fatalf("cluster %s: %d instances, only nodes %v can take them (affinity %v)", cluster.GetName(), n, out, aff)
	}
	return out
}

// setCNPGStatus reports the cluster healthy with its primary, as a merge
// patch: the operator patches the status too (a switchover it asks for).
func setCNPGStatus(ctx context.Context, t *testing.T, cluster *unstructured.Unstructured, primary string, ready int64) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"phase": specs.CNPGHealthyPhase, "readyInstances": ready, "currentPrimary": primary, "targetPrimary": primary}})
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Status().Patch(ctx, cluster, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// checkServerSet checks one of a run's StatefulSets against the sample: its
// pods' containers (count, arguments, whole CPUs) and, for a replicas set,
// its command line. It returns the set's shape, role×pods.
func checkServerSet(t *testing.T, run *benchv1.BenchmarkRun, sts *appsv1.StatefulSet, w publishedComparison) string {
	t.Helper()
	spec := sts.Spec.Template.Spec
	role := sts.Spec.Template.Labels[benchv1.LabelInstanceRole]
	if w.containers != 0 && len(spec.Containers) != w.containers {
		t.Errorf("run %s: StatefulSet %s has %d containers per pod, want %d", run.Name, sts.Name, len(spec.Containers), w.containers)
	}
	for _, c := range spec.Containers {
		args := strings.Join(c.Args, " ")
		for _, a := range w.serverArgs {
			if !strings.Contains(args, a) {
				t.Errorf("run %s: container %s of %s: server args %q lack %q", run.Name, c.Name, sts.Name, args, a)
			}
		}
		if w.serverCPU != "" {
			req, limit := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceCPU]
			if req.String() != w.serverCPU || limit.String() != w.serverCPU {
				t.Errorf("run %s: container %s of %s: cpu request %s, limit %s, want both %s (whole cores of its own)",
					run.Name, c.Name, sts.Name, req.String(), limit.String(), w.serverCPU)
			}
		}
	}
	if role == string(benchv1.InstanceReplica) {
		line := strings.Join(append(append([]string{}, spec.Containers[0].Command...), spec.Containers[0].Args...), " ")
		for _, a := range w.replicaArgs {
			if !strings.Contains(line, a) {
				t.Errorf("run %s: replicas %s lack %q: %s", run.Name, sts.Name, a, line)
			}
		}
		if w.pool != "" && spec.NodeSelector["pool"] != w.pool {
			t.Errorf("run %s: replicas %s on pool %q, the sample's replicaPlacement says %s", run.Name, sts.Name, spec.NodeSelector["pool"], w.pool)
		}
		primary := labels.Set(specs.ServerPodLabels(run))
		primary[benchv1.LabelInstanceRole] = string(benchv1.InstancePrimary)
		if !offPrimaryNode(spec.Affinity, primary) {
			t.Errorf("run %s: nothing keeps replicas %s off the primary's node: affinity %+v", run.Name, sts.Name, spec.Affinity)
		}
	}
	return fmt.Sprintf("%s×%d", role, ptrValue(sts.Spec.Replicas))
}

// offPrimaryNode says whether a pod's required anti-affinity keeps it off
// the nodes of pods labelled primary.
func offPrimaryNode(a *corev1.Affinity, primary labels.Set) bool {
	if a == nil || a.PodAntiAffinity == nil {
		return false
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err == nil && term.TopologyKey == corev1.LabelHostname && sel.Matches(primary) {
			return true
		}
	}
	return false
}

// completeClusterJob plays the Job controller for the Job that joins a
// Valkey cluster's servers, after checking it joins every server: it
// succeeded, as the Job controller reports it.
func completeClusterJob(ctx context.Context, t *testing.T, run *benchv1.BenchmarkRun, w publishedComparison) {
	t.Helper()
	if run.Spec.Target.Valkey == nil || run.Spec.Target.Valkey.Cluster == nil {
		return
	}
	vc := specs.NewValkeyCluster(run)
	var job batchv1.Job
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: vc.JobName()}, &job); err != nil {
		return // made once the servers are ready
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete {
			return
		}
	}
	cmd := job.Spec.Template.Spec.Containers[0].Command
	if i := slices.Index(cmd, "create-cluster"); i < 0 || len(cmd)-i-1 != w.clusterServers {
		t.Errorf("run %s: the cluster's Job joins %d servers, want %d: %v", run.Name, len(cmd)-i-1, w.clusterServers, cmd)
	}
	if got := job.Spec.Template.Spec.NodeSelector["pool"]; got != run.Spec.Target.Placement.NodeSelector["pool"] {
		t.Errorf("run %s: the cluster's Job on pool %q", run.Name, got)
	}
	now := metav1.Now()
	job.Status.StartTime, job.Status.CompletionTime, job.Status.Succeeded = &now, &now, 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if err := k8s.Status().Update(ctx, &job); err != nil {
		t.Fatal(err)
	}
}

// checkMounts plays the part of the kubelet that mounts ConfigMaps: every
// ConfigMap a Job's pod mounts exists, with the keys it names.
func checkMounts(ctx context.Context, t *testing.T, j *batchv1.Job) {
	t.Helper()
	for _, v := range j.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: j.Namespace, Name: v.ConfigMap.Name}, &cm); err != nil {
			t.Errorf("job %s mounts ConfigMap %s: %v", j.Name, v.ConfigMap.Name, err)
			continue
		}
		for _, it := range v.ConfigMap.Items {
			if cm.Data[it.Key] == "" {
				t.Errorf("job %s mounts key %s of ConfigMap %s, which has %v", j.Name, it.Key, cm.Name, kit.Keys(cm.Data))
			}
		}
	}
}

// answerJob plays the kubelet for a Job of one pod on node with the tool's
// recorded output; the query benchmark's report is a file the tool writes
// (query.ResultFileName), which the real runner reads.
func answerJob(t *testing.T, h *harness, j *batchv1.Job, node, tool, recorded string) {
	t.Helper()
	if tool != "query-bench" || j.Labels[benchv1.LabelRole] == benchv1.RolePrepare {
		h.Replay(j, node, tool, recorded)
		return
	}
	out := filepath.Join(t.TempDir(), query.ResultFileName)
	h.ReplayWith(j, node, tool, runner.Options{Command: []string{"cp", recorded, out}, ResultFiles: []string{out}})
}

// parallelKubelet plays the Job controller and the kubelets for Jobs of
// several load generators (an Indexed Job): each generator's pod starts,
// on the nodes given in turn, and waits at the start barrier; once the
// operator has opened it on every pod, each ends with the recorded output.
type parallelKubelet map[string][]*corev1.Pod

// step advances a Job one stage and says whether it is answered.
func (k parallelKubelet) step(ctx context.Context, t *testing.T, h *harness, j *batchv1.Job, nodes []string, tool, recorded string) bool {
	t.Helper()
	pods, started := k[j.Name]
	if !started {
		for i := range int(ptrValue(j.Spec.Completions)) {
			pods = append(pods, h.Pod(j, i, nodes[i%len(nodes)], kit.Running()))
		}
		k[j.Name] = pods
		return false
	}
	for _, p := range pods {
		var cur corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
			t.Fatal(err)
		}
		if cur.Annotations[specs.AnnotationStartAt] == "" {
			return false
		}
	}
	for _, p := range pods {
		h.End(p, tool, runner.Options{Command: []string{"cat", recorded}})
	}
	return true
}

// fixturePath is a recorded output: in test/fixtures/<tool>, or, with
// the "testdata:" prefix, in the tool's package testdata.
func fixturePath(t *testing.T, tool, name string) string {
	if n, ok := strings.CutPrefix(name, "testdata:"); ok {
		dir := map[string]string{"query-bench": "query"}[tool]
		if dir == "" {
			dir = tool
		}
		return filepath.Join(testutil.RepoRoot(), "workloads", dir, "testdata", n)
	}
	return kit.Fixture(t, tool, name)
}

// checkTopology checks a run of a sample with a topology of its own: its
// target's instances and load generators in status.environment (role and
// zone), its volumes, and the shape of its StatefulSets.
func checkTopology(t *testing.T, run *benchv1.BenchmarkRun, w publishedComparison, shapes map[string][]string) {
	t.Helper()
	variant := run.Labels[benchv1.LabelVariant]
	env := run.Status.Environment
	if want, ok := w.instances[variant]; ok {
		var got []string
		for _, in := range env.Instances {
			if in.Role == benchv1.InstanceLoadGenerator {
				if in.Zone != w.loadgenZone {
					t.Errorf("run %s: load generator %s in zone %q, want %s", run.Name, in.Name, in.Zone, w.loadgenZone)
				}
				continue
			}
			got = append(got, string(in.Role)+"@"+in.Zone)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("run %s: target instances %v, want %v (environment %+v)", run.Name, got, want, env.Instances)
		}
	}
	if want, ok := w.volumes[variant]; ok {
		var got []string
		for _, v := range env.Volumes {
			s := fmt.Sprintf("%s %s %s", v.Purpose, v.Size, v.StorageClassName)
			if v.Temporary {
				s += " temporary"
			}
			got = append(got, s)
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Errorf("run %s: volumes %q, want %q", run.Name, got, want)
		}
	}
	if want, ok := w.sets[variant]; ok {
		got := slices.Sorted(slices.Values(shapes[run.Name]))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("run %s: StatefulSets %v, want %v", run.Name, got, want)
		}
	}
}

// checkQueryRows checks that a query benchmark's report compares every
// query of the recorded report (its cold and hot times, its failed runs)
// with Δ %, a confidence interval and a verdict. The interval of a figure
// that had the same value in every run (every run answered with one
// recording) is undefined (the operations' Welch test on no variance):
// the verdict must then say so.
func checkQueryRows(t *testing.T, cmpName string, report *corev1.ConfigMap, recorded string) {
	t.Helper()
	raw, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	var rec query.Report
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	// Δ % and the interval's ends are null in report.json when undefined.
	type row struct {
		Metric, Operation, Verdict, Reason        string
		DeltaPercent, CILowPercent, CIHighPercent *float64
	}
	var reports []struct{ Rows []row }
	js := []byte(report.Data[compare.ReportJSONKey])
	if len(js) == 0 {
		if js, err = results.Gunzip(report.BinaryData[compare.ReportJSONKey+".gz"]); err != nil {
			t.Fatalf("comparison %s: %v", cmpName, err)
		}
	}
	if err := json.Unmarshal(js, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("comparison %s: %d reports, %v", cmpName, len(reports), err)
	}
	rows := map[string]row{}
	for _, r := range reports[0].Rows {
		rows[r.Metric+"["+r.Operation+"]"] = r
	}
	for _, q := range rec.Queries {
		ok := 0
		for _, run := range q.Runs {
			if !run.Failed() {
				ok++
			}
		}
		var want []string
		switch ok {
		case 0:
			want = []string{query.MetricFailedRuns}
		case 1:
			want = []string{query.MetricCold}
		default:
			want = []string{query.MetricCold, query.MetricHot}
		}
		if ok < len(q.Runs) && ok > 0 {
			want = append(want, query.MetricFailedRuns)
		}
		for _, m := range want {
			r, found := rows[m+"["+q.Name+"]"]
			switch {
			case !found:
				t.Errorf("comparison %s: no row for %s of query %s among %v", cmpName, m, q.Name, kit.Keys(rowNames(rows)))
			case r.DeltaPercent == nil || r.Verdict == "" || (r.CILowPercent == nil || r.CIHighPercent == nil) && !strings.Contains(r.Reason, "the same value"):
				t.Errorf("comparison %s: row %s of query %s: Δ %v %%, CI [%v, %v], verdict %q (%s)", cmpName, m, q.Name,
					deref(r.DeltaPercent), deref(r.CILowPercent), deref(r.CIHighPercent), r.Verdict, r.Reason)
			}
		}
		if md := report.Data["report.md"]; md != "" && !strings.Contains(md, q.Name) {
			t.Errorf("comparison %s: report.md does not name query %s", cmpName, q.Name)
		}
	}
}

// deref shows an undefined figure as NaN.
func deref(f *float64) float64 {
	if f == nil {
		return math.NaN()
	}
	return *f
}

func rowNames[R any](rows map[string]R) map[string]string {
	out := map[string]string{}
	for k := range rows {
		out[k] = ""
	}
	return out
}

// Fragments of CloudNativePG Cluster specs the samples ask for.
const (
	pgSynchronous = `"synchronous":{"dataDurability":"required","method":"any","number":1}`
	pgWAL         = `"walStorage":{"resizeInUseVolumes":true,"size":"20Gi","storageClass":"premium-ssd"}`
)

// queryPrepare is what the query benchmark's prepare step prints; only its
// exit code counts.
func queryPrepare(t *testing.T) string {
	return kit.WriteTemp(t, "ran the prepare script\nloaded the table\n")
}

// A few statements shaped as ClickBench's clickhouse/queries.sql (one
// query a line, no names) and create.sql.
const (
	clickbenchQueries = "SELECT COUNT(*) FROM hits;\n" +
		"SELECT COUNT(*) FROM hits WHERE AdvEngineID <> 0;\n" +
		"SELECT SUM(AdvEngineID), COUNT(*), AVG(ResolutionWidth) FROM hits;\n"
	clickbenchCreate = "CREATE TABLE hits\n(\n    WatchID BIGINT NOT NULL,\n    AdvEngineID SMALLINT NOT NULL,\n" +
		"    ResolutionWidth SMALLINT NOT NULL,\n    EventDate Date NOT NULL,\n    CounterID INTEGER NOT NULL\n)\n" +
		"ENGINE = MergeTree\nORDER BY (CounterID, EventDate, WatchID);\n"
)

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
