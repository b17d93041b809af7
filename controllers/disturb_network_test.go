package controllers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// chaosMeshCRD is Chaos Mesh's NetworkChaos as far as the operator uses
// it: its schema is Chaos Mesh's business (kept unknown here).
func chaosMeshCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "networkchaos.chaos-mesh.org"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "chaos-mesh.org", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "networkchaos", Singular: "networkchaos", Kind: "NetworkChaos", ListKind: "NetworkChaosList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// A network disturbance needs Chaos Mesh: without its CRDs the run fails
// before it measures, naming the field and what is missing. With them,
// the NetworkChaos is created on the target's pods for the window, takes
// effect when Chaos Mesh reports it injected, is deleted when the window
// ends, and nothing of it outlives the measurement.
func TestNetworkDisturbanceThroughChaosMesh(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	rd := testutil.StartRedis(t)
	netRun := func(name string) *benchv1.BenchmarkRun {
		return &benchv1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: benchv1.BenchmarkRunSpec{
				Target:    benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}},
				Workload:  benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Clients: []int32{4}}},
				Telemetry: benchv1.TelemetrySpec{ServerStatistics: benchv1.TelemetryDisabled},
				Disturbances: &benchv1.DisturbancesSpec{Schedule: []benchv1.Disturbance{{Name: "slow-net",
					At: &metav1.Duration{Duration: time.Second}, Duration: &metav1.Duration{Duration: 2 * time.Second},
					Network: &benchv1.NetworkDisturbance{Action: benchv1.NetworkDelay, Latency: &metav1.Duration{Duration: 20 * time.Millisecond}}}}},
			},
		}
	}
	if _, err := h.Client.RESTMapper().RESTMapping(networkChaosGVK.GroupKind(), "v1alpha1"); err == nil {
		t.Skip("Chaos Mesh's CRD is installed already (another run of this test in the same API server)")
	}
	h.Create(netRun("no-chaos-mesh"))
	refused := h.WaitPhase("no-chaos-mesh", 20*time.Second, benchv1.PhaseFailed)
	if c := findCondition(refused, benchv1.ConditionCompleted); c == nil || !strings.Contains(c.Message, "spec.disturbances.schedule[0].network") ||
		!strings.Contains(c.Message, "Chaos Mesh is not installed") {
		t.Fatalf("refused without naming the field and Chaos Mesh: %+v", c)
	}

	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{chaosMeshCRD()}}); err != nil {
		t.Fatal(err)
	}
	h.Create(netRun("chaos"))
	run := h.Run("chaos")
	markServerReady(t, h, specs.ValkeyName(run))
	target := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ValkeyName(run) + "-0", Namespace: h.NS, Labels: specs.ValkeyServer(run).Selector()},
		Spec:       corev1.PodSpec{NodeName: "db-1", Containers: []corev1.Container{{Name: "valkey", Image: "valkey/valkey:8.1"}}},
	}
	if err := k8s.Create(ctx, target); err != nil {
		t.Fatal(err)
	}
	lg := h.Pod(h.WaitJob(specs.MeasureJobName(run, 0, 1)), 0, node, kit.Running())
	chaos := &unstructured.Unstructured{}
	chaos.SetGroupVersionKind(networkChaosGVK)
	name := specs.NoisePodName(run, "slow-net", 0, 1)
	testutil.Eventually(t, 20*time.Second, "the NetworkChaos", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, chaos)
	})
	action, _, _ := unstructured.NestedString(chaos.Object, "spec", "action")
	latency, _, _ := unstructured.NestedString(chaos.Object, "spec", "delay", "latency")
	selector, _, _ := unstructured.NestedStringMap(chaos.Object, "spec", "selector", "labelSelectors")
	if action != "delay" || latency != "20ms" || selector[benchv1.LabelRunUID] != string(run.UID) {
		t.Errorf("NetworkChaos %v: action %q latency %q selector %v", name, action, latency, selector)
	}
	// Chaos Mesh injects it.
	_ = unstructured.SetNestedSlice(chaos.Object, []any{map[string]any{"type": "AllInjected", "status": "True"}}, "status", "conditions")
	if err := k8s.Status().Update(ctx, chaos); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "the NetworkChaos deleted at the end of its window", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, chaos)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%w)", err)
	})
	tool := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "4", "-n", "5000", "-t", "set", "--csv"}
	h.End(lg, "redis-benchmark", runner.Options{Command: tool})
	done := h.WaitPhase("chaos", 30*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid)
	d := h.ResultsDocument(t, done).Steps[0].Repetitions[0].Result.Disturbances
	if len(d) != 1 || d[0].Requested == nil || d[0].TookEffect == nil || d[0].Ended == nil || d[0].Removed == nil || d[0].Refused {
		t.Errorf("the result does not keep what the NetworkChaos did: %+v", d)
	}
}
