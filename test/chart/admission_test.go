package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// admission.allowedImages renders a ValidatingAdmissionPolicy and its binding
// only when set, with the prefixes; controllers/admission_images_test.go
// applies them to a real API server.
func TestAllowedImagesPolicy(t *testing.T) {
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if n := len(ofKind(render(t), kind)); n != 0 {
			t.Errorf("%d %s rendered without admission.allowedImages", n, kind)
		}
	}

	objs := render(t, "admission.allowedImages={registry.internal/,docker.io/library/postgres:}")
	policy := one[admissionv1.ValidatingAdmissionPolicy](t, objs, "ValidatingAdmissionPolicy")
	binding := one[admissionv1.ValidatingAdmissionPolicyBinding](t, objs, "ValidatingAdmissionPolicyBinding")
	if binding.Spec.PolicyName != policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
		t.Errorf("binding %+v: want Deny of %s", binding.Spec, policy.Name)
	}
	if binding.Spec.MatchResources != nil {
		t.Errorf("binding limited to %+v without admission.namespaceSelector", binding.Spec.MatchResources)
	}
	if got := variable(t, policy, "allowed"); got != `["registry.internal/","docker.io/library/postgres:"]` {
		t.Errorf("allowed = %s", got)
	}
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].Resources, []string{"benchmarkruns", "benchmarkcomparisons", "benchmarkschedules"}) ||
		!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}) {
		t.Errorf("matches %+v: want create and update of runs, comparisons and schedules", rules)
	}
	if p := policy.Spec.FailurePolicy; p == nil || *p != admissionv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", p)
	}
	named := 0
	for _, v := range policy.Spec.Validations {
		if v.MessageExpression == "" {
			continue
		}
		named++
		for _, m := range []string{v.Message, v.MessageExpression} {
			if !strings.Contains(m, "registry.internal/, docker.io/library/postgres:") {
				t.Errorf("message %q does not name the prefixes", m)
			}
		}
	}
	if named != 1 {
		t.Errorf("%d validations name the field refused, want 1", named)
	}

	scoped := render(t, "admission.allowedImages={registry.internal/}", "admission.namespaceSelector.matchLabels.perf=restricted")
	sel := one[admissionv1.ValidatingAdmissionPolicyBinding](t, scoped, "ValidatingAdmissionPolicyBinding").Spec.MatchResources
	if sel == nil || sel.NamespaceSelector == nil || sel.NamespaceSelector.MatchLabels["perf"] != "restricted" {
		t.Errorf("binding match %+v: want namespaces labelled perf=restricted", sel)
	}
}

// Every image field of a BenchmarkRunSpec (a string property named image or
// imageName in the CRD's schema) is one the policy checks: a field added to
// the API cannot bypass the allow-list unnoticed.
func TestAllowedImagesPolicyCoversEveryImageField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "crd", "bases", "bench.dbperf.io_benchmarkruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	var fields []string
	var walk func(s apiextv1.JSONSchemaProps, path string)
	walk = func(s apiextv1.JSONSchemaProps, path string) {
		for name, p := range s.Properties {
			if strings.HasSuffix(strings.ToLower(name), "image") || strings.HasSuffix(strings.ToLower(name), "imagename") {
				fields = append(fields, strings.TrimPrefix(path+"."+name, "."))
			}
			walk(p, path+"."+name)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(*s.Items.Schema, path+"[]")
		}
	}
	walk(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"], "")
	if len(fields) < 8 {
		t.Fatalf("found only %v: is the walk broken?", fields)
	}
	policy := one[admissionv1.ValidatingAdmissionPolicy](t, render(t, "admission.allowedImages={registry.internal/}"), "ValidatingAdmissionPolicy")
	refused := variable(t, policy, "refused")
	for _, f := range fields {
		// Each field is named in the message and read through its own guard.
		sel := "s[1]." + f
		if !strings.Contains(refused, "s[0] + '."+f+"'") || !regexp.MustCompile(`\? `+regexp.QuoteMeta(sel)+` : null`).MatchString(refused) {
			t.Errorf("the policy does not check %s (charts/dbperf-operator/templates/admission-images.yaml)", f)
		}
	}
}

func variable(t *testing.T, p *admissionv1.ValidatingAdmissionPolicy, name string) string {
	t.Helper()
	for _, v := range p.Spec.Variables {
		if v.Name == name {
			return strings.TrimSpace(v.Expression)
		}
	}
	t.Fatalf("policy has no variable %s", name)
	return ""
}
