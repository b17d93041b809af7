package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A replicated ClickHouse run: the API server refuses replicas without
// Keeper, with the field path. The operator creates the credentials, the
// configuration, the Services and the three StatefulSets (lead, replicas,
// Keeper), and the target is ready only when every one of them is; a
// second Ensure creates nothing new; Cleanup deletes every child.
func TestClickHouseTargetChildren(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	target := benchv1.TargetSpec{ClickHouse: &benchv1.ClickHouseTarget{Replicas: 3},
		Placement:        benchv1.Placement{NodeSelector: map[string]string{"pool": "db"}},
		ReplicaPlacement: &benchv1.Placement{NodeSelector: map[string]string{"pool": "db"}, Zone: "zone-b"}}

	bad := kit.PgbenchRun("ch-no-keeper", target, []int32{2}, 1)
	bad.Namespace = h.NS
	err := k8s.Create(ctx, bad)
	if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.target.clickhouse.keeper") ||
		!strings.Contains(err.Error(), "keeper is required with replicas above 1") {
		t.Fatalf("replicas without Keeper: %v, want refused at spec.target.clickhouse.keeper", err)
	}

	target.ClickHouse.Keeper = &benchv1.ClickHouseKeeper{Replicas: 3}
	h.Create(kit.PgbenchRun("ch", target, []int32{2}, 1))
	run := h.Run("ch")
	ch := specs.ClickHouseTargetFor(run)
	names := []string{"ch-clickhouse", "ch-clickhouse-replicas", "ch-clickhouse-keeper"}
	testutil.Eventually(t, 20*time.Second, "the ClickHouse children", func() error {
		for _, n := range names {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: n}, &appsv1.StatefulSet{}); err != nil {
				return err
			}
		}
		for _, svc := range ch.Services() {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{}); err != nil {
				return err
			}
		}
		for _, n := range []string{ch.ConfigMapName()} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: n}, &corev1.ConfigMap{}); err != nil {
				return err
			}
		}
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.CredentialsSecretName(run, specs.ClickHouseKind)}, &corev1.Secret{})
	})
	// No StatefulSet controller here: the test reports the pods ready, set
	// by set, and the run waits for the last.
	for i, n := range names {
		cond := meta.FindStatusCondition(h.Run("ch").Status.Conditions, benchv1.ConditionTargetReady)
		if cond == nil || cond.Status != "False" || !strings.Contains(cond.Message, n) {
			t.Errorf("before %s is ready: TargetReady %+v, want False waiting for %s", n, cond, n)
		}
		var sts appsv1.StatefulSet
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: n}, &sts); err != nil {
			t.Fatal(err)
		}
		sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.ObservedGeneration = *sts.Spec.Replicas, *sts.Spec.Replicas, sts.Generation
		if err := k8s.Status().Update(ctx, &sts); err != nil {
			t.Fatal(err)
		}
		if i < len(names)-1 {
			testutil.Eventually(t, 20*time.Second, "the run waiting for "+names[i+1], func() error {
				cond := meta.FindStatusCondition(h.Run("ch").Status.Conditions, benchv1.ConditionTargetReady)
				if cond == nil || !strings.Contains(cond.Message, names[i+1]) || strings.Contains(cond.Message, n+" ") {
					return fmt.Errorf("TargetReady %+v", cond)
				}
				return nil
			})
		}
	}
	testutil.Eventually(t, 20*time.Second, "TargetReady", func() error {
		if cond := meta.FindStatusCondition(h.Run("ch").Status.Conditions, benchv1.ConditionTargetReady); cond == nil || cond.Status != "True" {
			return fmt.Errorf("TargetReady %+v", cond)
		}
		return nil
	})
	run = h.Run("ch")
	if st := run.Status.Target; st == nil || st.Host != "ch-clickhouse."+h.NS+".svc" || st.Port != specs.ClickHousePort {
		t.Errorf("status.target %+v, want the lead's Service on %d", st, specs.ClickHousePort)
	}

	p, err := targets.For(run)
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Ensure(ctx, k8s, run, targets.Needs{})
	if err != nil || !o.Ready || o.Endpoint.Database != "bench" || o.Endpoint.Password == nil || o.Endpoint.Password.Name != "ch-clickhouse-credentials" {
		t.Errorf("Ensure again: %+v, %v", o, err)
	}
	h.StopManager() // from here on, nothing recreates what Cleanup deletes
	if err := p.Cleanup(ctx, k8s, run); err != nil {
		t.Fatal(err)
	}
	if err := p.Cleanup(ctx, k8s, run); err != nil {
		t.Fatalf("Cleanup again: %v", err)
	}
	var left []string
	for _, obj := range []client.ObjectList{&appsv1.StatefulSetList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}} {
		if err := k8s.List(ctx, obj, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelRunUID: string(run.UID), benchv1.LabelRole: benchv1.RoleTarget}); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(obj)
		for _, it := range items {
			o := it.(client.Object)
			if o.GetDeletionTimestamp() == nil {
				left = append(left, o.GetName())
			}
		}
	}
	if len(left) > 0 {
		t.Errorf("Cleanup left %v", left)
	}
}
