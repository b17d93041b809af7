package targets

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

func clickHouseClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&appsv1.StatefulSet{}).Build()
}

func clickHouseRun(t benchv1.ClickHouseTarget) *benchv1.BenchmarkRun {
	return &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "ch", Namespace: "perf", UID: "u1"},
		Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{ClickHouse: &t}}}
}

// One server: the credentials, configuration, Services and StatefulSet,
// not ready until its pod is; then the lead's HTTP endpoint with the
// database and the generated user.
func TestClickHouseEnsureOneServer(t *testing.T) {
	ctx, c := context.Background(), clickHouseClient(t)
	run := clickHouseRun(benchv1.ClickHouseTarget{Database: "ssb"})
	o, err := ClickHouse{}.Ensure(ctx, c, run, Needs{})
	if err != nil || o.Ready || o.Reason != benchv1.ReasonProvisioning {
		t.Fatalf("first Ensure: ready %v, %s: %s, %v", o.Ready, o.Reason, o.Message, err)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: "perf", Name: "ch-clickhouse"}, &sts); err != nil {
		t.Fatal(err)
	}
	var svcs corev1.ServiceList
	if err := c.List(ctx, &svcs); err != nil || len(svcs.Items) != 2 {
		t.Fatalf("%d Services (%v), want the client's and the headless one", len(svcs.Items), err)
	}
	sts.Status.ReadyReplicas = 1
	if err := c.Status().Update(ctx, &sts); err != nil {
		t.Fatal(err)
	}
	o, err = ClickHouse{}.Ensure(ctx, c, run, Needs{})
	ep := o.Endpoint
	if err != nil || !o.Ready || ep.Host != "ch-clickhouse.perf.svc" || ep.Port != 8123 || ep.Database != "ssb" ||
		ep.Username == nil || ep.Username.Name != "ch-clickhouse-credentials" || ep.Password == nil || ep.Password.Key != "password" {
		t.Errorf("second Ensure: ready %v (%s), endpoint %+v, %v", o.Ready, o.Message, ep, err)
	}
}

// Replicas without Keeper, past the API server: nothing is created, and
// the target says why.
func TestClickHouseEnsureRefusesReplicasWithoutKeeper(t *testing.T) {
	ctx, c := context.Background(), clickHouseClient(t)
	o, err := ClickHouse{}.Ensure(ctx, c, clickHouseRun(benchv1.ClickHouseTarget{Replicas: 3}), Needs{})
	if err != nil || o.Ready || o.Reason != benchv1.ReasonInvalidSpec {
		t.Errorf("Ensure: ready %v, %s: %s, %v", o.Ready, o.Reason, o.Message, err)
	}
	var sets appsv1.StatefulSetList
	if err := c.List(ctx, &sets); err != nil || len(sets.Items) != 0 {
		t.Errorf("%d StatefulSets created (%v)", len(sets.Items), err)
	}
}
