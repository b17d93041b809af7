package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// Disturbances that cannot be applied safely, or make no sense, are refused
// at admission with the field they concern: an external target's pods and
// nodes are not the run's own, a drain needs its opt-in, an unknown kind is
// no kind.
func TestAdmissionOfDisturbances(t *testing.T) {
	ns := kit.Namespace(t, k8s, "adm-dist")
	d := func(v time.Duration) *metav1.Duration { return &metav1.Duration{Duration: v} }
	sqlLoad := benchv1.Disturbance{Name: "bg", At: d(30 * time.Second), Duration: d(time.Minute),
		SQLLoad: &benchv1.SQLLoadDisturbance{Sessions: 8, Statements: []string{"SELECT count(*) FROM generate_series(1, 100000000)"}}}
	loss := benchv1.Disturbance{Name: "failover", At: d(30 * time.Second), MemberLoss: &benchv1.MemberLossDisturbance{}}
	pgTarget := benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{Instances: 2}}
	run := func(target benchv1.TargetSpec, ds ...benchv1.Disturbance) *benchv1.BenchmarkRun {
		r := kit.PgbenchRun("dist", target, []int32{8}, 3)
		r.Namespace = ns
		r.Spec.Disturbances = &benchv1.DisturbancesSpec{Schedule: ds}
		return r
	}
	with := func(base benchv1.Disturbance, f func(*benchv1.Disturbance)) benchv1.Disturbance {
		d := base.DeepCopy()
		f(d)
		return *d
	}
	refused := map[string]struct {
		run  *benchv1.BenchmarkRun
		want []string
	}{
		"a member loss on an external target": {run(kit.ExternalDB(), loss), []string{"spec", "only sqlLoad"}},
		"a noisy neighbour on an external target": {run(kit.ExternalDB(), benchv1.Disturbance{Name: "noise", At: d(time.Minute), Duration: d(time.Minute),
			NoisyNeighbour: &benchv1.NoisyNeighbourDisturbance{CPUWorkers: 2}}), []string{"spec", "only sqlLoad"}},
		"administrator SQL on an external target without its Secret": {run(kit.ExternalDB(), sqlLoad), []string{"spec", "sqlLoad.secretRef"}},
		"a drain without the opt-in": {run(pgTarget, with(loss, func(x *benchv1.Disturbance) { x.MemberLoss.Action = benchv1.ActionDrainNode })),
			[]string{"spec.disturbances", "allowNodeDrain"}},
		"no kind": {run(pgTarget, benchv1.Disturbance{Name: "nothing", At: d(time.Minute), Duration: d(time.Minute)}),
			[]string{"spec.disturbances.schedule[0]", "exactly one kind"}},
		"two kinds": {run(pgTarget, with(sqlLoad, func(x *benchv1.Disturbance) { x.MemberLoss = &benchv1.MemberLossDisturbance{} })),
			[]string{"spec.disturbances.schedule[0]", "exactly one kind"}},
		"at and between": {run(pgTarget, with(sqlLoad, func(x *benchv1.Disturbance) {
			x.Between = &benchv1.OffsetRange{From: metav1.Duration{Duration: time.Second}, To: metav1.Duration{Duration: time.Minute}}
		})), []string{"spec.disturbances.schedule[0]", "either at"}},
		"a backwards range": {run(pgTarget, with(sqlLoad, func(x *benchv1.Disturbance) {
			x.At, x.Between = nil, &benchv1.OffsetRange{From: metav1.Duration{Duration: time.Minute}, To: metav1.Duration{Duration: time.Second}}
		})), []string{"spec.disturbances.schedule[0].between", "from must be before to"}},
		"a member loss with a duration": {run(pgTarget, with(loss, func(x *benchv1.Disturbance) { x.Duration = d(time.Minute) })),
			[]string{"spec.disturbances.schedule[0]", "takes none"}},
		"a SQL load without a duration": {run(pgTarget, with(sqlLoad, func(x *benchv1.Disturbance) { x.Duration = nil })),
			[]string{"spec.disturbances.schedule[0]", "duration is how long"}},
		"a switchover of a Valkey server": {run(benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}}, with(loss, func(x *benchv1.Disturbance) {
			x.MemberLoss = &benchv1.MemberLossDisturbance{Action: benchv1.ActionSwitchover}
		})), []string{"spec", "Switchover"}},
		"a shard primary of an unsharded target": {run(pgTarget, with(loss, func(x *benchv1.Disturbance) {
			x.MemberLoss = &benchv1.MemberLossDisturbance{Member: benchv1.MemberShardPrimary}
		})), []string{"spec", "ShardPrimary needs a Valkey Cluster"}},
		"a switchover of a replica": {run(pgTarget, with(loss, func(x *benchv1.Disturbance) {
			x.MemberLoss = &benchv1.MemberLossDisturbance{Action: benchv1.ActionSwitchover, Member: benchv1.MemberReplica}
		})), []string{"spec.disturbances.schedule[0].memberLoss", "member must be Primary"}},
		"a neighbour that does nothing": {run(pgTarget, benchv1.Disturbance{Name: "quiet", At: d(time.Minute), Duration: d(time.Minute),
			NoisyNeighbour: &benchv1.NoisyNeighbourDisturbance{}}), []string{"spec.disturbances.schedule[0].noisyNeighbour", "not noisy"}},
		"a bad name": {run(pgTarget, with(sqlLoad, func(x *benchv1.Disturbance) { x.Name = "Big Query" })),
			[]string{"spec.disturbances.schedule[0].name"}},
		"two with one name": {run(pgTarget, sqlLoad, with(loss, func(x *benchv1.Disturbance) { x.Name = sqlLoad.Name })),
			[]string{"spec.disturbances.schedule[1]", "Duplicate value"}},
		"loss of packets without a share": {run(pgTarget, benchv1.Disturbance{Name: "net", At: d(time.Minute), Duration: d(time.Minute),
			Network: &benchv1.NetworkDisturbance{Action: benchv1.NetworkLoss}}), []string{"spec.disturbances.schedule[0].network", "lossPercent"}},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			err := k8s.Create(context.Background(), tc.run, client.DryRunAll)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
		})
	}
	// An unknown kind is a field the schema does not know: with strict
	// field validation (kubectl's default) the API server names it.
	t.Run("an unknown kind", func(t *testing.T) {
		obj, err := jsonObject(map[string]any{"apiVersion": benchv1.GroupVersion.String(), "kind": "BenchmarkRun",
			"metadata": map[string]any{"name": "unknown-kind", "namespace": ns},
			"spec": map[string]any{"target": map[string]any{"postgres": map[string]any{"instances": 2}},
				"workload":     map[string]any{"pgbench": map[string]any{"clients": []int{8}, "duration": "10s"}},
				"disturbances": map[string]any{"schedule": []any{map[string]any{"name": "x", "at": "30s", "duration": "1m", "earthquake": map[string]any{}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		err = k8s.Create(context.Background(), obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
		if err == nil || !strings.Contains(err.Error(), "earthquake") {
			t.Fatalf("an unknown kind: %v", err)
		}
		// Without strict validation the unknown field is dropped, which
		// leaves no kind: refused all the same.
		err = k8s.Create(context.Background(), obj, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "exactly one kind") {
			t.Fatalf("an unknown kind, pruned: %v", err)
		}
	})
	accepted := map[string]*benchv1.BenchmarkRun{
		"every kind on a provisioned target": run(pgTarget, sqlLoad, loss,
			benchv1.Disturbance{Name: "noise", Between: &benchv1.OffsetRange{From: metav1.Duration{Duration: 20 * time.Second}, To: metav1.Duration{Duration: 40 * time.Second}},
				Duration: d(time.Minute), Repetitions: []int32{2, 3}, NoisyNeighbour: &benchv1.NoisyNeighbourDisturbance{CPUWorkers: 2, DiskWorkers: 1}},
			benchv1.Disturbance{Name: "net", At: d(time.Minute), Duration: d(time.Minute),
				Network: &benchv1.NetworkDisturbance{Action: benchv1.NetworkDelay, Latency: d(10 * time.Millisecond)}}),
		"SQL with the administrator's Secret on an external target": run(kit.ExternalDB(), with(sqlLoad, func(x *benchv1.Disturbance) {
			x.SQLLoad.SecretRef = &corev1.LocalObjectReference{Name: "admin"}
		})),
		"SQL as the workload's user on an external target": run(kit.ExternalDB(), with(sqlLoad, func(x *benchv1.Disturbance) {
			x.SQLLoad.Credentials = benchv1.CredentialsWorkload
		})),
	}
	drain := run(pgTarget, with(loss, func(x *benchv1.Disturbance) { x.MemberLoss.Action = benchv1.ActionDrainNode }))
	drain.Spec.Disturbances.AllowNodeDrain = true
	accepted["a drain with the opt-in"] = drain
	for name, r := range accepted {
		t.Run(name, func(t *testing.T) {
			if err := k8s.Create(context.Background(), r, client.DryRunAll); err != nil {
				t.Fatal(err)
			}
		})
	}
}
