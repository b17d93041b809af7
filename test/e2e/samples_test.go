package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/smoke"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// sampleOutcome is what one object of a sample must do on the embedded
// cluster, in its smoke form.
type sampleOutcome struct {
	// fails, when set, is what the reason of an expected failure says: a
	// sample that cannot run here must say why.
	fails string
	// skip says why the object is not applied at all.
	skip string
}

// sampleOutcomes are the exceptions; every other object of every sample
// must end Succeeded with its headline (a run's primary metric, a
// comparison's results, a schedule's first run).
var sampleOutcomes = map[string]sampleOutcome{
	"osb-opensearch-3nodes.yaml/osb-http-logs-3nodes":                    {fails: "opensearch-benchmark"},
	"osb-http-logs-external.yaml/osb-http-logs-index":                    {fails: "opensearch-benchmark"},
	"published/osb-http-logs-index-append.yaml/osb-index-append-1node":   {fails: "opensearch-benchmark"},
	"published/osb-http-logs-index-append.yaml/osb-index-append-3nodes":  {fails: "opensearch-benchmark"},
	"published/osb-http-logs-index-append.yaml/osb-index-append-managed": {fails: "opensearch-benchmark"},
	"published/hammerdb-tprocc-mysql-100wh-tls.yaml/tprocc-managed-mysql-100wh-tls": {
		skip: "two managed MySQL endpoints with a 100-warehouse schema built beforehand (it skips the prepare step)"},
	"published/valkey-cluster-28x2.yaml/valkey-cluster-28x2": {skip: "a Valkey Cluster's members are not played here (test/topology runs one for real)"},
	"published/clickhouse-clickbench-pools.yaml/clickhouse-clickbench": {
		skip: "ClickBench's hits dataset from datasets.clickhouse.com, which this machine cannot reach (the SSB sample loads ssbgen's data)"},
}

// sampleConfigMaps are the ConfigMaps a sample names that its users create
// (docs/published-comparisons.md), by sample file.
var sampleConfigMaps = map[string]map[string]map[string]string{
	"published/clickhouse-ssb-pools.yaml": {"ssb-clickhouse": {
		"queries.sql": readRepo("workloads/query/examples/ssb-clickhouse.sql"),
		"schema.sql":  readRepo("workloads/query/examples/ssb-clickhouse-schema.sql"),
	}},
}

// sampleClaims are the PersistentVolumeClaims a sample names that its users
// create (the corpus OSB reads offline), by sample file.
var sampleClaims = map[string][]string{
	"osb-http-logs-external.yaml": {"osb-corpus"},
}

func readRepo(path string) string {
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), path))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sampleFilesAtOnce bounds the sample files in flight.
const sampleFilesAtOnce = 5

// TestEverySampleRunsInItsSmokeForm applies every file of config/samples,
// config/samples/getting-started and config/samples/published in its smoke form (kubectl dbperf try: the
// tools' workloads shortened, one repetition and one run per variant) to
// the embedded cluster with local servers playing the targets the operator
// provisions and the external endpoints (PostgreSQL, Redis, a MongoDB-wire
// server), and checks that each ends Succeeded with its headline, or, for
// what cannot run here (OpenSearch), fails saying so. `make samples` runs
// it (DBPERF_SAMPLES=1, or a regular expression naming the files); it
// prints every sample with its outcome and time.
func TestEverySampleRunsInItsSmokeForm(t *testing.T) {
	if os.Getenv("DBPERF_SAMPLES") == "" {
		t.Skip("make samples runs it (DBPERF_SAMPLES=1): every sample in its smoke form, about ten minutes")
	}
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	cnpg := testutil.NeedEnv(t, "CNPG_CRD_DIR")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	pg := testutil.StartPostgres(t)
	redis := testutil.StartRedis(t)
	ferret, err := localdb.StartFerretDB(executor.FerretDBBin(), "ycsb", "change-me")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ferret.Stop)
	work, logf := workDir(t, "dbperf-e2e-samples-")
	bins := t.TempDir()
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("e2e-samples-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart: filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), Manager: build(t, bins, "./cmd/manager", "manager"),
		Runner: build(t, bins, "./cmd/runner", "dbperf-runner"), CNPGCRDs: cnpg, PlayServers: true,
		HelmSets: []string{"disturbances.enabled=true"}, // the disturbances' samples
		Log:      logf, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	k, err := client.New(stack.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	local := localEndpoints{pg: pg, redisPort: redis.Port, mongoPort: ferret.Port,
		ssbURL:       fmt.Sprintf("http://127.0.0.1:%d/lineorder_flat.csv.gz", serveSSBFlat(t)),
		nodeExporter: testutil.StartNodeExporter(t)}

	// DBPERF_SAMPLES names the files to try (a regular expression over
	// their paths under config/samples), or 1 for every file.
	only := regexp.MustCompile(".")
	if v := os.Getenv("DBPERF_SAMPLES"); v != "1" {
		only = regexp.MustCompile(v)
	}
	var files0 []string
	for _, dir := range []string{"config/samples", "config/samples/getting-started", "config/samples/published"} {
		fs, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(), dir, "*.yaml"))
		for _, f := range fs {
			if filepath.Base(f) != "kustomization.yaml" && only.MatchString(f) {
				files0 = append(files0, f)
			}
		}
	}
	type applied struct {
		key, ns, kind, name string
		want                sampleOutcome
		start               time.Time
	}
	// applyFile applies one file's smoke form and returns its objects to
	// watch.
	applyFile := func(f string) []applied {
		key := strings.TrimPrefix(strings.TrimPrefix(f, filepath.Join(testutil.RepoRoot(), "config", "samples")), "/")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := smoke.ShrinkYAML(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		ns := "s-" + strings.NewReplacer("/", "-", ".yaml", "", "_", "-").Replace(key)
		if len(ns) > 63 {
			ns = ns[:63]
		}
		if out, err := stack.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), "apply", "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for name, data := range sampleConfigMaps[key] {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
			if err := k.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range sampleClaims[key] {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
			if err := k.Create(ctx, pvc); err != nil {
				t.Fatal(err)
			}
		}
		var out []applied
		for _, o := range objs {
			want := sampleOutcomes[key+"/"+o.Name]
			if want.skip != "" {
				t.Logf("%s %s %s: not applied: needs %s", key, o.Kind, o.Name, want.skip)
				continue
			}
			doc, err := local.point(o.YAML)
			if err != nil {
				t.Fatalf("%s %s: %v", key, o.Name, err)
			}
			if out, err := stack.Kubectl(ctx, bytes.NewReader(doc), "apply", "-n", ns, "-f", "-"); err != nil {
				t.Fatalf("%s %s %s: %v\n%s", key, o.Kind, o.Name, err, out)
			}
			if strings.HasPrefix(o.Kind, "Benchmark") {
				out = append(out, applied{key: key, ns: ns, kind: o.Kind, name: o.Name, want: want, start: time.Now()})
			}
		}
		return out
	}

	// At most sampleFilesAtOnce files in flight: a 2-core machine plays
	// every server and tool of them.
	var all, running []applied
	done := map[string]string{}
	took := map[string]time.Duration{}
	next := 0
	testutil.Eventually(t, 40*time.Minute, "every sample's smoke form ended", func() error {
		if gone, err := stack.Manager.Exited(); gone {
			t.Fatalf("the manager exited: %v", err)
		}
		var still []applied
		files := map[string]bool{}
		for _, a := range running {
			id := a.key + "/" + a.name
			outcome, ended, err := sampleEnded(ctx, k, a.ns, a.kind, a.name)
			if err != nil {
				return err
			}
			if !ended {
				still = append(still, a)
				files[a.key] = true
				continue
			}
			done[id], took[id] = outcome, time.Since(a.start)
			t.Logf("%s ended after %.0fs: %s", id, took[id].Seconds(), outcome)
		}
		running = still
		for len(files) < sampleFilesAtOnce && next < len(files0) {
			objs := applyFile(files0[next])
			next++
			all, running = append(all, objs...), append(running, objs...)
			for _, a := range objs {
				files[a.key] = true
			}
		}
		if len(running) > 0 || next < len(files0) {
			var pending []string
			for _, a := range running {
				pending = append(pending, a.key+"/"+a.name)
			}
			return fmt.Errorf("%d files to go; running: %s", len(files0)-next, strings.Join(pending, ", "))
		}
		return nil
	})
	sort.Slice(all, func(i, j int) bool { return all[i].key+all[i].name < all[j].key+all[j].name })
	var table strings.Builder
	for _, a := range all {
		id := a.key + "/" + a.name
		got := done[id]
		fmt.Fprintf(&table, "  %-64s %-20s %6.0fs  %s\n", id, a.kind, took[id].Seconds(), got)
		switch {
		case a.want.fails != "":
			if !strings.HasPrefix(got, "Failed") || !strings.Contains(got, a.want.fails) {
				t.Errorf("%s: %s, want a failure saying %q", id, got, a.want.fails)
			}
		case !strings.HasPrefix(got, "Succeeded"):
			t.Errorf("%s: %s, want Succeeded with its headline", id, got)
		}
	}
	t.Logf("every sample in its smoke form:\n%s", table.String())
	if only.MatchString("ci-script") {
		checkDocsCIScript(ctx, t, stack, build(t, bins, "./cmd/kubectl-dbperf", "kubectl-dbperf"), work)
	}
	for _, a := range all {
		if check := sampleExplains[a.key+"/"+a.name]; check != nil && strings.HasPrefix(done[a.key+"/"+a.name], "Succeeded") {
			rep, err := comparisonReport(ctx, k, a.ns, a.name)
			if err != nil {
				t.Errorf("%s: %v", a.key, err)
				continue
			}
			if err := check(rep); err != nil {
				t.Errorf("%s/%s does not explain itself: %v\n%s", a.key, a.name, err, strings.Join(rep.Summary.Lines, "\n"))
			}
		}
	}
}

// sampleExplains check what a sample's comparison explains (kubectl
// dbperf explain): the index-scans sample names the setting and puts the
// statement first with its plan change; the sequential one judges its
// headline by a look after its two rounds and says so first.
var sampleExplains = map[string]func(*compare.Report) error{
	"comparison-sequential-pools.yaml/pgbench-sequential-v3-vs-v4a": func(r *compare.Report) error {
		for _, row := range r.Rows {
			if r.IsPrimary(row) {
				if sq := row.Sequential; sq == nil || sq.Rounds != 2 || sq.Decision == stats.SequentialContinue || !strings.HasPrefix(row.Reason, "sequential look: ") {
					return fmt.Errorf("the headline's look: %+v (%s)", sq, row.Reason)
				}
			}
		}
		if !strings.Contains(strings.Join(r.Summary.Lines, "\n"), "Sequential (OBrienFleming spending") {
			return fmt.Errorf("the summary does not say where it stopped: %q", r.Summary.Lines)
		}
		return nil
	},
	"comparison-covariate-commit-cnpg.yaml/pgbench-commit-covariate": func(r *compare.Report) error {
		canary := false
		for _, row := range r.Rows {
			if row.Metric == results.CanaryDiskSyncMillis && row.Source == results.SourceCanary && row.Baseline.N == 3 && row.Candidate.N == 3 {
				canary = true
			}
			if !r.IsPrimary(row) {
				continue
			}
			c := row.Covariate
			if c == nil || c.Rounds != 3 || c.Metric != results.CanaryDiskSyncMillis || (c.Valid && math.IsNaN(float64(c.VarianceRemovedPercent))) ||
				(!c.Valid && !strings.Contains(c.Reason, "moved with the variant")) {
				return fmt.Errorf("the headline's covariate: %+v", c)
			}
		}
		if !canary {
			return fmt.Errorf("no described row of the runs' canary %s, 3 a side", results.CanaryDiskSyncMillis)
		}
		if !strings.Contains(strings.Join(r.Summary.Lines, "\n"), "Adjusted by the load generators' canary (canaryDiskSyncMillis") {
			return fmt.Errorf("the summary does not give the adjusted change: %q", r.Summary.Lines)
		}
		return nil
	},
	"explain-pgbench-index-scans-cnpg.yaml/pgbench-index-scans": func(r *compare.Report) error {
		var env []string
		for _, d := range r.Environment {
			env = append(env, d.What+"="+strings.Join(d.Candidate, ","))
		}
		if !slices.Contains(env, "server setting enable_indexscan=off") {
			return fmt.Errorf("the environment diff does not name enable_indexscan: %v", env)
		}
		if len(r.Suspects) == 0 {
			return fmt.Errorf("no suspects")
		}
		if s := r.Suspects[0]; s.Name != "SELECT abalance FROM pgbench_accounts WHERE aid = $1" || !s.PlanChanged || !(s.DeltaMillis > 0) {
			return fmt.Errorf("the first suspect: %s %s Δ %v ms/tx, plan changed %v", s.Kind, s.Name, s.DeltaMillis, s.PlanChanged)
		}
		return nil
	},
}

// comparisonReport is a comparison's report as its ConfigMap stores it
// (report.json, gzipped when large).
func comparisonReport(ctx context.Context, k client.Client, ns, name string) (*compare.Report, error) {
	c := &benchv1.BenchmarkComparison{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.ReportConfigMap}, cm); err != nil {
		return nil, fmt.Errorf("report %q: %w", c.Status.ReportConfigMap, err)
	}
	raw := []byte(cm.Data["report.json"])
	if gz := cm.BinaryData["report.json.gz"]; len(gz) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var reports []compare.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("report.json: %w", err)
	}
	if len(reports) != 1 {
		return nil, fmt.Errorf("report.json: %d reports, want 1", len(reports))
	}
	return &reports[0], nil
}

// sampleEnded says whether a run, comparison or schedule has ended, and
// how: "Succeeded: <headline>" or "<phase>: <reason>".
func sampleEnded(ctx context.Context, k client.Client, ns, kind, name string) (string, bool, error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	switch kind {
	case "BenchmarkRun":
		r := &benchv1.BenchmarkRun{}
		if err := k.Get(ctx, key, r); err != nil {
			return "", false, err
		}
		if !r.Status.Phase.Terminal() {
			return string(r.Status.Phase), false, nil
		}
		if cs := r.Status.Capacity; r.Spec.Capacity != nil && r.Status.Phase == benchv1.PhaseSucceeded {
			// A capacity run's headline is what it found, and a search that
			// could not judge its levels did not find it.
			if cs == nil || cs.StopReason == "" || cs.StopReason == benchv1.CapacityMeasurementFailed || len(cs.Levels) == 0 {
				return fmt.Sprintf("Invalid capacity: %+v", cs), true, nil
			}
			found := "no level passed"
			if cs.Maximum != nil {
				found = fmt.Sprintf("%s=%d", cs.Parameter, *cs.Maximum)
			}
			soak := ""
			if sk := cs.Soak; sk != nil {
				// A soak that followed must have been judged (a failed
				// trend is a finding; no trend at all is a broken sample).
				if sk.Passed == nil {
					return fmt.Sprintf("Invalid capacity: the soak was not judged: %v", sk.Reasons), true, nil
				}
				soak = fmt.Sprintf(", soak at %d passed=%v %v", sk.Value, *sk.Passed, sk.Reasons)
			} else if r.Spec.Capacity.Soak != nil && cs.Confirmed != nil && *cs.Confirmed {
				return fmt.Sprintf("Invalid capacity: a confirmed maximum was not soaked: %s", cs.Message), true, nil
			}
			return fmt.Sprintf("Succeeded: capacity %s after %d levels (%s)%s", found, len(cs.Levels), cs.StopReason, soak), true, nil
		}
		if r.Status.Phase == benchv1.PhaseSucceeded && r.Status.Primary != nil && r.Status.Primary.Display != "" {
			// A database host of an external target gives the target's CPU.
			for _, h := range r.Spec.Telemetry.Hosts {
				if p := r.Status.Primary; h.Role == benchv1.HostDatabase && r.Spec.Target.External != nil && (p.TargetCPUCores == nil || *p.TargetCPUCores <= 0) {
					return fmt.Sprintf("Invalid: the database host %s gave no target CPU: %s", h.Name, mustJSON(r.Status.Steps)), true, nil
				}
			}
			return "Succeeded: " + r.Status.Primary.Display, true, nil
		}
		return fmt.Sprintf("%s: %s", r.Status.Phase, conditionsOf(r)), true, nil
	case "BenchmarkComparison":
		c := &benchv1.BenchmarkComparison{}
		if err := k.Get(ctx, key, c); err != nil {
			return "", false, err
		}
		if !c.Status.Phase.Terminal() {
			return fmt.Sprintf("%s %s", c.Status.Phase, c.Status.Progress), false, nil
		}
		if c.Status.Phase == benchv1.ComparisonSucceeded && len(c.Status.Results) > 0 {
			r := c.Status.Results[0]
			return fmt.Sprintf("Succeeded: %s %s %s → %s", r.Step, r.Metric, fmtNum(r.BaselineMedian), fmtNum(r.CandidateMedian)), true, nil
		}
		var why string
		for _, cond := range c.Status.Conditions {
			why += cond.Reason + ": " + cond.Message
		}
		// The runs say why when the comparison only counts them.
		var runs benchv1.BenchmarkRunList
		_ = k.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelComparison: string(c.UID)})
		for i := range runs.Items {
			if runs.Items[i].Status.Phase != benchv1.PhaseSucceeded {
				why += "; run " + runs.Items[i].Name + ": " + conditionsOf(&runs.Items[i])
				break
			}
		}
		return fmt.Sprintf("%s: %s", c.Status.Phase, why), true, nil
	case "BenchmarkSchedule":
		s := &benchv1.BenchmarkSchedule{}
		if err := k.Get(ctx, key, s); err != nil {
			return "", false, err
		}
		if len(s.Status.History) == 0 {
			return "waiting for its first run", false, nil
		}
		h := s.Status.History[0]
		if h.Phase == benchv1.PhaseSucceeded && h.Value != nil {
			return fmt.Sprintf("Succeeded: run %s %s %s", h.Run, fmtNum(*h.Value), h.Unit), true, nil
		}
		return fmt.Sprintf("%s: run %s", h.Phase, h.Run), true, nil
	}
	return "", true, fmt.Errorf("%s is not a dbperf kind", kind)
}

func fmtNum(v float64) string { return fmt.Sprintf("%.4g", v) }

// localEndpoints are the local servers that stand for the samples'
// existing (managed) endpoints.
type localEndpoints struct {
	pg                   testutil.Postgres
	redisPort, mongoPort int
	// ssbURL serves ssbgen's lineorder_flat: the SSB sample's data.
	ssbURL string
	// nodeExporter (host:port) stands for every host a sample names.
	nodeExporter string
}

// point aims a smoke form's external target at a local server of its kind
// (by the workload's protocol) and its Secret at that server's
// credentials, and every host it names at the local node_exporter; TLS is
// left off (the local servers serve plain connections).
func (local localEndpoints) point(doc []byte) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		return nil, err
	}
	if u.GetKind() == "Secret" {
		data, _, _ := unstructured.NestedStringMap(u.Object, "stringData")
		if _, ok := data["username"]; ok && strings.Contains(u.GetName(), "pg") {
			_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"username": local.pg.User, "password": local.pg.Password}, "stringData")
		}
		return yaml.Marshal(u.Object)
	}
	for _, path := range [][]string{{"spec"}, {"spec", "template"}, {"spec", "runTemplate", "spec"}} {
		loads, ok, _ := unstructured.NestedSlice(u.Object, append(append([]string{}, path...), "workload", "queryBench", "prepare", "loads")...)
		for i, item := range loads {
			if m, _ := item.(map[string]any); m != nil && strings.Contains(fmt.Sprint(m["url"]), "lineorder_flat") {
				m["url"] = local.ssbURL
				loads[i] = m
			}
		}
		if ok {
			_ = unstructured.SetNestedSlice(u.Object, loads, append(append([]string{}, path...), "workload", "queryBench", "prepare", "loads")...)
		}
		hosts, ok, _ := unstructured.NestedSlice(u.Object, append(append([]string{}, path...), "telemetry", "hosts")...)
		for i, item := range hosts {
			if m, _ := item.(map[string]any); m != nil {
				_ = unstructured.SetNestedField(m, "http://"+local.nodeExporter+"/metrics", "nodeExporter", "url")
				hosts[i] = m
			}
		}
		if ok {
			_ = unstructured.SetNestedSlice(u.Object, hosts, append(append([]string{}, path...), "telemetry", "hosts")...)
		}
		ext, ok, _ := unstructured.NestedMap(u.Object, append(append([]string{}, path...), "target", "external")...)
		if !ok {
			continue
		}
		work, _, _ := unstructured.NestedMap(u.Object, append(append([]string{}, path...), "workload")...)
		switch {
		case work["pgbench"] != nil || work["hammerdb"] != nil:
			ext["host"], ext["port"], ext["database"] = "127.0.0.1", int64(local.pg.Port), local.pg.Database
		case work["redisBenchmark"] != nil || work["memtier"] != nil:
			ext["host"], ext["port"] = "127.0.0.1", int64(local.redisPort)
		case work["ycsb"] != nil:
			ext["host"], ext["port"] = "127.0.0.1", int64(local.mongoPort)
		default:
			continue
		}
		delete(ext, "tls")
		if err := unstructured.SetNestedMap(u.Object, ext, append(append([]string{}, path...), "target", "external")...); err != nil {
			return nil, err
		}
	}
	return yaml.Marshal(u.Object)
}

// ciComparisons are the comparisons the docs' CI script is run against,
// by the line it must print and the exit code wait must give.
var ciComparisons = []struct {
	name, yaml, prints string
	exit, waitCode     int
}{
	{name: "ci-regression", prints: "regression", exit: 1, yaml: ciTemplate + `  variants:
  - name: indexed
  - name: no-index-scans
    patch:
      target:
        postgres:
          parameters: {enable_indexscan: "off", enable_bitmapscan: "off", enable_indexonlyscan: "off"}
`},
	{name: "ci-no-change", prints: "no regression", exit: 0, yaml: ciTemplate + `  criteria: {minEffectPercent: 50, metrics: [transactionsPerSecond]}
  variants:
  - name: indexed
  - name: again
`},
	{name: "ci-invalid", prints: "inconclusive or invalid", exit: 1,
		yaml: strings.Replace(ciTemplate, "runsPerVariant: 4", "runsPerVariant: 1", 1) + `  variants:
  - name: indexed
  - name: broken
    patch:
      workload:
        pgbench: {script: "SELECT no_such_column FROM pgbench_accounts;\n"}
`},
}

// ciTemplate is the comparisons' shared part: pgbench's select-only
// script for 5 s, 4 runs a variant (the fewest with an exact 95 %
// interval), on a played CloudNativePG cluster.
const ciTemplate = `apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: NAME
  namespace: default
spec:
  baseline: indexed
  order: Interleaved
  runsPerVariant: 4
  template:
    repetitions: 1
    target:
      postgres:
        instances: 1
        storage: {size: 1Gi}
    workload:
      pgbench: {scale: 1, builtinScript: select-only, clients: [2], duration: 5s}
      placement:
        nodeSelector: {pool: loadgen}
`

// checkDocsCIScript runs the CI job of docs/comparisons.md ("Gating a
// pipeline on a comparison") as it stands, with kubectl and the plugin on
// PATH and the cluster's kubeconfig, against a regression, no change and
// an invalid comparison: each prints its line, exits as the script says,
// and leaves a JUnit file that parses.
func checkDocsCIScript(ctx context.Context, t *testing.T, stack *sim.Stack, plugin, work string) {
	t.Helper()
	doc := readRepo("docs/comparisons.md")
	_, rest, ok := strings.Cut(doc, "A CI job:\n\n```sh\n")
	script, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 || !strings.Contains(script, "name=my-comparison") {
		t.Fatalf("no CI job in docs/comparisons.md")
	}
	// The comparisons that expect a difference run at once; the one that
	// claims no change runs after them, alone: an equivalence verdict at
	// 4 runs a side rests on every run, and a run that shares these 2
	// cores with another comparison's pgbench (a CI run saw one at 6,381
	// tx/s beside 10,200-11,900) widens the exact interval past the
	// minimum effect.
	for _, noChange := range []bool{false, true} {
		runCIJobs(ctx, t, stack, plugin, work, script, noChange)
	}
}

// runCIJobs runs the script on the comparisons that claim no change, or
// on the others, at once.
func runCIJobs(ctx context.Context, t *testing.T, stack *sim.Stack, plugin, work, script string, noChange bool) {
	path := filepath.Dir(plugin) + string(os.PathListSeparator) + stack.BinDir + string(os.PathListSeparator) + os.Getenv("PATH")
	var wg sync.WaitGroup
	for _, c := range ciComparisons {
		if (c.exit == 0) != noChange {
			continue
		}
		wg.Go(func() {
			dir := filepath.Join(work, c.name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Error(err)
				return
			}
			body := strings.Replace(script, "name=my-comparison", "name="+c.name, 1)
			if err := os.WriteFile(filepath.Join(dir, "comparison.yaml"), []byte(strings.Replace(c.yaml, "NAME", c.name, 1)), 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := os.WriteFile(filepath.Join(dir, "ci.sh"), []byte(body), 0o644); err != nil {
				t.Error(err)
				return
			}
			cmd := exec.CommandContext(ctx, "bash", "ci.sh")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+path, "KUBECONFIG="+stack.Kubeconfig)
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Errorf("%s: %v", c.name, err)
				return
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			last := lines[len(lines)-1]
			raw, rerr := os.ReadFile(filepath.Join(dir, "dbperf.xml"))
			var suites junitDoc
			if code != c.exit || !strings.HasPrefix(last, c.prints) || rerr != nil || xml.Unmarshal(raw, &suites) != nil || len(suites.Suites) != 1 {
				t.Errorf("the docs' CI job on %s: exit %d, last line %q, JUnit %v; want exit %d printing %q\n%s", c.name, code, last, rerr, c.exit, c.prints, out)
				return
			}
			t.Logf("the docs' CI job on %s: exit %d, %q; %d test cases in dbperf.xml", c.name, code, last, len(suites.Suites[0].Cases))
		})
	}
	wg.Wait()
}

// junitDoc is the JUnit XML wait writes, as far as a CI system reads it.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []struct {
		Cases []struct {
			Name string `xml:"name,attr"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}
