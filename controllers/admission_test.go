package controllers

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// Bad specs are refused by the API server, with the field path, before the
// operator ever sees them.
func TestAdmissionRejectsBadSpecs(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "adm-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	// Accepted runs would be picked up by later tests' managers and hold
	// their nodes (envtest has no namespace controller to remove them).
	t.Cleanup(func() {
		_ = k8s.DeleteAllOf(context.Background(), &benchv1.BenchmarkRun{}, client.InNamespace(ns.Name))
	})
	good := func() *benchv1.BenchmarkRun {
		r := kit.PgbenchRun("bad", kit.ExternalDB(), []int32{8}, 1)
		r.Namespace = ns.Name
		return r
	}
	cases := map[string]struct {
		mutate func(*benchv1.BenchmarkRun)
		want   []string
	}{
		"two workloads": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload.Memtier = &benchv1.MemtierWorkload{Duration: metav1.Duration{Duration: time.Minute}}
		}, []string{"spec.workload", "exactly one of pgbench, memtier, redisBenchmark, ycsb, k6, osb, hammerdb, custom or queryBench"}},
		"no target": {func(r *benchv1.BenchmarkRun) { r.Spec.Target = benchv1.TargetSpec{} },
			[]string{"spec.target", "exactly one of postgres, valkey, mysql, mongodb, opensearch, clickhouse or external"}},
		"two targets": {func(r *benchv1.BenchmarkRun) { r.Spec.Target.Valkey = &benchv1.ValkeyTarget{} },
			[]string{"spec.target", "exactly one of"}},
		"capacity with a ladder and a search": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "clients", Levels: []int32{8, 16}, Search: &benchv1.CapacitySearch{Start: 8},
				Rules: benchv1.CapacityRules{MinGainPercent: ptrPercent(20)}}
		}, []string{"spec.capacity", "give either levels (an explicit ladder) or search, not both"}},
		"capacity without a rule": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "clients", Levels: []int32{8, 16}}
		}, []string{"spec.capacity.rules", "give at least one rule"}},
		"capacity over the measurement budget": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Repetitions = 10
			r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "clients", MaxLevels: 100, Search: &benchv1.CapacitySearch{Start: 8},
				Rules: benchv1.CapacityRules{MinGainPercent: ptrPercent(20)}}
		}, []string{"spec", "a capacity run makes at most 1000 measurements"}},
		"capacity search width and max": {func(r *benchv1.BenchmarkRun) {
			m := int32(8)
			r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "rate", Search: &benchv1.CapacitySearch{Start: 8, Max: &m, WidthPercent: 60},
				Rules: benchv1.CapacityRules{Latency: []benchv1.LatencyRule{{Percentile: 100, Max: metav1.Duration{Duration: time.Millisecond}}}}}
		}, []string{"spec.capacity.search.widthPercent", "must be between 0.1 and 50", "spec.capacity.search", "max must be above start",
			"spec.capacity.rules.latency[0].percentile", "must be above 0 and below 100"}},
		"capacity soak duration and percent": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "clients", Search: &benchv1.CapacitySearch{Start: 8},
				Rules: benchv1.CapacityRules{MinGainPercent: ptrPercent(20)},
				Soak:  &benchv1.CapacitySoak{Percent: 5, Duration: metav1.Duration{Duration: 73 * time.Hour}}}
		}, []string{"spec.capacity.soak.duration", "must be a duration between 30s and 72h", "spec.capacity.soak.percent", "should be greater than or equal to 10"}},
		"hammerdb in parallel": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{Parallelism: 2, HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, VirtualUsers: []int32{20}}}
		}, []string{"spec.workload", "parallelism above 1 is not possible for osb, hammerdb and queryBench"}},
		"hammerdb postgresql on mysql": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{}}
			r.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, VirtualUsers: []int32{20}}}
		}, []string{"workload.hammerdb.database must be the target's kind"}},
		"hammerdb on a clickhouse target": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{ClickHouse: &benchv1.ClickHouseTarget{}}
			r.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, VirtualUsers: []int32{20}}}
		}, []string{"workload.hammerdb.database must be the target's kind"}},
		"hammerdb build users above warehouses": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, Warehouses: 2, BuildVirtualUsers: 4, VirtualUsers: []int32{20}}}
		}, []string{"spec.workload.hammerdb", "buildVirtualUsers must not exceed warehouses"}},
		"replica placement without replicas": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{Instances: 1}, ReplicaPlacement: &benchv1.Placement{Zone: "zone-b"}}
		}, []string{"spec.target.replicaPlacement", "replicaPlacement needs replicas"}},
		"zone that is not a label value": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{}, Placement: benchv1.Placement{Zone: "zone a;"}}
		}, []string{"spec.target.placement.zone"}},
		"affinity weights out of 1–100": {func(r *benchv1.BenchmarkRun) {
			term := corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}
			r.Spec.Target = benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{}, Placement: benchv1.Placement{Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 0,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpExists}}}}}}}}}
			r.Spec.Workload.Placement.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 101, PodAffinityTerm: term}}}}
		}, []string{"spec.target.placement.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", "each preferred term's weight is 1 to 100",
			"spec.workload.placement.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"}},
		"synchronous without enough standbys": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{Instances: 2,
				Replication: &benchv1.PostgresReplication{Mode: benchv1.ReplicationSynchronous, SynchronousReplicas: 2}}}
		}, []string{"spec.target.postgres.replication.synchronousReplicas", "needs more instances than synchronousReplicas"}},
		"tablespace named like a system one": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{Tablespaces: []benchv1.PostgresTablespace{{Name: "pg_temp2"}}}}
		}, []string{"spec.target.postgres.tablespaces[0].name", "reserved"}},
		"valkey cluster with uneven nodes": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{Cluster: &benchv1.ValkeyCluster{Shards: 3, ReplicasPerShard: 1, InstancesPerNode: 4}}}
		}, []string{"spec.target.valkey.cluster", "instancesPerNode must divide"}},
		"valkey cluster and replicas": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{Replicas: 1, Cluster: &benchv1.ValkeyCluster{Shards: 3, InstancesPerNode: 1}}}
		}, []string{"spec.target.valkey", "a cluster's replicas are cluster.replicasPerShard"}},
		"session variable that could be SQL": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{SessionVariables: map[string]benchv1.SessionValue{"autocommit": "ON'; DROP TABLE x"}}}
		}, []string{"spec.target.mysql.sessionVariables.autocommit", "should match"}},
		"tls cipher with a space": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Enabled: true, Cipher: "TLS AES"}}}
		}, []string{"spec.target.mysql.tls.cipher"}},
		"two-way tls with a certificate brought by the user": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Enabled: true, RequireClientCertificates: true,
				CertificateSecretRef: &corev1.LocalObjectReference{Name: "mine"}}}}
		}, []string{"spec.target.mysql.tls.requireClientCertificates", "operator-generated certificate"}},
		"query workload with both query sources": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{Driver: benchv1.QueryDriverPostgres,
				Queries:          []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}},
				QueriesConfigMap: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "q"}, Key: "queries.sql"}}}
		}, []string{"spec.workload.queryBench", "exactly one of queries or queriesConfigMap"}},
		"query load from a file URL": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{Driver: benchv1.QueryDriverPostgres,
				Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}},
				Prepare: &benchv1.QueryPrepare{Loads: []benchv1.QueryLoad{{Table: "t", URL: "file:///etc/passwd"}}}}}
		}, []string{"spec.workload.queryBench.prepare.loads[0].url"}},
		"opensearch with 20 nodes": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{OpenSearch: &benchv1.OpenSearchTarget{Nodes: 20}}
		}, []string{"spec.target.opensearch.nodes"}},
		"no clients": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Pgbench.Clients = nil },
			[]string{"spec.workload.pgbench.clients"}},
		"hammerdb ramp-up not in whole minutes": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, VirtualUsers: []int32{20},
				RampUp: &metav1.Duration{Duration: 90 * time.Second}}}
		}, []string{"spec.workload.hammerdb.rampUp", "whole minutes"}},
		"hammerdb duration under a minute": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, VirtualUsers: []int32{20},
				Duration: &metav1.Duration{Duration: 30 * time.Second}}}
		}, []string{"spec.workload.hammerdb.duration", "whole minutes"}},
		"hammerdb database spelled as HammerDB's plugin": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: "postgresql", VirtualUsers: []int32{20}}}
		}, []string{"spec.workload.hammerdb.database", "postgres"}},
		"pgbench progress in fractions of a second": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload.Pgbench.ProgressInterval = &metav1.Duration{Duration: 1500 * time.Millisecond}
		}, []string{"spec.workload.pgbench.progressInterval", "whole seconds"}},
		"cpu percent below 1": {func(r *benchv1.BenchmarkRun) { r.Spec.Validity.MaxLoadGeneratorCPUPercent = 0.5 },
			[]string{"spec.validity.maxLoadGeneratorCPUPercent", "between 1 and 100"}},
		"coefficient of variation above 100": {func(r *benchv1.BenchmarkRun) { r.Spec.Validity.MaxCoefficientOfVariationPercent = 101 },
			[]string{"spec.validity.maxCoefficientOfVariationPercent"}},
		"zero clients": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Pgbench.Clients = []int32{0} },
			[]string{"spec.workload.pgbench.clients[0]"}},
		"jobs above clients": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Pgbench.Jobs = ptrInt32(16) },
			[]string{"spec.workload.pgbench", "jobs must not exceed"}},
		"zero repetitions": {func(r *benchv1.BenchmarkRun) { r.Spec.Repetitions = -1 },
			[]string{"spec.repetitions"}},
		"external host with a shell command": {func(r *benchv1.BenchmarkRun) { r.Spec.Target.External.Host = "127.0.0.1; touch /tmp/x" },
			[]string{"spec.target.external.host", "must be a DNS name"}},
		"port out of range": {func(r *benchv1.BenchmarkRun) { r.Spec.Target.External.Port = 70000 },
			[]string{"spec.target.external.port"}},
		"duration too short": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload.Pgbench.Duration = metav1.Duration{Duration: 100 * time.Millisecond}
		}, []string{"spec.workload.pgbench.duration"}},
		"error percent above 100": {func(r *benchv1.BenchmarkRun) { r.Spec.Validity.MaxErrorPercent = 100.5 },
			[]string{"spec.validity.maxErrorPercent"}},
		"cpu percent above 100": {func(r *benchv1.BenchmarkRun) { r.Spec.Validity.MaxLoadGeneratorCPUPercent = 150 },
			[]string{"spec.validity.maxLoadGeneratorCPUPercent"}},
		"bad cleanup": {func(r *benchv1.BenchmarkRun) { r.Spec.Cleanup = "Sometimes" },
			[]string{"spec.cleanup", "Always"}},
		// The steady-state fields (workload.warmup, validity.dipPercent,
		// maxDip, maxDriftPercent) are bounded in the schema.
		"a negative warm-up": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Warmup = &metav1.Duration{Duration: -time.Second} },
			[]string{"spec.workload.warmup", "between 0s and 24h"}},
		"a warm-up over a day": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Warmup = &metav1.Duration{Duration: 25 * time.Hour} },
			[]string{"spec.workload.warmup", "between 0s and 24h"}},
		"a dip under a second": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Validity.MaxDip = &metav1.Duration{Duration: 500 * time.Millisecond}
		},
			[]string{"spec.validity.maxDip", "between 1s and 24h"}},
		"a negative dip percent": {func(r *benchv1.BenchmarkRun) { r.Spec.Validity.DipPercent = -5 },
			[]string{"spec.validity.dipPercent"}},
		"a drift above 100 %": {func(r *benchv1.BenchmarkRun) { r.Spec.Validity.MaxDriftPercent = 150 },
			[]string{"spec.validity.maxDriftPercent"}},
		// The custom workload: placeholders name parameters, the image is
		// required, the operator's variables are its own.
		"custom: an unknown placeholder in args": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Args = []string{"--threads={{thread}}"}
		}, []string{"spec.workload.custom.args", "unknown placeholder"}},
		"custom: a double brace that begins no placeholder": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Args = []string{"--threads={{threads"}
		}, []string{"spec.workload.custom.args", "unknown placeholder"}},
		"custom: an unknown placeholder in the command": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Command = []string{"bench-{{mode}}"}
		}, []string{"spec.workload.custom.command", "unknown placeholder"}},
		"custom: an unknown placeholder in env": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Env = []benchv1.CustomEnvVar{{Name: "THREADS", Value: "{{clients}}"}}
		}, []string{"spec.workload.custom.env", "unknown placeholder"}},
		"custom: a placeholder in prepare": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Prepare = &benchv1.CustomPrepare{Command: []string{"load", "--threads={{threads}}"}}
		}, []string{"spec.workload.custom.prepare", "cannot hold the sweep's placeholders"}},
		"custom: no image": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Image = ""
		}, []string{"spec.workload.image", "custom needs image"}},
		"custom: an operator's variable": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Env = []benchv1.CustomEnvVar{{Name: "DBPERF_TARGET_HOST", Value: "elsewhere"}}
		}, []string{"spec.workload.custom.env[0].name", "DBPERF_ variables are set by the operator"}},
		"custom: an unknown format": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Format = "CSV"
		}, []string{"spec.workload.custom.format", "ResultJSON"}},
		"custom: a duration in fractions of a second": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Duration = &metav1.Duration{Duration: 1500 * time.Millisecond}
		}, []string{"spec.workload.custom.duration", "whole seconds"}},
		"custom: a result file in another directory": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.ResultFile = "../results.txt"
		}, []string{"spec.workload.custom.resultFile"}},
		"custom: a database that is not the target's": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}}
			r.Spec.Workload = kit.CustomWorkload()
		}, []string{"workload.custom.database must be the target's kind"}},
		"an external target's Secret without a name": {func(r *benchv1.BenchmarkRun) { r.Spec.Target.External.SecretRef = &corev1.LocalObjectReference{} },
			[]string{"spec.target.external.secretRef", "must name the Secret"}},
		"a storage class that is no name": {func(r *benchv1.BenchmarkRun) {
			class := "Fast SSD"
			r.Spec.Target = benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{ServerTarget: benchv1.ServerTarget{Storage: &benchv1.StorageSpec{StorageClassName: &class}}}}
		}, []string{"spec.target.valkey.storage.storageClassName"}},
		// A run makes at most benchv1.MaxMeasurements measurements: the
		// steps of its sweep times its repetitions.
		"1024 measurements: 32 clients, 32 repetitions": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload.Pgbench.Clients, r.Spec.Repetitions = seq(32), 32
		}, []string{"spec", "at most 1000 measurements"}},
		"1024 measurements: a 16 × 16 memtier grid, 4 repetitions": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Target = benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}}
			r.Spec.Workload = benchv1.WorkloadSpec{Memtier: &benchv1.MemtierWorkload{Threads: seq(16), Pipeline: seq(16), Duration: metav1.Duration{Duration: time.Minute}}}
			r.Spec.Repetitions = 4
		}, []string{"spec", "at most 1000 measurements"}},
		"1024 measurements: a custom sweep of 256 steps, 4 repetitions": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Parameters = []benchv1.CustomParameter{{Name: "threads", Values: seq(16)}, {Name: "conns", Values: seq(16)}}
			r.Spec.Repetitions = 4
		}, []string{"spec", "at most 1000 measurements"}},
		"a custom sweep of 1296 steps": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Parameters = []benchv1.CustomParameter{{Name: "threads", Values: seq(6)}, {Name: "a", Values: seq(6)},
				{Name: "b", Values: seq(6)}, {Name: "c", Values: seq(6)}}
		}, []string{"spec.workload.custom.parameters", "at most 256 steps"}},
		"1100 measurements: 11 clients, 100 repetitions": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload.Pgbench.Clients, r.Spec.Repetitions = seq(11), 100
		}, []string{"spec", "at most 1000 measurements"}},
		"custom: a declaration of nothing": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Workload = kit.CustomWorkload()
			r.Spec.Workload.Custom.Metrics = []benchv1.CustomMetric{{Name: "rows"}}
		}, []string{"spec.workload.custom.metrics[0]", "a unit, a direction or both"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := good()
			tc.mutate(r)
			err := k8s.Create(context.Background(), r)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("a fractional percent is a number like any other", func(t *testing.T) {
		r := good()
		r.Name = "fractional"
		r.Spec.Validity = benchv1.ValiditySpec{MaxErrorPercent: 0.5, MaxLoadGeneratorCPUPercent: 87.5, MaxCoefficientOfVariationPercent: 2.5, DipPercent: 50}
		if err := k8s.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		got := &benchv1.BenchmarkRun{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(r), got); err != nil || !reflect.DeepEqual(got.Spec.Validity, r.Spec.Validity) {
			t.Fatalf("validity stored as %+v (%v), want %+v", got.Spec.Validity, err, r.Spec.Validity)
		}
	})
	t.Run("accepted, with the dip percent defaulted", func(t *testing.T) {
		r := good()
		r.Name = "steady"
		r.Spec.Workload.Warmup = &metav1.Duration{Duration: 30 * time.Second}
		r.Spec.Validity = benchv1.ValiditySpec{MaxDip: &metav1.Duration{Duration: 5 * time.Second}, MaxDriftPercent: 12.5}
		if err := k8s.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		got := &benchv1.BenchmarkRun{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(r), got); err != nil {
			t.Fatal(err)
		}
		v := got.Spec.Validity
		if v.DipPercent != benchv1.Percent(50) || v.MaxDriftPercent != 12.5 || v.MaxDip.Duration != 5*time.Second || got.Spec.Workload.Warmup.Duration != 30*time.Second {
			t.Errorf("stored %+v, warm-up %v", v, got.Spec.Workload.Warmup)
		}
	})
	t.Run("custom, accepted", func(t *testing.T) {
		r := good()
		r.Name = "custom"
		r.Spec.Workload = kit.CustomWorkload()
		r.Spec.Workload.Custom.Env = []benchv1.CustomEnvVar{{Name: "PGHOST", Value: "$(DBPERF_TARGET_HOST)"}, {Name: "THREADS", Value: "{{threads}}"}}
		r.Spec.Workload.Custom.Args = []string{`--config={"pool":{"size":{{threads}}}}`, "{{threads}}x{{threads}}"}
		r.Spec.Workload.Custom.Prepare = &benchv1.CustomPrepare{Command: []string{"bench", "init"}}
		if err := k8s.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	})
	// A duration the API server stored without a rule could be any string,
	// and one that is not a Go duration made every list of runs
	// undecodable: the operator's cache of runs with it.
	for path, workload := range map[string]map[string]any{
		"spec.workload.k6.duration":           {"k6": map[string]any{"script": "x", "duration": "tFP"}},
		"spec.workload.ycsb.maxExecutionTime": {"ycsb": map[string]any{"binding": "basic", "coreWorkload": "a", "maxExecutionTime": "5 minutes"}},
	} {
		t.Run("a "+path+" that is no duration", func(t *testing.T) {
			obj, err := jsonObject(map[string]any{"apiVersion": benchv1.GroupVersion.String(), "kind": "BenchmarkRun",
				"metadata": map[string]any{"name": "no-duration", "namespace": ns.Name},
				"spec":     map[string]any{"target": map[string]any{"external": map[string]any{"host": "db", "port": 5432}}, "workload": workload}})
			if err != nil {
				t.Fatal(err)
			}
			if err := k8s.Create(context.Background(), obj, client.DryRunAll); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("a duration that is no duration: %v", err)
			}
		})
	}
	t.Run("1000 measurements, accepted", func(t *testing.T) {
		r := good()
		r.Name = "thousand"
		r.Spec.Workload.Pgbench.Clients, r.Spec.Repetitions = seq(10), 100
		if err := k8s.Create(context.Background(), r, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a comparison whose template makes 1100 measurements", func(t *testing.T) {
		cmp := kit.Comparison("too-many", benchv1.OrderInterleaved, 1)
		cmp.Namespace = ns.Name
		cmp.Spec.Template.Workload.Pgbench.Clients, cmp.Spec.Template.Repetitions = seq(11), 100
		err := k8s.Create(context.Background(), cmp, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "spec.template") || !strings.Contains(err.Error(), "at most 1000 measurements") {
			t.Fatalf("comparison: %v", err)
		}
	})
	t.Run("spec is immutable", func(t *testing.T) {
		r := good()
		r.Name = "frozen"
		if err := k8s.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		r.Spec.Repetitions = 5
		err := k8s.Update(context.Background(), r)
		if err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Fatalf("update of spec: %v", err)
		}
	})
}

func ptrInt32(v int32) *int32 { return &v }

// seq is 1, 2, …, n: n distinct values of a sweep.
func seq(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i + 1)
	}
	return out
}

// kubectl, against the same control plane: explain shows the documented
// fields, a bad manifest is refused with its field path, and `get` prints
// the phase and the primary metric.
func TestKubectl(t *testing.T) {
	h := newHarness(t)
	admin, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := admin.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	runK := func(args ...string) (string, string, error) {
		out, errOut, err := kubectl.Run(args...)
		o, _ := readAll(out)
		e, _ := readAll(errOut)
		return o, e, err
	}
	out, _, err := runK("explain", "benchmarkrun.spec")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	for _, f := range []string{"target", "workload", "repetitions", "timeout", "cleanup", "validity", "Repetitions is how many times"} {
		if !strings.Contains(out, f) {
			t.Errorf("kubectl explain lacks %q:\n%s", f, out)
		}
	}
	// Every condition type and reason the API declares is documented where
	// kubectl explain shows it: the conditions field of its kind's status.
	var explained string
	for _, kind := range []string{"benchmarkrun", "benchmarkcomparison", "benchmarkschedule"} {
		out, _, err := runK("explain", kind+".status.conditions")
		if err != nil {
			t.Fatalf("explain %s.status.conditions: %v", kind, err)
		}
		explained += out
	}
	for _, v := range declaredConditionWords(t) {
		if !regexp.MustCompile(`\b` + v + `\b`).MatchString(explained) {
			t.Errorf("kubectl explain of the status conditions does not mention %q, which api/v1alpha1 declares", v)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	manifest := `apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: bad
  namespace: ` + h.NS + `
spec:
  target:
    external: {host: db, port: 5432}
  workload:
    pgbench: {clients: [], duration: 5 minutes}
`
	if err := os.WriteFile(bad, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runK("apply", "-f", bad)
	if err == nil || !strings.Contains(stderr, "spec.workload.pgbench.clients") || !strings.Contains(stderr, "spec.workload.pgbench.duration") {
		t.Fatalf("kubectl apply of a bad spec: err %v, stderr %s", err, stderr)
	}

	node := h.LoadgenNode()
	run := kit.MeasureOnly("shown", 105, 1)
	h.Create(run)
	h.Replay(h.WaitJob(run.Name+"-s0-r1"), node, "pgbench", kit.Fixture(t, "pgbench", "pg14plus-tpcb-scale50-haproxy.txt"))
	h.WaitPhase("shown", 20*time.Second, benchv1.PhaseSucceeded)
	out, _, err = runK("get", "benchruns", "-n", h.NS)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"TARGET", "WORKLOAD", "PHASE", "PRIMARY", "VALID", "external", "pgbench", "Succeeded", "4414 tx/s", "True"} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl get lacks %q:\n%s", w, out)
		}
	}
}

// Without the CloudNativePG CRD a postgres run is refused with a condition
// and an event, and the operator keeps running.
func TestPostgresWithoutCNPGCRD(t *testing.T) {
	bare, err := kit.Start(false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bare.Stop() }()
	bareClient := bare.Client
	h := &harness{}
	h.H = kit.Detached(t, bareClient, "default", managerOptions, h.wire)
	h.StartManager(bare.Config)
	defer h.StopManager()
	run := kit.PgbenchRun("nocnpg", benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{}}, []int32{4}, 1)
	run.Namespace = "default"
	if err := bareClient.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 15*time.Second, "CRDNotInstalled condition and event", func() error {
		if err := bareClient.Get(context.Background(), client.ObjectKeyFromObject(run), run); err != nil {
			return err
		}
		c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionTargetReady)
		if c == nil || c.Reason != benchv1.ReasonCRDNotInstalled || !strings.Contains(c.Message, "CloudNativePG") {
			return fmt.Errorf("condition %+v", c)
		}
		var events corev1.EventList
		if err := bareClient.List(context.Background(), &events, client.InNamespace("default")); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == benchv1.ReasonCRDNotInstalled && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no %s event among %d", benchv1.ReasonCRDNotInstalled, len(events.Items))
	})
	if run.Status.Phase != benchv1.PhaseProvisioning {
		t.Fatalf("phase %s", run.Status.Phase)
	}
}

func readAll(r io.Reader) (string, error) {
	if r == nil {
		return "", nil
	}
	b, err := io.ReadAll(r)
	return string(b), err
}

// Every sample in config/samples and its subdirectories (the published
// comparisons in config/samples/published) is accepted by the API server as
// written, and every run it makes by the operator's own checks: a
// comparison's patched variants and each workload's Validate.
func TestSamplesAreValid(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "samples-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(testutil.RepoRoot(), "config", "samples")
	files, _ := filepath.Glob(filepath.Join(samples, "*.yaml"))
	nested, _ := filepath.Glob(filepath.Join(samples, "*", "*.yaml"))
	files = append(files, nested...)
	if len(nested) == 0 {
		t.Error("no sample in a subdirectory of config/samples (config/samples/published)")
	}
	validate := func(f string, spec *benchv1.BenchmarkRunSpec) {
		w, err := registry.For(&spec.Workload)
		if err == nil {
			err = w.Validate(&spec.Workload, field.NewPath("spec", "workload")).ToAggregate()
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	runs, comparisons, schedules := 0, 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			var sched benchv1.BenchmarkSchedule
			if err := yaml.Unmarshal([]byte(doc), &sched); err == nil && sched.Kind == "BenchmarkSchedule" {
				sched.Namespace = ns.Name
				if err := k8s.Create(context.Background(), &sched, client.DryRunAll); err != nil {
					t.Errorf("%s: %v", filepath.Base(f), err)
				}
				schedules++
				continue
			}
			var cmp benchv1.BenchmarkComparison
			if err := yaml.Unmarshal([]byte(doc), &cmp); err == nil && cmp.Kind == "BenchmarkComparison" {
				cmp.Namespace = ns.Name
				if err := k8s.Create(context.Background(), &cmp, client.DryRunAll); err != nil {
					t.Errorf("%s: %v", filepath.Base(f), err)
				}
				for _, v := range cmp.Spec.Variants {
					spec, err := comparison.VariantSpec(&cmp, v)
					if err != nil {
						t.Errorf("%s: %v", filepath.Base(f), err)
						continue
					}
					validate(filepath.Base(f)+": "+cmp.Name+"/"+v.Name, &spec)
				}
				comparisons++
				continue
			}
			var run benchv1.BenchmarkRun
			if err := yaml.Unmarshal([]byte(doc), &run); err != nil || run.Kind != "BenchmarkRun" {
				continue
			}
			run.Namespace = ns.Name
			if err := k8s.Create(context.Background(), &run, client.DryRunAll); err != nil {
				t.Errorf("%s: %v", filepath.Base(f), err)
			}
			validate(filepath.Base(f)+": "+run.Name, &run.Spec)
			runs++
		}
	}
	if runs < 4 || comparisons < 1 || schedules < 1 {
		t.Fatalf("only %d sample runs, %d comparisons and %d schedules found", runs, comparisons, schedules)
	}
}

// declaredConditionWords reads the values of the Condition* and Reason*
// constants of api/v1alpha1 from its source.
func declaredConditionWords(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	dir := filepath.Join(testutil.RepoRoot(), "api", "v1alpha1")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Condition") && !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						words = append(words, strings.Trim(lit.Value, `"`))
					}
				}
			}
		}
	}
	if len(words) < 10 {
		t.Fatalf("only %d condition types and reasons found in api/v1alpha1: %v", len(words), words)
	}
	return words
}

func ptrPercent(v float64) *benchv1.Percent { p := benchv1.Percent(v); return &p }
