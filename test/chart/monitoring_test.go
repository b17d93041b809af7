package chart

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The chart's monitoring extras: the Grafana dashboard as a ConfigMap for
// Grafana's dashboard sidecar and a PrometheusRule alerting on the series
// the manager exports (controllers/internal/metrics). Both are off by
// default; the alerts' PromQL and the dashboard's are checked by the real
// promtool (Debian's prometheus package, hack/install-deps.sh), and the
// alerts fire on series as the manager exports them, scraped through a
// ServiceMonitor or not.

const dashboardFile = "dbperf-dashboard.json"

var monitoringOn = []string{"metrics.grafanaDashboard.enabled=true", "metrics.prometheusRule.enabled=true"}

func TestMonitoringIsOffByDefault(t *testing.T) {
	for name, sets := range map[string][]string{
		"defaults":           nil,
		"metrics off":        append([]string{"metrics.enabled=false"}, monitoringOn...),
		"every alert is off": {"metrics.prometheusRule.enabled=true", "metrics.prometheusRule.scheduleRegressed.enabled=false", "metrics.prometheusRule.runNotValid.enabled=false"},
	} {
		objs := render(t, sets...)
		if n := len(ofKind(objs, "PrometheusRule")); n != 0 {
			t.Errorf("%s: %d PrometheusRules rendered", name, n)
		}
		for _, cm := range ofKind(objs, "ConfigMap") {
			if _, ok := cm.GetLabels()["grafana_dashboard"]; ok || strings.HasSuffix(cm.GetName(), "-dashboard") {
				t.Errorf("%s: dashboard ConfigMap %s rendered", name, cm.GetName())
			}
		}
	}
}

func TestGrafanaDashboardConfigMap(t *testing.T) {
	file, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator", "dashboards", dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	cm := one[corev1.ConfigMap](t, render(t, "metrics.grafanaDashboard.enabled=true", "metrics.grafanaDashboard.annotations.grafana_folder=Databases",
		"metrics.grafanaDashboard.labels.team=db"), "ConfigMap")
	if cm.Name != "rel-dbperf-operator-dashboard" || cm.Namespace != "perf-system" {
		t.Errorf("ConfigMap %s/%s", cm.Namespace, cm.Name)
	}
	if cm.Labels["grafana_dashboard"] != "1" || cm.Labels["team"] != "db" || cm.Labels["app.kubernetes.io/name"] != "dbperf-operator" {
		t.Errorf("labels %v: want grafana_dashboard=1, team=db and the chart's", cm.Labels)
	}
	if cm.Annotations["grafana_folder"] != "Databases" {
		t.Errorf("annotations %v", cm.Annotations)
	}
	if len(cm.Data) != 1 || cm.Data[dashboardFile] != strings.TrimSuffix(string(file), "\n") {
		t.Fatalf("data keys %v: want %s, the chart's dashboards/%s as it is", keys(cm.Data), dashboardFile, dashboardFile)
	}
	checkDashboard(t, []byte(cm.Data[dashboardFile]))

	// The sidecar's label and value as the Grafana install says them; the
	// sidecar's namespace.
	cm = one[corev1.ConfigMap](t, render(t, "metrics.grafanaDashboard.enabled=true", "metrics.grafanaDashboard.label=example.com/dashboard",
		"metrics.grafanaDashboard.labelValue=dbperf", "metrics.grafanaDashboard.namespace=monitoring"), "ConfigMap")
	if cm.Labels["example.com/dashboard"] != "dbperf" || cm.Labels["grafana_dashboard"] != "" || cm.Namespace != "monitoring" {
		t.Errorf("%s/%s labels %v: want example.com/dashboard=dbperf in monitoring", cm.Namespace, cm.Name, cm.Labels)
	}
	// --set turns 1 into a number: still the label value "1".
	if cm := one[corev1.ConfigMap](t, render(t, "metrics.grafanaDashboard.enabled=true", "metrics.grafanaDashboard.labelValue=1"), "ConfigMap"); cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("labels %v", cm.Labels)
	}
}

type dashVariable struct {
	Name       string `json:"name"`
	Definition string `json:"definition"`
}

type dashPanel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Repeat  string `json:"repeat"`
	GridPos struct {
		Y int `json:"y"`
	} `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit   string `json:"unit"`
			Custom struct {
				Stacking struct {
					Mode string `json:"mode"`
				} `json:"stacking"`
			} `json:"custom"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// checkDashboard: the results panels are kept; a row of host panels repeats
// per $instance (node_exporter's hosts), each of them on that host; every
// query is PromQL promtool accepts.
func checkDashboard(t *testing.T, raw []byte) {
	t.Helper()
	var dash struct {
		Templating struct {
			List []dashVariable `json:"list"`
		} `json:"templating"`
		Panels []dashPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
	}
	titles := map[string]dashPanel{}
	for _, p := range dash.Panels {
		titles[p.Title] = p
	}
	for _, want := range []string{"Active runs", "Queued runs (waiting for nodes)", "Failed or invalid runs", "Worse verdicts in comparisons",
		"Headline throughput by release and pool", "Latency percentiles by release and pool", "Runs by phase", "Valid runs (1) vs not (0)",
		"Comparison verdicts", "Schedules with a regression"} {
		if _, ok := titles[want]; !ok {
			t.Errorf("panel %q is gone", want)
		}
	}
	i := slices.IndexFunc(dash.Templating.List, func(v dashVariable) bool { return v.Name == "instance" })
	if i < 0 || !strings.Contains(dash.Templating.List[i].Definition, "node_") || !strings.Contains(dash.Templating.List[i].Definition, "instance") {
		t.Errorf("no $instance variable over node_exporter's hosts: %+v", dash.Templating.List)
	}

	row := slices.IndexFunc(dash.Panels, func(p dashPanel) bool { return p.Type == "row" && strings.HasPrefix(p.Title, "Hosts") })
	if row < 0 {
		t.Fatal("no row Hosts")
	}
	if dash.Panels[row].Repeat != "instance" {
		t.Errorf("row %q repeats %q, want one per $instance", dash.Panels[row].Title, dash.Panels[row].Repeat)
	}
	for _, p := range dash.Panels[:row] {
		if p.GridPos.Y > dash.Panels[row].GridPos.Y {
			t.Errorf("panel %q (y %d) is below the Hosts row: it would repeat with it", p.Title, p.GridPos.Y)
		}
	}
	hosts := dash.Panels[row+1:]
	exprs := func(p dashPanel) string {
		var s []string
		for _, tg := range p.Targets {
			s = append(s, tg.Expr)
		}
		return strings.Join(s, "\n")
	}
	want := []struct {
		what, unit string
		stacked    bool
		series     []string
	}{
		{"CPU busy by mode", "percent", true, []string{"node_cpu_seconds_total", "by (instance, mode)", `mode!="idle"`, "[$__rate_interval]"}},
		{"memory used", "bytes", false, []string{"node_memory_MemTotal_bytes", "node_memory_MemAvailable_bytes"}},
		{"disk bytes", "Bps", false, []string{"node_disk_read_bytes_total", "node_disk_written_bytes_total"}},
		{"disk await", "s", false, []string{"node_disk_read_time_seconds_total", "node_disk_reads_completed_total", "node_disk_write_time_seconds_total", "node_disk_writes_completed_total"}},
		{"network", "Bps", false, []string{"node_network_receive_bytes_total", "node_network_transmit_bytes_total", `device!="lo"`}},
	}
	for _, w := range want {
		found := false
		for _, p := range hosts {
			e := exprs(p)
			if !strings.Contains(e, w.series[0]) {
				continue
			}
			found = true
			for _, s := range w.series {
				if !strings.Contains(e, s) {
					t.Errorf("%s panel %q lacks %s: %s", w.what, p.Title, s, e)
				}
			}
			if p.FieldConfig.Defaults.Unit != w.unit || (p.FieldConfig.Defaults.Custom.Stacking.Mode == "normal") != w.stacked {
				t.Errorf("%s panel %q: unit %q, stacking %q", w.what, p.Title, p.FieldConfig.Defaults.Unit, p.FieldConfig.Defaults.Custom.Stacking.Mode)
			}
		}
		if !found {
			t.Errorf("no %s panel in the Hosts row", w.what)
		}
	}
	for _, p := range hosts {
		if p.Type == "row" {
			t.Errorf("row %q after Hosts", p.Title)
		}
		for _, tg := range p.Targets {
			// Every node_exporter selector is the row's host.
			sels := regexp.MustCompile(`node_[A-Za-z_]+(\{[^}]*\})?`).FindAllStringSubmatch(tg.Expr, -1)
			for _, s := range sels {
				if !strings.Contains(s[1], `instance=~"$instance"`) {
					t.Errorf("panel %q: %s is not limited to $instance", p.Title, s[0])
				}
			}
			if strings.Contains(tg.Expr, "rate(") && !strings.Contains(tg.Expr, "[$__rate_interval]") {
				t.Errorf("panel %q: rate without $__rate_interval: %s", p.Title, tg.Expr)
			}
		}
	}

	// Every query parses: as recording rules, with the variables replaced.
	vars := regexp.MustCompile(`\$[A-Za-z_]+`)
	var rules []map[string]string
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			expr := strings.ReplaceAll(tg.Expr, "$__rate_interval", "1m")
			rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:panel_%d_%d", p.ID, i), "expr": vars.ReplaceAllString(expr, ".*")})
		}
	}
	promtoolCheckRules(t, map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
}

type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func ruleSpec(t *testing.T, objs []unstructured.Unstructured) (map[string]any, map[string]alertRule) {
	t.Helper()
	prs := ofKind(objs, "PrometheusRule")
	if len(prs) != 1 {
		t.Fatalf("%d PrometheusRules, want one", len(prs))
	}
	pr := prs[0]
	if pr.GetAPIVersion() != "monitoring.coreos.com/v1" || pr.GetName() != "rel-dbperf-operator" || pr.GetNamespace() != "perf-system" {
		t.Errorf("PrometheusRule %s %s/%s", pr.GetAPIVersion(), pr.GetNamespace(), pr.GetName())
	}
	spec, _, _ := unstructured.NestedMap(pr.Object, "spec")
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Groups []struct {
			Rules []alertRule `json:"rules"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	alerts := map[string]alertRule{}
	for _, g := range s.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = r
		}
	}
	return spec, alerts
}

func TestPrometheusRule(t *testing.T) {
	objs := render(t, "metrics.prometheusRule.enabled=true", "metrics.prometheusRule.labels.release=prom",
		"metrics.prometheusRule.alertLabels.team=db", "metrics.prometheusRule.scheduleRegressed.severity=critical",
		"metrics.prometheusRule.runNotValid.for=10m")
	if l := ofKind(objs, "PrometheusRule")[0].GetLabels(); l["release"] != "prom" || l["app.kubernetes.io/instance"] != "rel" {
		t.Errorf("labels %v", l)
	}
	spec, alerts := ruleSpec(t, objs)
	if len(alerts) != 2 {
		t.Fatalf("alerts %v", keys(alerts))
	}
	for name, w := range map[string]struct {
		metric, forDur, severity string
		names                    []string
	}{
		"DbperfScheduleRegressed": {"dbperf_schedule_regressed", "5m", "critical", []string{"$labels.schedule", "$labels.metric"}},
		"DbperfRunNotValid":       {"dbperf_run_valid", "10m", "warning", []string{"$labels.run", "$labels.workload"}},
	} {
		a, ok := alerts[name]
		if !ok {
			t.Errorf("no alert %s", name)
			continue
		}
		if !strings.Contains(a.Expr, w.metric) || a.For != w.forDur || a.Labels["severity"] != w.severity || a.Labels["team"] != "db" {
			t.Errorf("%s: expr %q, for %q, labels %v", name, a.Expr, a.For, a.Labels)
		}
		for k, names := range map[string][]string{"summary": w.names[:1], "description": w.names} {
			for _, n := range append([]string{"$labels.exported_namespace", "$labels.namespace"}, names...) {
				if !strings.Contains(a.Annotations[k], n) {
					t.Errorf("%s: %s %q does not name %s", name, k, a.Annotations[k], n)
				}
			}
		}
	}
	promtoolCheckRules(t, spec)

	_, alerts = ruleSpec(t, render(t, "metrics.prometheusRule.enabled=true", "metrics.prometheusRule.scheduleRegressed.enabled=false"))
	if len(alerts) != 1 || alerts["DbperfRunNotValid"].Alert == "" {
		t.Errorf("scheduleRegressed.enabled=false: alerts %v", keys(alerts))
	}
	if e := alerts["DbperfRunNotValid"].Expr; !strings.Contains(e, `dbperf_run_valid{phase=~"Invalid|Failed"}`) {
		t.Errorf("the default phases: %s", e)
	}
	// Runs that end Invalid only: a run that could not measure is not paged.
	_, alerts = ruleSpec(t, render(t, "metrics.prometheusRule.enabled=true", "metrics.prometheusRule.runNotValid.phases={Invalid}"))
	if e := alerts["DbperfRunNotValid"].Expr; !strings.Contains(e, `dbperf_run_valid{phase=~"Invalid"}`) {
		t.Errorf("phases={Invalid}: %s", e)
	}
}

// The alerts on series as the manager exports them, through
// `promtool test rules`: scraped by a ServiceMonitor, which renames their
// namespace exported_namespace, or as they are; two managers' series (a
// rollout) make one alert; an open regression alerts until it closes; a run
// that ended not valid alerts once, for runNotValid.window, and again neither
// when the manager restarts nor after a gap in its series shorter than the
// window; a valid run never.
func TestAlertsFireOnTheManagersSeries(t *testing.T) {
	promtool := findPromtool(t)
	spec, _ := ruleSpec(t, render(t, "metrics.prometheusRule.enabled=true", "metrics.prometheusRule.alertLabels.team=db"))
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "rules.json"), spec)

	mgr := func(pod string) string { return `job="dbperf",namespace="perf-system",pod="` + pod + `",` }
	run := func(ns, exported, name, workload, pool, release, phase string) map[string]any {
		labels := map[string]any{"severity": "warning", "team": "db", "namespace": ns, "run": name, "workload": workload, "pool": pool, "phase": phase}
		show, what := ns, workload+", pool "+pool
		if exported != "" {
			labels["exported_namespace"], show = exported, exported
		}
		if release != "" {
			labels["release"], what = release, what+", release "+release
		}
		return map[string]any{"exp_labels": labels, "exp_annotations": map[string]string{
			"summary": fmt.Sprintf("BenchmarkRun %s/%s ended without a valid result", show, name),
			"description": fmt.Sprintf("BenchmarkRun %s in namespace %s (%s) ended %s: its numbers are not to be trusted. kubectl -n %s describe benchmarkrun %s says why.",
				name, show, what, phase, show, name),
		}}
	}
	regressed := map[string]any{
		"exp_labels": map[string]string{"severity": "warning", "team": "db", "namespace": "perf-system", "exported_namespace": "team-a",
			"schedule": "nightly", "metric": "transactionsPerSecond"},
		"exp_annotations": map[string]string{
			"summary": "BenchmarkSchedule team-a/nightly regressed in transactionsPerSecond",
			"description": "The latest comparison of BenchmarkSchedule nightly in namespace team-a found transactionsPerSecond worse than its baseline: " +
				"its Regressed condition is True until a later run is back within the margin or the new level is acknowledged " +
				"(kubectl -n team-a dbperf history nightly; kubectl dbperf ack).",
		},
	}
	oldRun := run("perf-system", "team-a", "r-old", "pgbench", "standard-v3", "v1.2.3", "Invalid")
	gapRun := run("perf-system", "team-a", "r-gap", "pgbench", "standard-v3", "v1.2.3", "Failed")
	newRun := run("perf-system", "team-a", "r-new", "pgbench", "standard-v3", "v1.2.4", "Invalid")
	bare := run("team-b", "", "r-b", "sysbench", "loadgen", "", "Invalid")
	at := func(alert, when string, exp ...map[string]any) map[string]any {
		if exp == nil {
			exp = []map[string]any{}
		}
		return map[string]any{"alertname": alert, "eval_time": when, "exp_alerts": exp}
	}
	tests := map[string]any{
		"rule_files":          []string{"rules.json"},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval": "1m",
			"input_series": []map[string]string{
				// r-old ended before the test; the manager restarts at 101m.
				{"series": `dbperf_run_valid{` + mgr("mgr-1") + `exported_namespace="team-a",run="r-old",workload="pgbench",pool="standard-v3",release="v1.2.3",phase="Invalid"}`, "values": "0x100"},
				{"series": `dbperf_run_valid{` + mgr("mgr-2") + `exported_namespace="team-a",run="r-old",workload="pgbench",pool="standard-v3",release="v1.2.3",phase="Invalid"}`, "values": "_x101 0x30"},
				// r-gap: the manager (or Prometheus) is down from 41m to 70m.
				{"series": `dbperf_run_valid{` + mgr("mgr-1") + `exported_namespace="team-a",run="r-gap",workload="pgbench",pool="standard-v3",release="v1.2.3",phase="Failed"}`, "values": "0x40"},
				{"series": `dbperf_run_valid{` + mgr("mgr-2") + `exported_namespace="team-a",run="r-gap",workload="pgbench",pool="standard-v3",release="v1.2.3",phase="Failed"}`, "values": "_x70 0x60"},
				{"series": `dbperf_run_valid{` + mgr("mgr-1") + `exported_namespace="team-a",run="r-new",workload="pgbench",pool="standard-v3",release="v1.2.4",phase="Invalid"}`, "values": "_x9 0x100"},
				{"series": `dbperf_run_valid{` + mgr("mgr-1") + `exported_namespace="team-a",run="r-ok",workload="pgbench",pool="standard-v3",release="v1.2.4",phase="Succeeded"}`, "values": "1x130"},
				// Scraped with its own namespace, no release.
				{"series": `dbperf_run_valid{job="dbperf",pod="mgr-1",namespace="team-b",run="r-b",workload="sysbench",pool="loadgen",phase="Invalid"}`, "values": "_x30 0x100"},
				// nightly regresses at 11m, seen by two managers from 20m, closes at 61m.
				{"series": `dbperf_schedule_regressed{` + mgr("mgr-1") + `exported_namespace="team-a",schedule="nightly",metric="transactionsPerSecond"}`, "values": "0x10 1x50 0x50"},
				{"series": `dbperf_schedule_regressed{` + mgr("mgr-2") + `exported_namespace="team-a",schedule="nightly",metric="transactionsPerSecond"}`, "values": "_x20 1x40 0x50"},
				{"series": `dbperf_schedule_regressed{` + mgr("mgr-1") + `exported_namespace="team-a",schedule="weekly",metric="the primary metric"}`, "values": "0x120"},
			},
			"alert_rule_test": []any{
				at("DbperfRunNotValid", "3m"),
				at("DbperfRunNotValid", "12m", oldRun, gapRun),
				at("DbperfRunNotValid", "40m", oldRun, gapRun, newRun, bare),
				at("DbperfRunNotValid", "62m", newRun, bare),
				at("DbperfRunNotValid", "75m", bare),
				at("DbperfRunNotValid", "110m"),
				at("DbperfRunNotValid", "125m"),
				at("DbperfScheduleRegressed", "14m"),
				at("DbperfScheduleRegressed", "30m", regressed),
				at("DbperfScheduleRegressed", "60m", regressed),
				at("DbperfScheduleRegressed", "70m"),
			},
		}},
	}
	writeJSON(t, filepath.Join(dir, "tests.json"), tests)
	cmd := exec.Command(promtool, "test", "rules", "tests.json")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// With both on, helm lint --strict passes.
func TestMonitoringLintsStrict(t *testing.T) {
	args := []string{"lint", "--strict", filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator")}
	for _, s := range append(monitoringOn, "metrics.serviceMonitor.enabled=true", "metrics.grafanaDashboard.annotations.grafana_folder=dbperf",
		"metrics.prometheusRule.alertLabels.team=db") {
		args = append(args, "--set", s)
	}
	if out, err := exec.Command(testutil.NeedEnv(t, "HELM"), args...).CombinedOutput(); err != nil {
		t.Errorf("helm lint --strict: %v\n%s", err, out)
	}
}

func TestMonitoringSchemaRefusesBadValues(t *testing.T) {
	refused(t, map[string]string{
		"metrics.grafanaDashboard.label=grafana dashboard":       "/metrics/grafanaDashboard/label",
		"metrics.grafanaDashboard.labelValue=-x":                 "/metrics/grafanaDashboard/labelValue",
		"metrics.grafanaDashboard.namespace=Monitoring":          "/metrics/grafanaDashboard/namespace",
		"metrics.grafanaDashboard.folder=dbperf":                 "/metrics/grafanaDashboard",
		"metrics.prometheusRule.runNotValid.for=5 minutes":       "/metrics/prometheusRule/runNotValid/for",
		"metrics.prometheusRule.runNotValid.window=":             "/metrics/prometheusRule/runNotValid/window",
		"metrics.prometheusRule.scheduleRegressed.severity=":     "/metrics/prometheusRule/scheduleRegressed/severity",
		"metrics.prometheusRule.alertLabels.severity=page":       "/metrics/prometheusRule/alertLabels/severity",
		"metrics.prometheusRule.alertLabels.bad-name=x":          "/metrics/prometheusRule/alertLabels",
		"metrics.prometheusRule.scheduleRegressed.threshold=0.1": "/metrics/prometheusRule/scheduleRegressed",
	})
}

// findPromtool is the real promtool: PROMTOOL, or on the PATH (Debian's
// prometheus package, which hack/install-deps.sh installs). Without it the
// test is skipped, and fails under CI.
func findPromtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool not found (PROMTOOL, or Debian's prometheus package: bash hack/install-deps.sh)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// promtoolCheckRules runs `promtool check rules` on a rules file's
// content, in a subtest that is skipped without promtool.
func promtoolCheckRules(t *testing.T, rules map[string]any) {
	t.Helper()
	t.Run("promtool check rules", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rules.json")
		writeJSON(t, file, rules)
		if out, err := exec.Command(findPromtool(t), "check", "rules", file).CombinedOutput(); err != nil {
			raw, _ := yaml.Marshal(rules)
			t.Errorf("promtool check rules: %v\n%s\n%s", err, out, raw)
		}
	})
}

func writeJSON(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}
