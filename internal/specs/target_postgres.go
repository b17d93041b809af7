package specs

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// CNPGClusterGVK is CloudNativePG's Cluster kind. The operator talks to it
// as unstructured data so that it neither links CloudNativePG's Go API nor
// needs its CRD to start.
var CNPGClusterGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Cluster"}

// CNPG conventions the operator relies on.
const (
	CNPGHealthyPhase = "Cluster in healthy state"
	CNPGClusterLabel = "cnpg.io/cluster"
	CNPGPodRoleLabel = "cnpg.io/podRole"
	// CNPGInstanceRoleLabel is primary or replica on each instance pod,
	// kept up to date by CloudNativePG across switchovers.
	CNPGInstanceRoleLabel = "cnpg.io/instanceRole"
	CNPGDatabase          = "app"
	CNPGPort              = 5432
	cnpgAppSecretSufix    = "-app"
	cnpgRWServiceSufix    = "-rw"
)

// CNPGAppSecret is the Secret CloudNativePG creates with the app user's credentials.
func CNPGAppSecret(cluster string) string { return cluster + cnpgAppSecretSufix }

// CNPGSuperuserSecret holds the postgres superuser's credentials when
// superuser access is enabled.
func CNPGSuperuserSecret(cluster string) string { return cluster + "-superuser" }

// CNPGRWService is the Service that always points at the primary.
func CNPGRWService(cluster string) string { return cluster + cnpgRWServiceSufix }

// PostgresClusterName names the CloudNativePG Cluster of a postgres target.
func PostgresClusterName(run *benchv1.BenchmarkRun) string {
	return LabelName(run.Name, "pg", run.UID, MaxClusterNameLength)
}

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
	spec := map[string]any{
		"instances": int64(instances),
		"storage":   cnpgStorage(pg.Storage),
		"bootstrap": map[string]any{"initdb": map[string]any{"database": CNPGDatabase, "owner": CNPGDatabase}},
		// CloudNativePG copies these labels onto the pods it makes, which
		// puts them in the operator's pod cache (it caches only labelled pods).
		"inheritedMetadata": map[string]any{"labels": map[string]any{benchv1.LabelRunUID: string(run.UID), benchv1.LabelRole: benchv1.RoleTarget}},
	}
	if pg.ImageName != "" {
		spec["imageName"] = pg.ImageName
	}
	if ps := run.Spec.ImagePullSecrets; len(ps) > 0 {
		// CloudNativePG pulls its instances' image (and its own, for the
		// bootstrap) with them.
		refs := make([]any, 0, len(ps))
		for _, r := range ps {
			refs = append(refs, map[string]any{"name": r.Name})
		}
		spec["imagePullSecrets"] = refs
	}
	postgresql := map[string]any{}
	params := map[string]any{}
	for k, v := range pg.Parameters {
		params[k] = v
	}
	if d := run.Spec.Telemetry; d.Diagnostics.Mode != benchv1.TelemetryDisabled && d.ServerStatistics != benchv1.TelemetryDisabled && !statementsSet(pg.Parameters) {
		// A pg_stat_statements setting makes CloudNativePG load its
		// library (shared_preload_libraries); "top" is its default: the
		// diagnostics read the statements, and create the extension.
		params["pg_stat_statements.track"] = "top"
	}
	if len(params) > 0 {
		postgresql["parameters"] = params
	}
	if r := pg.Replication; r != nil && r.Mode == benchv1.ReplicationSynchronous && instances > 1 {
		// Quorum-based: a commit waits for any `number` standbys, and
		// waits rather than degrading when fewer are there.
		postgresql["synchronous"] = map[string]any{"method": "any", "number": int64(min(r.SynchronousReplicas, instances-1)), "dataDurability": "required"}
	}
	if len(postgresql) > 0 {
		spec["postgresql"] = postgresql
	}
	if w := pg.WALStorage; w != nil {
		spec["walStorage"] = cnpgStorage(*w)
	}
	if len(pg.Tablespaces) > 0 {
		var tbs []any
		for _, tb := range pg.Tablespaces {
			m := map[string]any{"name": tb.Name, "storage": cnpgStorage(tb.Storage)}
			if tb.Temporary {
				m["temporary"] = true
			}
			tbs = append(tbs, m)
		}
		spec["tablespaces"] = tbs
	}
	if len(pg.Resources.Limits) > 0 || len(pg.Resources.Requests) > 0 {
		res, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pg.Resources)
		if err != nil {
			return nil, err
		}
		spec["resources"] = res
	}
	t := &run.Spec.Target
	aff, err := cnpgAffinity(t.Placement)
	if err != nil {
		return nil, err
	}
	if instances > 1 && t.ReplicaPlacement != nil {
		if aff, err = cnpgRoleAffinity(t.Placement, *t.ReplicaPlacement); err != nil {
			return nil, err
		}
	}
	if instances > 1 {
		// A primary with replicas measures replication between machines:
		// never two instances on one node; a primary and one standby in
		// two zones asked for: never two instances in one zone.
		aff["enablePodAntiAffinity"] = true
		aff["podAntiAffinityType"] = "required"
		aff["topologyKey"] = "kubernetes.io/hostname"
		if p, r := t.Placement.Zone, t.ReplicasPlacement().Zone; instances == 2 && p != "" && r != "" && p != r {
			aff["topologyKey"] = benchv1.ZoneLabel
		}
	}
	if len(aff) > 0 {
		spec["affinity"] = aff
	}
	if superuser {
		spec["enableSuperuserAccess"] = true
	}
	meta := ObjectMeta(run, PostgresClusterName(run), benchv1.RoleTarget)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(CNPGClusterGVK)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	u.SetOwnerReferences(meta.OwnerReferences)
	return u, nil
}

// PostgresVolumes are a CloudNativePG target's volumes on each instance,
// as status.environment.volumes records them: data, WAL, tablespaces.
func PostgresVolumes(pg *benchv1.PostgresTarget) []benchv1.VolumeInfo {
	vol := func(purpose string, st benchv1.StorageSpec, temporary bool) benchv1.VolumeInfo {
		size := st.Size
		if size.IsZero() {
			size = resource.MustParse("10Gi")
		}
		return benchv1.VolumeInfo{Purpose: purpose, StorageClassName: ptr.Deref(st.StorageClassName, ""), Size: &size, Temporary: temporary}
	}
	out := []benchv1.VolumeInfo{vol("data", pg.Storage, false)}
	if pg.WALStorage != nil {
		out = append(out, vol("wal", *pg.WALStorage, false))
	}
	for _, tb := range pg.Tablespaces {
		out = append(out, vol("tablespace/"+tb.Name, tb.Storage, tb.Temporary))
	}
	return out
}

// cnpgStorage is CloudNativePG's storage stanza of a volume.
func cnpgStorage(st benchv1.StorageSpec) map[string]any {
	size := "10Gi"
	if !st.Size.IsZero() {
		size = st.Size.String()
	}
	out := map[string]any{"size": size}
	if st.StorageClassName != nil {
		out["storageClass"] = *st.StorageClassName
	}
	return out
}

// cnpgRoleAffinity places a cluster whose primary and standbys have
// placements of their own. CloudNativePG has one affinity for every
// instance, so each instance may use the nodes of either placement (their
// node selectors become two alternative node selector terms, the labels
// they share stay a node selector, the tolerations are both's); the
// provisioner then switches the primary over to an instance on the
// primary's placement and checks every standby is on the replicas'
// (PlacementOf). A user's own node affinity terms are each narrowed to
// their placement's selector.
func cnpgRoleAffinity(primary, replicas benchv1.Placement) (map[string]any, error) {
	ps, rs := primary.Selector(), replicas.Selector()
	common := map[string]any{}
	for k, v := range ps {
		if rs[k] == v {
			common[k] = v
		}
	}
	var terms []corev1.NodeSelectorTerm
	for _, pl := range []struct {
		sel map[string]string
		aff *corev1.Affinity
	}{{ps, primary.Affinity}, {rs, replicas.Affinity}} {
		var own []corev1.NodeSelectorRequirement
		for _, k := range slices.Sorted(maps.Keys(pl.sel)) {
			if _, shared := common[k]; !shared {
				own = append(own, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{pl.sel[k]}})
			}
		}
		user := []corev1.NodeSelectorTerm{{}}
		if a := pl.aff; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			user = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		}
		for _, u := range user {
			term := *u.DeepCopy()
			term.MatchExpressions = append(term.MatchExpressions, own...)
			// An empty term matches no node: a placement that adds nothing
			// to the shared selector leaves the choice to it.
			if len(term.MatchExpressions)+len(term.MatchFields) > 0 {
				terms = append(terms, term)
			}
		}
	}
	merged := benchv1.Placement{Tolerations: append(append([]corev1.Toleration{}, primary.Tolerations...), replicas.Tolerations...)}
	if primary.Affinity != nil {
		merged.Affinity = &corev1.Affinity{PodAffinity: primary.Affinity.PodAffinity, PodAntiAffinity: primary.Affinity.PodAntiAffinity}
	}
	out, err := cnpgAffinity(merged)
	if err != nil {
		return nil, err
	}
	if len(common) > 0 {
		out["nodeSelector"] = common
	}
	if len(terms) < 2 {
		// One placement is the shared selector alone: any node of it will do.
		return out, nil
	}
	na, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}})
	if err != nil {
		return nil, err
	}
	out["nodeAffinity"] = na
	return out, nil
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

// statementsSet says whether the spec's parameters set pg_stat_statements
// themselves.
func statementsSet(params map[string]string) bool {
	for k := range params {
		if strings.HasPrefix(k, "pg_stat_statements.") {
			return true
		}
	}
	return false
}
