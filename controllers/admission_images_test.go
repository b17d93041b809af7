package controllers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The chart's image allow-list (admission.allowedImages), applied to the real
// API server: the ValidatingAdmissionPolicy and binding `helm template`
// renders refuse an image outside the list with the field's path and admit
// the rest, defaults included. The binding is limited to the test's namespace
// (admission.namespaceSelector) so that no other test sees the policy; every
// object is created with dry-run, which goes through the same admission but
// leaves nothing behind for the other tests' managers.
func TestAdmissionImageAllowList(t *testing.T) {
	if !serverServes(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy") {
		t.Skipf("the API server (%s) serves no admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or later): the allow-list needs it (docs/install.md)", serverVersion(t))
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "adm-img-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, obj := range renderAllowList(t, ns.Name, "registry.internal/", "docker.io/library/postgres:") {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatalf("applying the chart's %s: %v", obj.GetKind(), err)
		}
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), obj) })
	}

	run := func(image string) *benchv1.BenchmarkRun {
		r := kit.MeasureOnly("img", 4, 1)
		r.Namespace = ns.Name
		r.Spec.Workload.Image = image
		return r
	}
	// A new policy is enforced once the API server's informers have it.
	testutil.Eventually(t, 20*time.Second, "the policy refuses an image outside the list", func() error {
		if err := k8s.Create(ctx, run("evil.example/pgbench:17"), client.DryRunAll); err == nil {
			return errors.New("admitted")
		}
		return nil
	})

	postgresImage := func(image string) benchv1.BenchmarkRunSpec {
		s := kit.MeasureOnly("x", 4, 1).Spec
		s.Target = benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{ImageName: image}}
		return s
	}
	cmp := func(tmpl benchv1.BenchmarkRunSpec, patches ...string) *benchv1.BenchmarkComparison {
		c := kit.Comparison("img", benchv1.OrderInterleaved, 1)
		c.Namespace = ns.Name
		c.Spec.Template = tmpl
		for i, p := range patches {
			c.Spec.Variants[i].Patch = &apiextensionsv1.JSON{Raw: []byte(p)}
		}
		return c
	}
	schedule := func(spec benchv1.BenchmarkScheduleSpec) *benchv1.BenchmarkSchedule {
		spec.Regression = &benchv1.RegressionPolicy{Method: benchv1.RegressionThreshold, ThresholdPercent: 3, BaselineRuns: 5}
		return &benchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "img", Namespace: ns.Name}, Spec: spec}
	}
	const prefixes = "registry.internal/, docker.io/library/postgres:"
	cases := map[string]struct {
		obj     client.Object
		refused string // the field path in the message; empty: admitted
	}{
		"run: a workload image outside the list":        {run("evil.example/pgbench:17"), "spec.workload.image"},
		"run: a registry inside the list":               {run("registry.internal/tools/pgbench:17"), ""},
		"run: a repository inside the list":             {run("docker.io/library/postgres:17"), ""},
		"run: a short name the list does not spell out": {run("postgres:17"), "spec.workload.image"},
		"run: no image (the tool's default)":            {run(""), ""},
		"comparison: a target image outside the list in the template": {
			cmp(postgresImage("evil.example/postgres:17")), "spec.template.target.postgres.imageName"},
		"comparison: a variant patch setting an image outside the list": {
			cmp(postgresImage(""), `{"target":{"postgres":{"imageName":"registry.internal/pg:17"}}}`, `{"workload":{"image":"evil.example/pgbench:17"}}`),
			"spec.variants[1].patch.workload.image"},
		"comparison: a patch switching the target kind to an image outside the list": {
			cmp(postgresImage(""), `{"workload":{"image":null}}`, `{"target":{"postgres":null,"clickhouse":{"keeper":{"image":"evil.example/keeper:25"}}}}`),
			"spec.variants[1].patch.target.clickhouse.keeper.image"},
		"comparison: patches inside the list, or removing an image": {
			cmp(postgresImage("registry.internal/pg:16"), `{"target":{"postgres":{"imageName":null}}}`, `{"target":{"postgres":null,"valkey":{"image":"registry.internal/valkey:8"}}}`), ""},
		"schedule: a run template outside the list": {
			schedule(benchv1.BenchmarkScheduleSpec{RunTemplate: &benchv1.RunTemplate{Spec: run("evil.example/pgbench:17").Spec}}),
			"spec.runTemplate.spec.workload.image"},
		"schedule: a comparison template's patch outside the list": {
			schedule(benchv1.BenchmarkScheduleSpec{ComparisonTemplate: &benchv1.ComparisonTemplate{
				Spec: cmp(postgresImage(""), `{"target":{"postgres":{"imageName":"evil.example/postgres:17"}}}`).Spec}}),
			"spec.comparisonTemplate.spec.variants[0].patch.target.postgres.imageName"},
		"schedule: a run template inside the list": {
			schedule(benchv1.BenchmarkScheduleSpec{RunTemplate: &benchv1.RunTemplate{Spec: postgresImage("registry.internal/pg:17")}}), ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := k8s.Create(ctx, tc.obj, client.DryRunAll)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("admitted")
			}
			// Invalid (422), which the comparison controller takes for its
			// variant's error instead of retrying.
			if !apierrors.IsInvalid(err) {
				t.Errorf("refused as %v, want Invalid", apierrors.ReasonForError(err))
			}
			for _, want := range []string{tc.refused + ": image ", prefixes} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// renderAllowList is the chart's policy and binding for these prefixes,
// bound to one namespace.
func renderAllowList(t *testing.T, namespace string, prefixes ...string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(testutil.NeedEnv(t, "HELM"), "template", namespace, filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"),
		"--namespace", "perf-system", "--show-only", "templates/admission-images.yaml",
		"--set", "admission.allowedImages={"+strings.Join(prefixes, ",")+"}",
		"--set-string", `admission.namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=`+namespace)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	if len(objs) != 2 {
		t.Fatalf("want a policy and a binding, got %d objects:\n%s", len(objs), out)
	}
	return objs
}
