package specs

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The superuser is enabled (and its Secret written by CloudNativePG) only
// when the workload needs an administrator.
func TestCNPGClusterSuperuserOnlyWhenAsked(t *testing.T) {
	for name, superuser := range map[string]bool{"asked": true, "not asked": false} {
		t.Run(name, func(t *testing.T) {
			cluster, err := CNPGCluster(sampleRun(), superuser)
			if err != nil {
				t.Fatal(err)
			}
			got, found, _ := unstructured.NestedBool(cluster.Object, "spec", "enableSuperuserAccess")
			if got != superuser || found != superuser {
				t.Errorf("enableSuperuserAccess = %v (set: %v), want %v", got, found, superuser)
			}
		})
	}
}

// A primary in one zone and its standby in another: each instance may use
// either placement's nodes (two alternative node selector terms, the pool
// they share a node selector), never two in one zone, and the standbys'
// synchronous replication, WAL volume and tablespaces reach CloudNativePG.
func TestCNPGClusterAcrossZones(t *testing.T) {
	run := sampleRun()
	pg := run.Spec.Target.Postgres
	pg.Replication = &benchv1.PostgresReplication{Mode: benchv1.ReplicationSynchronous, SynchronousReplicas: 3}
	fast := "premium-ssd"
	pg.WALStorage = &benchv1.StorageSpec{Size: resource.MustParse("20Gi"), StorageClassName: &fast}
	pg.Tablespaces = []benchv1.PostgresTablespace{{Name: "temp_ts", Storage: benchv1.StorageSpec{Size: resource.MustParse("50Gi")}, Temporary: true}}
	run.Spec.Target.Placement.Zone = "zone-a"
	run.Spec.Target.ReplicaPlacement = &benchv1.Placement{NodeSelector: map[string]string{"pool": "standard-v4a"}, Zone: "zone-b"}
	cluster, err := CNPGCluster(run, false)
	if err != nil {
		t.Fatal(err)
	}
	spec := cluster.Object["spec"].(map[string]any)
	aff := spec["affinity"].(map[string]any)
	if got := aff["nodeSelector"]; !reflect.DeepEqual(got, map[string]any{"pool": "standard-v4a"}) {
		t.Errorf("nodeSelector = %v, want the shared pool only", got)
	}
	terms, _, _ := unstructured.NestedSlice(aff, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	var zones []string
	for _, term := range terms {
		exprs := term.(map[string]any)["matchExpressions"].([]any)
		if len(exprs) != 1 {
			t.Fatalf("term %v: want one expression (the zone)", term)
		}
		e := exprs[0].(map[string]any)
		if e["key"] != benchv1.ZoneLabel || e["operator"] != "In" {
			t.Errorf("term %v: want %s In", term, benchv1.ZoneLabel)
		}
		zones = append(zones, e["values"].([]any)[0].(string))
	}
	if !reflect.DeepEqual(zones, []string{"zone-a", "zone-b"}) {
		t.Errorf("node selector terms' zones = %v, want [zone-a zone-b]", zones)
	}
	if aff["topologyKey"] != benchv1.ZoneLabel || aff["podAntiAffinityType"] != "required" {
		t.Errorf("anti-affinity %v/%v, want required over zones for a primary and one standby", aff["topologyKey"], aff["podAntiAffinityType"])
	}
	// Two instances: at most one synchronous standby, whatever was asked.
	if got, _, _ := unstructured.NestedInt64(spec, "postgresql", "synchronous", "number"); got != 1 {
		t.Errorf("synchronous.number = %d, want 1 (instances-1)", got)
	}
	if m, _, _ := unstructured.NestedString(spec, "postgresql", "synchronous", "method"); m != "any" {
		t.Errorf("synchronous.method = %q", m)
	}
	if got, _, _ := unstructured.NestedString(spec, "postgresql", "parameters", "max_connections"); got != "400" {
		t.Errorf("parameters lost: max_connections = %q", got)
	}
	if got, _, _ := unstructured.NestedStringMap(spec, "walStorage"); !reflect.DeepEqual(got, map[string]string{"size": "20Gi", "storageClass": "premium-ssd"}) {
		t.Errorf("walStorage = %v", got)
	}
	tbs, _, _ := unstructured.NestedSlice(spec, "tablespaces")
	if len(tbs) != 1 || tbs[0].(map[string]any)["name"] != "temp_ts" || tbs[0].(map[string]any)["temporary"] != true {
		t.Errorf("tablespaces = %v", tbs)
	}
	vols := PostgresVolumes(pg)
	if len(vols) != 3 || vols[1].Purpose != "wal" || vols[1].StorageClassName != "premium-ssd" || vols[2].Purpose != "tablespace/temp_ts" || !vols[2].Temporary || vols[0].Size.String() != "10Gi" {
		t.Errorf("volumes = %+v", vols)
	}

	// Asynchronous (the default), the same zone for both: no synchronous
	// stanza, hostname anti-affinity, no alternative terms.
	pg.Replication = nil
	run.Spec.Target.ReplicaPlacement.Zone = "zone-a"
	cluster, err = CNPGCluster(run, false)
	if err != nil {
		t.Fatal(err)
	}
	spec = cluster.Object["spec"].(map[string]any)
	if _, found, _ := unstructured.NestedMap(spec, "postgresql", "synchronous"); found {
		t.Error("asynchronous replication has a synchronous stanza")
	}
	aff = spec["affinity"].(map[string]any)
	if _, found := aff["nodeAffinity"]; found || aff["topologyKey"] != "kubernetes.io/hostname" {
		t.Errorf("same placement for both: affinity %v", aff)
	}
	if got := aff["nodeSelector"]; !reflect.DeepEqual(got, map[string]any{"pool": "standard-v4a", benchv1.ZoneLabel: "zone-a"}) {
		t.Errorf("nodeSelector = %v", got)
	}
}
