// Package chart tests the Helm chart: its values schema and switches, the
// restricted Pod Security Standard for the manager pod, and that it installs
// the same CRDs, RBAC and manager settings as the kustomize config/default.
// HELM and KUBECTL name the binaries (hack/verify-chart.sh and hack/test.sh
// set them); the tests skip when they are not given.
package chart

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/yaml"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/dbperf-io/dbperf-operator/internal/version"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// render runs `helm template` with the given --set flags.
func render(t *testing.T, sets ...string) []unstructured.Unstructured {
	t.Helper()
	out, err := helmTemplate(t, sets...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", sets, err, out)
	}
	return decode(t, out)
}

func helmTemplate(t *testing.T, sets ...string) ([]byte, error) {
	t.Helper()
	args := []string{"template", "rel", filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), "--namespace", "perf-system"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(testutil.NeedEnv(t, "HELM"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return stderr.Bytes(), err
	}
	return out, nil
}

func decode(t *testing.T, raw []byte) []unstructured.Unstructured {
	t.Helper()
	var objs []unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufioReader(raw))
	dec := yaml.NewDecodingSerializer(unstructured.UnstructuredJSONScheme)
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if _, _, err := dec.Decode(doc, nil, u); err != nil {
			t.Fatalf("decode %q: %v", doc, err)
		}
		objs = append(objs, *u)
	}
	return objs
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

func ofKind(objs []unstructured.Unstructured, kind string) []unstructured.Unstructured {
	var r []unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			r = append(r, o)
		}
	}
	return r
}

func one[T any](t *testing.T, objs []unstructured.Unstructured, kind string) *T {
	t.Helper()
	found := ofKind(objs, kind)
	if len(found) != 1 {
		t.Fatalf("want exactly one %s, got %d", kind, len(found))
	}
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found[0].Object, &v); err != nil {
		t.Fatalf("convert %s: %v", kind, err)
	}
	return &v
}

func TestDefaultsRenderEverythingTheManagerNeeds(t *testing.T) {
	objs := render(t)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if ns := o.GetNamespace(); ns != "" && ns != "perf-system" {
			t.Errorf("%s %s is in namespace %q, want the release namespace", o.GetKind(), o.GetName(), ns)
		}
	}
	for _, k := range []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "Service"} {
		if kinds[k] == 0 {
			t.Errorf("default render has no %s (kinds: %v)", k, kinds)
		}
	}
	if kinds["ServiceMonitor"] != 0 {
		t.Error("ServiceMonitor rendered although metrics.serviceMonitor.enabled is false by default")
	}
	crds := ofKind(objs, "CustomResourceDefinition")
	if len(crds) < 2 {
		t.Errorf("%d CRDs, want BenchmarkRun and BenchmarkComparison at least", len(crds))
	}
	for _, crd := range crds {
		if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s annotations %v: want helm.sh/resource-policy=keep by default", crd.GetName(), crd.GetAnnotations())
		}
	}
	dep := one[appsv1.Deployment](t, objs, "Deployment")
	sa := one[corev1.ServiceAccount](t, objs, "ServiceAccount")
	if dep.Spec.Template.Spec.ServiceAccountName != sa.Name {
		t.Errorf("manager runs as %q, the chart creates %q", dep.Spec.Template.Spec.ServiceAccountName, sa.Name)
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		b := one[rbacv1.ClusterRoleBinding](t, objs, kind) // same shape for both
		if len(b.Subjects) != 1 || b.Subjects[0].Name != sa.Name || b.Subjects[0].Namespace != "perf-system" {
			t.Errorf("%s subjects %+v: want the chart's ServiceAccount", kind, b.Subjects)
		}
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--leader-elect", "--runner-image=ghcr.io/dbperf-io/dbperf-runner:" + version.Release, "--metrics-bind-address=:8080",
		"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=2s", "--leader-election-release-on-cancel=true"} {
		if !slices.Contains(args, want) {
			t.Errorf("manager args %v lack %s", args, want)
		}
	}
}

// The manager pod passes the "restricted" Pod Security Standard, checked by
// the same library the API server's admission plugin uses.
func TestManagerPodIsRestricted(t *testing.T) {
	dep := one[appsv1.Deployment](t, render(t), "Deployment")
	checkRestricted(t, "chart", dep)
	kdep := one[appsv1.Deployment](t, kustomize(t), "Deployment")
	checkRestricted(t, "config/default", kdep)
}

func checkRestricted(t *testing.T, from string, dep *appsv1.Deployment) {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range ev.EvaluatePod(lv, &dep.Spec.Template.ObjectMeta, &dep.Spec.Template.Spec) {
		if !r.Allowed {
			t.Errorf("%s: manager pod violates restricted: %s: %s", from, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}

func TestSwitches(t *testing.T) {
	cases := []struct {
		name  string
		sets  []string
		check func(t *testing.T, objs []unstructured.Unstructured)
	}{
		{"no CRDs", []string{"crds.install=false"}, func(t *testing.T, objs []unstructured.Unstructured) {
			if n := len(ofKind(objs, "CustomResourceDefinition")); n != 0 {
				t.Errorf("%d CRDs rendered with crds.install=false", n)
			}
		}},
		{"CRDs without keep", []string{"crds.keep=false"}, func(t *testing.T, objs []unstructured.Unstructured) {
			for _, crd := range ofKind(objs, "CustomResourceDefinition") {
				if _, ok := crd.GetAnnotations()["helm.sh/resource-policy"]; ok {
					t.Errorf("keep annotation on %s with crds.keep=false", crd.GetName())
				}
			}
		}},
		{"no RBAC", []string{"rbac.create=false"}, func(t *testing.T, objs []unstructured.Unstructured) {
			for _, k := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
				if n := len(ofKind(objs, k)); n != 0 {
					t.Errorf("%d %s rendered with rbac.create=false", n, k)
				}
			}
		}},
		{"existing service account", []string{"serviceAccount.create=false", "serviceAccount.name=perf-operator"}, func(t *testing.T, objs []unstructured.Unstructured) {
			if n := len(ofKind(objs, "ServiceAccount")); n != 0 {
				t.Errorf("ServiceAccount rendered with serviceAccount.create=false")
			}
			if dep := one[appsv1.Deployment](t, objs, "Deployment"); dep.Spec.Template.Spec.ServiceAccountName != "perf-operator" {
				t.Errorf("serviceAccountName %q", dep.Spec.Template.Spec.ServiceAccountName)
			}
		}},
		{"service monitor", []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom"}, func(t *testing.T, objs []unstructured.Unstructured) {
			sm := ofKind(objs, "ServiceMonitor")
			if len(sm) != 1 || sm[0].GetLabels()["release"] != "prom" {
				t.Fatalf("want one ServiceMonitor labelled release=prom, got %v", sm)
			}
			eps, _, _ := unstructured.NestedSlice(sm[0].Object, "spec", "endpoints")
			if len(eps) != 1 || eps[0].(map[string]any)["port"] != "metrics" {
				t.Errorf("ServiceMonitor endpoints %v", eps)
			}
		}},
		{"metrics off", []string{"metrics.enabled=false"}, func(t *testing.T, objs []unstructured.Unstructured) {
			if n := len(ofKind(objs, "Service")); n != 0 {
				t.Errorf("metrics Service rendered with metrics.enabled=false")
			}
			if args := one[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--metrics-bind-address=0") {
				t.Errorf("args %v: metrics not switched off", args)
			}
		}},
		{"no telemetry source by default: no nodes/proxy", nil, func(t *testing.T, objs []unstructured.Unstructured) {
			checkNoNodesProxy(t, objs)
			for _, a := range one[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args {
				if strings.Contains(a, "telemetry") || strings.Contains(a, "prometheus") {
					t.Errorf("arg %s rendered without telemetry.resources", a)
				}
			}
		}},
		{"kubelet telemetry", []string{"telemetry.resources=kubelet", "telemetry.samplingInterval=5s"}, func(t *testing.T, objs []unstructured.Unstructured) {
			args := one[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
			if !slices.Contains(args, "--telemetry-resources=kubelet") || !slices.Contains(args, "--telemetry-sampling-interval=5s") {
				t.Errorf("args %v", args)
			}
			var proxy []string
			for _, o := range ofKind(objs, "ClusterRole") {
				var role rbacv1.ClusterRole
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
					t.Fatal(err)
				}
				for _, r := range role.Rules {
					if slices.Contains(r.Resources, "nodes/proxy") {
						proxy = append(proxy, role.Name)
						if !slices.Equal(r.Verbs, []string{"get"}) || len(r.Resources) != 1 {
							t.Errorf("%s grants %v on %v: want get on nodes/proxy alone", role.Name, r.Verbs, r.Resources)
						}
					}
				}
			}
			if len(proxy) != 1 || strings.HasSuffix(proxy[0], "-manager") {
				t.Fatalf("nodes/proxy granted by %v: want one separate ClusterRole", proxy)
			}
			bound := false
			for _, o := range ofKind(objs, "ClusterRoleBinding") {
				var b rbacv1.ClusterRoleBinding
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
					t.Fatal(err)
				}
				if b.RoleRef.Name == proxy[0] && len(b.Subjects) == 1 && b.Subjects[0].Kind == "ServiceAccount" && b.Subjects[0].Name == one[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.ServiceAccountName {
					bound = true
				}
			}
			if !bound {
				t.Errorf("%s is not bound to the manager's ServiceAccount", proxy[0])
			}
		}},
		{"kubelet telemetry without RBAC", []string{"telemetry.resources=kubelet", "rbac.create=false"}, func(t *testing.T, objs []unstructured.Unstructured) {
			checkNoNodesProxy(t, objs)
		}},
		{"prometheus telemetry", []string{"telemetry.resources=prometheus", "telemetry.prometheus.url=http://prometheus.monitoring:9090"}, func(t *testing.T, objs []unstructured.Unstructured) {
			checkNoNodesProxy(t, objs)
			args := one[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{"--telemetry-resources=prometheus", "--prometheus-url=http://prometheus.monitoring:9090", "--prometheus-settle-time=45s"} {
				if !slices.Contains(args, want) {
					t.Errorf("args %v lack %s", args, want)
				}
			}
		}},
		{"images, placement and leader election", []string{"image.tag=v9", "runnerImage.repository=reg.local/runner", "runnerImage.tag=v9",
			"nodeSelector.pool=system", "tolerations[0].key=dedicated", "tolerations[0].operator=Exists", "leaderElection.enabled=false", "logLevel=debug"},
			func(t *testing.T, objs []unstructured.Unstructured) {
				dep := one[appsv1.Deployment](t, objs, "Deployment")
				spec := dep.Spec.Template.Spec
				if spec.Containers[0].Image != "ghcr.io/dbperf-io/dbperf-operator:v9" {
					t.Errorf("image %s", spec.Containers[0].Image)
				}
				args := spec.Containers[0].Args
				if !slices.Contains(args, "--runner-image=reg.local/runner:v9") || slices.Contains(args, "--leader-elect") || !slices.Contains(args, "--zap-log-level=debug") {
					t.Errorf("args %v", args)
				}
				if spec.NodeSelector["pool"] != "system" || len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated" {
					t.Errorf("placement %v %v", spec.NodeSelector, spec.Tolerations)
				}
				if n := len(ofKind(objs, "Role")); n != 0 {
					t.Errorf("leader-election Role rendered with leaderElection.enabled=false")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, render(t, c.sets...)) })
	}
}

// checkNoNodesProxy: no rendered role grants nodes/proxy.
func checkNoNodesProxy(t *testing.T, objs []unstructured.Unstructured) {
	t.Helper()
	for _, o := range ofKind(objs, "ClusterRole") {
		if raw, _ := json.Marshal(o.Object); strings.Contains(string(raw), "nodes/proxy") {
			t.Errorf("ClusterRole %s grants nodes/proxy", o.GetName())
		}
	}
}

// Bad values are refused by values.schema.json, naming the value.
func TestSchemaRefusesBadValues(t *testing.T) {
	refused(t, map[string]string{
		"replicaCount=-1":                             "/replicaCount",
		"image.pullPolicy=Sometimes":                  "/image/pullPolicy",
		"extraArgs[0]=verbose":                        "/extraArgs/0",
		"metrics.port=70000":                          "/metrics/port",
		"replicas=2":                                  "replicas",
		"logLevel=loud":                               "/logLevel",
		"telemetry.resources=cadvisor":                "/telemetry/resources",
		"telemetry.samplingInterval=often":            "/telemetry/samplingInterval",
		"telemetry.resources=prometheus":              "/telemetry/prometheus/url",
		"telemetry.prometheus.url=prom:9090":          "/telemetry/prometheus/url",
		"telemetry.prometheus.step=often":             "/telemetry/prometheus/step",
		"telemetry.prometheus.labels.pod=pod-name":    "/telemetry/prometheus/labels/pod",
		"telemetry.prometheus.metrics.cpuUsges=x":     "/telemetry/prometheus/metrics",
		"telemetry.prometheus.queries[0].name=appCPU": "/telemetry/prometheus/queries/0",
		"telemetry.prometheus.queries[0].summary=p99": "/telemetry/prometheus/queries/0",
		"admission.allowedImages[0]=reg'x/":           "/admission/allowedImages/0",
		"admission.allowedImages[0]=a b/":             "/admission/allowedImages/0",
	})
}

func kustomize(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(testutil.NeedEnv(t, "KUBECTL"), "kustomize", filepath.Join(testutil.RepoRoot(), "config", "default"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v\n%s", err, stderr.String())
	}
	return decode(t, out)
}

// The chart and config/default install the same thing: CRDs, the manager's
// cluster and leader-election rules, and the manager container apart from its
// image tags. `make verify` runs this.
func TestChartMatchesKustomize(t *testing.T) {
	chart, kust := render(t), kustomize(t)

	crds := func(objs []unstructured.Unstructured) map[string]apiextv1.CustomResourceDefinitionSpec {
		m := map[string]apiextv1.CustomResourceDefinitionSpec{}
		for _, o := range ofKind(objs, "CustomResourceDefinition") {
			var c apiextv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &c); err != nil {
				t.Fatal(err)
			}
			m[c.Name] = c.Spec
		}
		return m
	}
	if c, k := crds(chart), crds(kust); !reflect.DeepEqual(c, k) {
		t.Errorf("chart CRDs differ from config/crd/bases (run `make manifests`): chart has %d, kustomize %d", len(c), len(k))
	}

	for _, suffix := range []string{"-manager", "-editor", "-viewer"} {
		ksuffix := map[string]string{"-manager": "-manager-role"}[suffix]
		if ksuffix == "" {
			ksuffix = suffix
		}
		c, k := clusterRole(t, chart, suffix), clusterRole(t, kust, ksuffix)
		if !reflect.DeepEqual(c.Rules, k.Rules) {
			t.Errorf("ClusterRole *%s rules drift:\nchart:     %+v\nkustomize: %+v", suffix, c.Rules, k.Rules)
		}
		if ca, ka := aggregation(c.Labels), aggregation(k.Labels); !reflect.DeepEqual(ca, ka) {
			t.Errorf("ClusterRole *%s aggregates differently: chart %v, kustomize %v", suffix, ca, ka)
		}
	}
	if c, k := one[rbacv1.Role](t, chart, "Role"), one[rbacv1.Role](t, kust, "Role"); !reflect.DeepEqual(c.Rules, k.Rules) {
		t.Errorf("leader-election Role rules drift:\nchart:     %+v\nkustomize: %+v", c.Rules, k.Rules)
	}

	cd, kd := one[appsv1.Deployment](t, chart, "Deployment"), one[appsv1.Deployment](t, kust, "Deployment")
	cc, kc := cd.Spec.Template.Spec.Containers[0], kd.Spec.Template.Spec.Containers[0]
	untag := func(args []string) []string {
		var r []string
		for _, a := range args {
			if strings.HasPrefix(a, "--runner-image=") {
				a = a[:strings.LastIndex(a, ":")]
			}
			r = append(r, a)
		}
		return r
	}
	if !reflect.DeepEqual(untag(cc.Args), untag(kc.Args)) {
		t.Errorf("manager args drift:\nchart:     %v\nkustomize: %v", cc.Args, kc.Args)
	}
	for name, pair := range map[string][2]any{
		"container securityContext": {cc.SecurityContext, kc.SecurityContext},
		"pod securityContext":       {cd.Spec.Template.Spec.SecurityContext, kd.Spec.Template.Spec.SecurityContext},
		"resources":                 {cc.Resources, kc.Resources},
		"ports":                     {cc.Ports, kc.Ports},
		"liveness probe":            {cc.LivenessProbe, kc.LivenessProbe},
		"readiness probe":           {cc.ReadinessProbe, kc.ReadinessProbe},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s drift:\nchart:     %+v\nkustomize: %+v", name, pair[0], pair[1])
		}
	}
	if c, k := strings.Split(cc.Image, ":")[0], strings.Split(kc.Image, ":")[0]; c != k {
		t.Errorf("manager image repository: chart %s, kustomize %s", c, k)
	}
	cs, ks := one[corev1.Service](t, chart, "Service"), one[corev1.Service](t, kust, "Service")
	if !reflect.DeepEqual(cs.Spec.Ports, ks.Spec.Ports) {
		t.Errorf("metrics Service ports drift: chart %+v, kustomize %+v", cs.Spec.Ports, ks.Spec.Ports)
	}
}

// The generated chart templates are what hack/chartgen makes of config/ now.
func TestGeneratedTemplatesAreCurrent(t *testing.T) {
	root := testutil.RepoRoot()
	tmp := t.TempDir()
	chart := filepath.Join(tmp, "chart")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./hack/chartgen", "-chart", chart)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chartgen: %v\n%s", err, out)
	}
	crds, _ := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	rels := []string{"templates/clusterrole.yaml"}
	for _, c := range crds {
		rels = append(rels, "templates/crds/"+filepath.Base(c))
	}
	for _, rel := range rels {
		want, err := os.ReadFile(filepath.Join(chart, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, "charts", "dbperf-operator", rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("charts/dbperf-operator/%s is stale: run `make manifests`", rel)
		}
	}
}

// clusterRole is the one ClusterRole whose name ends in suffix.
func clusterRole(t *testing.T, objs []unstructured.Unstructured, suffix string) *rbacv1.ClusterRole {
	t.Helper()
	var found []rbacv1.ClusterRole
	for _, o := range ofKind(objs, "ClusterRole") {
		if strings.HasSuffix(o.GetName(), suffix) {
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one ClusterRole named *%s, got %d", suffix, len(found))
	}
	return &found[0]
}

// aggregation is a role's aggregate-to-* labels.
func aggregation(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			out[k] = v
		}
	}
	return out
}

// The users' roles: the editor aggregates into admin and edit and may
// create, change and delete runs, comparisons and schedules; the viewer
// aggregates into view and only reads; both read the results ConfigMaps.
// rbac.aggregateUserRoles=false keeps them out of the built-in roles.
func TestUserRoles(t *testing.T) {
	write := []string{"create", "delete", "deletecollection", "patch", "update"}
	kinds := []string{"benchmarkruns", "benchmarkcomparisons", "benchmarkschedules"}
	allows := func(r *rbacv1.ClusterRole, group, resource, verb string) bool {
		for _, rule := range r.Rules {
			if slices.Contains(rule.APIGroups, group) && slices.Contains(rule.Resources, resource) && slices.Contains(rule.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for name, objs := range map[string][]unstructured.Unstructured{"chart": render(t), "kustomize": kustomize(t)} {
		editor, viewer := clusterRole(t, objs, "-editor"), clusterRole(t, objs, "-viewer")
		if name == "kustomize" && (editor.Name != "dbperf-operator-editor" || viewer.Name != "dbperf-operator-viewer") {
			t.Errorf("%s: roles %s and %s, want dbperf-operator-editor and dbperf-operator-viewer", name, editor.Name, viewer.Name)
		}
		if got := aggregation(editor.Labels); !reflect.DeepEqual(got, map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-admin": "true", "rbac.authorization.k8s.io/aggregate-to-edit": "true"}) {
			t.Errorf("%s: editor aggregates to %v", name, got)
		}
		if got := aggregation(viewer.Labels); !reflect.DeepEqual(got, map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}) {
			t.Errorf("%s: viewer aggregates to %v", name, got)
		}
		for _, k := range kinds {
			for _, v := range append([]string{"get", "list", "watch"}, write...) {
				if !allows(editor, "bench.dbperf.io", k, v) {
					t.Errorf("%s: the editor may not %s %s", name, v, k)
				}
				if want := !slices.Contains(write, v); allows(viewer, "bench.dbperf.io", k, v) != want {
					t.Errorf("%s: the viewer may %s %s: %v, want %v", name, v, k, !want, want)
				}
			}
			for _, r := range []*rbacv1.ClusterRole{editor, viewer} {
				if !allows(r, "bench.dbperf.io", k+"/status", "get") || allows(r, "bench.dbperf.io", k+"/status", "update") || allows(r, "bench.dbperf.io", k+"/status", "patch") {
					t.Errorf("%s: %s on %s/status: want get only", name, r.Name, k)
				}
			}
		}
		for _, r := range []*rbacv1.ClusterRole{editor, viewer} {
			if !allows(r, "", "configmaps", "get") || !allows(r, "", "configmaps", "list") || allows(r, "", "configmaps", "update") || allows(r, "", "secrets", "get") {
				t.Errorf("%s: %s: want the results ConfigMaps read, nothing written, no Secret", name, r.Name)
			}
		}
	}
	objs := render(t, "rbac.aggregateUserRoles=false")
	for _, suffix := range []string{"-editor", "-viewer"} {
		if got := aggregation(clusterRole(t, objs, suffix).Labels); len(got) != 0 {
			t.Errorf("rbac.aggregateUserRoles=false: *%s aggregates to %v", suffix, got)
		}
	}
}

// docs/install.md deletes the three CRDs by the label
// app.kubernetes.io/name=dbperf-operator: the chart's and config/default's
// carry it.
func TestCRDsCarryTheUninstallLabel(t *testing.T) {
	for name, objs := range map[string][]unstructured.Unstructured{"chart": render(t), "kustomize": kustomize(t)} {
		crds := ofKind(objs, "CustomResourceDefinition")
		if len(crds) != 3 {
			t.Errorf("%s: %d CRDs, want 3", name, len(crds))
		}
		for _, c := range crds {
			if got := c.GetLabels()["app.kubernetes.io/name"]; got != "dbperf-operator" {
				t.Errorf("%s: CRD %s has app.kubernetes.io/name=%q, want dbperf-operator", name, c.GetName(), got)
			}
		}
	}
	install := readDoc(t, "docs/install.md")
	notes := readDoc(t, "charts/dbperf-operator/templates/NOTES.txt")
	for doc, text := range map[string]string{"docs/install.md": install, "NOTES.txt": notes} {
		if !strings.Contains(text, "kubectl delete crd -l app.kubernetes.io/name=") {
			t.Errorf("%s does not say how to delete the CRDs by their label", doc)
		}
	}
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// refused renders the chart with each value set (--set VALUE) and checks
// that it is refused with an error naming the schema path.
func refused(t *testing.T, cases map[string]string) {
	t.Helper()
	for set, want := range cases {
		out, err := helmTemplate(t, set)
		if err == nil {
			t.Errorf("--set %s accepted", set)
			continue
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("--set %s: error does not name %s:\n%s", set, want, out)
		}
	}
}
