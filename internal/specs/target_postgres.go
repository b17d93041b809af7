package specs

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// CNPGClusterGVK is CloudNativePG's Cluster kind. The operator talks to it
// as unstructured data so that it neither links CloudNativePG's Go API nor
// needs its CRD to start.
var CNPGClusterGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Cluster"}

// CNPG conventions the operator relies on.
const (
	CNPGHealthyPhase   = "Cluster in healthy state"
	CNPGClusterLabel   = "cnpg.io/cluster"
	CNPGPodRoleLabel   = "cnpg.io/podRole"
	CNPGDatabase       = "app"
	CNPGPort           = 5432
	cnpgAppSecretSufix = "-app"
	cnpgRWServiceSufix = "-rw"
)

// CNPGAppSecret is the Secret CloudNativePG creates with the app user's credentials.
func CNPGAppSecret(cluster string) string { return cluster + cnpgAppSecretSufix }

// CNPGSuperuserSecret holds the postgres superuser's credentials when
// superuser access is enabled.
func CNPGSuperuserSecret(cluster string) string { return cluster + "-superuser" }

// CNPGRWService is the Service that always points at the primary.
func CNPGRWService(cluster string) string { return cluster + cnpgRWServiceSufix }

// PostgresClusterName names the CloudNativePG Cluster of a postgres target.
func PostgresClusterName(run *benchv1.BenchmarkRun) string { return ChildName(run, "pg") }

// CNPGCluster builds the CloudNativePG Cluster of a postgres target. With
// superuser, CloudNativePG enables the postgres superuser and writes its
// Secret (CNPGSuperuserSecret), for workloads that create their own
// databases and roles.
func CNPGCluster(run *benchv1.BenchmarkRun, superuser bool) (*unstructured.Unstructured, error) {
	pg := run.Spec.Target.Postgres
	instances := pg.Instances
	if instances < 1 {
		instances = 1
	}
	size := "10Gi"
	if !pg.Storage.Size.IsZero() {
		size = pg.Storage.Size.String()
	}
	storage := map[string]any{"size": size}
	if pg.Storage.StorageClassName != nil {
		storage["storageClass"] = *pg.Storage.StorageClassName
	}
	spec := map[string]any{
		"instances": int64(instances),
		"storage":   storage,
		"bootstrap": map[string]any{"initdb": map[string]any{"database": CNPGDatabase, "owner": CNPGDatabase}},
		// CloudNativePG copies these labels onto the pods it makes, which
		// puts them in the operator's pod cache (it caches only labelled pods).
		"inheritedMetadata": map[string]any{"labels": map[string]any{LabelRunUID: string(run.UID), LabelRole: RoleTarget}},
	}
	if pg.ImageName != "" {
		spec["imageName"] = pg.ImageName
	}
	if len(pg.Parameters) > 0 {
		params := map[string]any{}
		for k, v := range pg.Parameters {
			params[k] = v
		}
		spec["postgresql"] = map[string]any{"parameters": params}
	}
	if len(pg.Resources.Limits) > 0 || len(pg.Resources.Requests) > 0 {
		res, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pg.Resources)
		if err != nil {
			return nil, err
		}
		spec["resources"] = res
	}
	aff, err := cnpgAffinity(run.Spec.Target.Placement)
	if err != nil {
		return nil, err
	}
	if instances > 1 {
		// A primary with replicas measures replication between machines:
		// never two instances on one node.
		aff["enablePodAntiAffinity"] = true
		aff["podAntiAffinityType"] = "required"
		aff["topologyKey"] = "kubernetes.io/hostname"
	}
	if len(aff) > 0 {
		spec["affinity"] = aff
	}
	if superuser {
		spec["enableSuperuserAccess"] = true
	}
	meta := ObjectMeta(run, PostgresClusterName(run), RoleTarget)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(CNPGClusterGVK)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	u.SetOwnerReferences(meta.OwnerReferences)
	return u, nil
}

// cnpgAffinity maps a placement onto CloudNativePG's affinity stanza.
func cnpgAffinity(p benchv1.Placement) (map[string]any, error) {
	out := map[string]any{}
	if sel := p.Selector(); len(sel) > 0 {
		ns := map[string]any{}
		for k, v := range sel {
			ns[k] = v
		}
		out["nodeSelector"] = ns
	}
	if len(p.Tolerations) > 0 {
		var tols []any
		for i := range p.Tolerations {
			t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.Tolerations[i])
			if err != nil {
				return nil, err
			}
			tols = append(tols, t)
		}
		out["tolerations"] = tols
	}
	if a := p.Affinity; a != nil {
		if a.NodeAffinity != nil {
			na, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.NodeAffinity)
			if err != nil {
				return nil, err
			}
			out["nodeAffinity"] = na
		}
		if a.PodAffinity != nil {
			pa, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.PodAffinity)
			if err != nil {
				return nil, err
			}
			out["additionalPodAffinity"] = pa
		}
		if a.PodAntiAffinity != nil {
			pa, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.PodAntiAffinity)
			if err != nil {
				return nil, err
			}
			out["additionalPodAntiAffinity"] = pa
		}
	}
	return out, nil
}

// CNPGInstancePods selects the PostgreSQL instance pods of a cluster (not
// the pods of its initdb or join Jobs).
func CNPGInstancePods(cluster string) map[string]string {
	return map[string]string{CNPGClusterLabel: cluster, CNPGPodRoleLabel: "instance"}
}
