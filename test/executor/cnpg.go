package executor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// CloudNativePG's part, played with a local PostgreSQL: the simulated
// cluster has CloudNativePG's CRDs but not its operator, whose instance
// manager needs a real kubelet. For a Cluster, PlayCloudNativePG makes what
// CloudNativePG makes (instance pods with its labels and affinity, the -app
// and superuser Secrets, the -rw Service) with the Service pointing at the
// local server, reports the Cluster healthy, and then plays switchovers.
// The end-to-end tests call it with servers of their own; the embedded
// cluster's executor (Options.PlayCloudNativePG) with one server per
// Cluster.

// ClusterGVR is CloudNativePG's Cluster.
var ClusterGVR = schema.GroupVersionResource{Group: "postgresql.cnpg.io", Version: "v1", Resource: "clusters"}

// PlayCloudNativePG plays the Cluster ns/name with the server pg once the
// Cluster exists; it returns when the Cluster is reported healthy (switch-
// overs go on in the background until ctx ends) or on an error.
func PlayCloudNativePG(ctx context.Context, core kubernetes.Interface, dyn dynamic.Interface, ns, name string, pg *localdb.Postgres,
	logf func(format string, args ...any)) error {
	var cl *unstructured.Unstructured
	for ctx.Err() == nil {
		var err error
		if cl, err = dyn.Resource(ClusterGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	pods, err := cnpgInstances(ctx, core, cl)
	if err != nil {
		return err
	}
	if err := cnpgObjects(ctx, core, cl, pg); err != nil {
		return err
	}
	applyParameters(cl, pg, logf)
	for _, pod := range pods {
		for ctx.Err() == nil {
			p, err := core.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err == nil && p.Status.Phase == corev1.PodRunning {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	status := func(primary string) error {
		patch := fmt.Sprintf(`{"status":{"phase":%q,"instances":%d,"readyInstances":%d,"currentPrimary":%q,"targetPrimary":%q}}`,
			specs.CNPGHealthyPhase, len(pods), len(pods), primary, primary)
		_, err := dyn.Resource(ClusterGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		return err
	}
	first := pods[0]
	if len(pods) > 1 {
		// The scheduler put the instances where it would; CloudNativePG's
		// first primary is the one on the replicas' side (the last zone the
		// node affinity names), so that the operator must switch over.
		affinity, _ := cnpgPodAffinity(cl)
		if p, ok := instanceInZone(ctx, core, ns, pods, lastAffinityZone(affinity)); ok && p != first {
			first = p
			if err := setRoles(ctx, core, ns, pods, first); err != nil {
				return err
			}
		}
	}
	if err := status(first); err != nil {
		return fmt.Errorf("marking the Cluster healthy: %w", err)
	}
	if len(pods) > 1 {
		go playSwitchovers(ctx, core, dyn, ns, name, pods, status, logf, pg)
	}
	return nil
}

// cnpgInstances creates the Cluster's instance pods, the first its primary.
func cnpgInstances(ctx context.Context, core kubernetes.Interface, cl *unstructured.Unstructured) ([]string, error) {
	ns, name := cl.GetNamespace(), cl.GetName()
	affinity, err := cnpgPodAffinity(cl)
	if err != nil {
		return nil, err
	}
	nodeSelector, _, _ := unstructured.NestedStringMap(cl.Object, "spec", "affinity", "nodeSelector")
	instances, _, _ := unstructured.NestedInt64(cl.Object, "spec", "instances")
	var pods []string
	for i := 1; i <= int(max(instances, 1)); i++ {
		// CloudNativePG puts spec.inheritedMetadata's labels (the run's UID
		// and role) on every object of the cluster, the instance pods among them.
		labels, _, _ := unstructured.NestedStringMap(cl.Object, "spec", "inheritedMetadata", "labels")
		if labels == nil {
			labels = map[string]string{}
		}
		role := "replica"
		if i == 1 {
			role = "primary"
		}
		for k, v := range map[string]string{"cnpg.io/cluster": name, "cnpg.io/instanceRole": role, "cnpg.io/podRole": "instance", "role": role} {
			labels[k] = v
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns, OwnerReferences: cnpgOwner(cl), Labels: labels},
			Spec: corev1.PodSpec{NodeSelector: nodeSelector, Affinity: affinity,
				Containers: []corev1.Container{{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:17"}}},
		}
		if err := ignoreExists(core.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})); err != nil {
			return nil, err
		}
		pods = append(pods, pod.Name)
	}
	return pods, nil
}

func cnpgOwner(cl *unstructured.Unstructured) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "postgresql.cnpg.io/v1", Kind: "Cluster", Name: cl.GetName(), UID: cl.GetUID(), Controller: ptr.To(true)}}
}

// cnpgObjects makes the Secrets CloudNativePG makes and the -rw Service,
// which the executor's forwarder sends to the local server, and the
// database CloudNativePG bootstraps (spec.bootstrap.initdb: "app").
func cnpgObjects(ctx context.Context, core kubernetes.Interface, cl *unstructured.Unstructured, pg *localdb.Postgres) error {
	ns, name, owner := cl.GetNamespace(), cl.GetName(), cnpgOwner(cl)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-app", Namespace: ns, OwnerReferences: owner},
		StringData: map[string]string{"username": pg.User, "password": pg.Password, "dbname": "postgres"}}
	// enableSuperuserAccess: the postgres superuser's Secret (HammerDB
	// builds its schema and user with it).
	superuser := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: specs.CNPGSuperuserSecret(name), Namespace: ns, OwnerReferences: owner},
		StringData: map[string]string{"username": pg.User, "password": pg.Password}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-rw", Namespace: ns, OwnerReferences: owner,
			Annotations: map[string]string{BackendAnnotation: fmt.Sprintf("127.0.0.1:%d", pg.Port)}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "postgres", Port: 5432}},
			Selector: map[string]string{"cnpg.io/cluster": name, "role": "primary"}}}
	if out, err := pg.Query("SELECT 1 FROM pg_database WHERE datname = 'app'"); err != nil {
		return err
	} else if out == "" {
		if err := pg.SQL("CREATE DATABASE app"); err != nil {
			return err
		}
	}
	for _, err := range []error{
		ignoreExists(core.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})),
		ignoreExists(core.CoreV1().Secrets(ns).Create(ctx, superuser, metav1.CreateOptions{})),
		ignoreExists(core.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func setRoles(ctx context.Context, core kubernetes.Interface, ns string, pods []string, primary string) error {
	for _, pod := range pods {
		role := map[bool]string{true: "primary", false: "replica"}[pod == primary]
		patch := fmt.Sprintf(`{"metadata":{"labels":{"cnpg.io/instanceRole":%q,"role":%q}}}`, role, role)
		if _, err := core.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// lastAffinityZone is the zone the last required node selector term of an
// affinity names (the replicas' placement of a split cluster), or "".
func lastAffinityZone(a *corev1.Affinity) string {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return ""
	}
	for _, e := range terms[len(terms)-1].MatchExpressions {
		if e.Key == corev1.LabelTopologyZone && len(e.Values) == 1 {
			return e.Values[0]
		}
	}
	return ""
}

// instanceInZone is the instance pod whose node is in zone.
func instanceInZone(ctx context.Context, core kubernetes.Interface, ns string, pods []string, zone string) (string, bool) {
	if zone == "" {
		return "", false
	}
	for _, pod := range pods {
		p, err := core.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			continue
		}
		n, err := core.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err == nil && n.Labels[corev1.LabelTopologyZone] == zone {
			return pod, true
		}
	}
	return "", false
}

// Failover is how the stand-in plays CloudNativePG's failover when an
// instance's pod is deleted: the primary's sessions are terminated at
// once and new ones refused (ALLOW_CONNECTIONS false on every database)
// for Delay, then a standby is promoted (role labels, currentPrimary) and
// the lost instance's pod made again as a replica, every instance ready
// after Rejoin. A replica's loss costs no session: it is made again and
// ready after Rejoin.
type Failover struct {
	Delay, Rejoin time.Duration
}

// DefaultFailover is the stand-in's failover: 2 s to promote (CloudNativePG's
// failover delay and promotion are about that on a healthy cluster), 2 s
// for the old primary to rejoin.
var DefaultFailover = Failover{Delay: 2 * time.Second, Rejoin: 2 * time.Second}

// LoseWritesAnnotation, on a played Cluster, makes its failovers lose the
// writes of the ledger (rows of every dbperf_ledger table) made in the
// stretch before the loss it names ("1s"): what an asynchronous standby
// that had not received them loses, so that a test sees the write
// ledger name them.
const LoseWritesAnnotation = "test.dbperf.io/lose-writes-on-failover"

// playSwitchovers moves the primary's role labels when the Cluster's
// status asks for another primary, then reports it current and healthy;
// it plays a failover when an instance's pod is deleted.
func playSwitchovers(ctx context.Context, core kubernetes.Interface, dyn dynamic.Interface, ns, name string, pods []string,
	status func(string) error, logf func(string, ...any), pg *localdb.Postgres) {
	uids := map[string]types.UID{}
	for ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		cl, err := dyn.Resource(ClusterGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		current, _, _ := unstructured.NestedString(cl.Object, "status", "currentPrimary")
		target, _, _ := unstructured.NestedString(cl.Object, "status", "targetPrimary")
		if lost := lostInstance(ctx, core, ns, pods, uids); lost != "" && (target == "" || target == current) && clusterLives(ctx, dyn, ns, name) {
			if err := playFailover(ctx, core, dyn, cl, pods, lost, current, pg, logf); err != nil && ctx.Err() == nil {
				logf("CloudNativePG (played): %s lost %s: %v", name, lost, err)
			}
			for _, p := range pods { // the pods made again
				if got, err := core.CoreV1().Pods(ns).Get(ctx, p, metav1.GetOptions{}); err == nil {
					uids[p] = got.UID
				}
			}
			continue
		}
		if target == "" || target == current {
			continue
		}
		if err := setRoles(ctx, core, ns, pods, target); err != nil {
			if ctx.Err() == nil {
				logf("CloudNativePG (played): switching %s over to %s: %v", name, target, err)
			}
			return
		}
		if err := status(target); err != nil {
			if ctx.Err() == nil {
				logf("CloudNativePG (played): switching %s over to %s: %v", name, target, err)
			}
			return
		}
		logf("CloudNativePG (played): %s switched over from %s to %s", name, current, target)
	}
}

// cnpgPodAffinity is the affinity CloudNativePG gives its instance pods:
// the Cluster's node affinity, and with enablePodAntiAffinity its
// required anti-affinity among the cluster's instances over topologyKey.
func cnpgPodAffinity(cl *unstructured.Unstructured) (*corev1.Affinity, error) {
	aff := &corev1.Affinity{}
	if na, ok, _ := unstructured.NestedMap(cl.Object, "spec", "affinity", "nodeAffinity"); ok {
		aff.NodeAffinity = &corev1.NodeAffinity{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(na, aff.NodeAffinity); err != nil {
			return nil, err
		}
	}
	if on, _, _ := unstructured.NestedBool(cl.Object, "spec", "affinity", "enablePodAntiAffinity"); on {
		key, _, _ := unstructured.NestedString(cl.Object, "spec", "affinity", "topologyKey")
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"cnpg.io/cluster": cl.GetName(), "cnpg.io/podRole": "instance"}},
			TopologyKey:   key,
		}}}
	}
	return aff, nil
}

func ignoreExists[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// playedCluster is a Cluster played with a local PostgreSQL of its own.
type playedCluster struct {
	pg     *localdb.Postgres
	cancel context.CancelFunc
}

// playClusters plays each new CloudNativePG Cluster (Options.PlayServers)
// with a PostgreSQL of its own, and stops the server of a Cluster that is
// gone. Without CloudNativePG's CRDs it does nothing.
func (e *Executor) playClusters(ctx context.Context) error {
	if !e.o.PlayServers || e.o.Dynamic == nil || time.Since(e.lastClusters) < playInterval {
		return nil
	}
	e.lastClusters = time.Now()
	list, err := e.o.Dynamic.Resource(ClusterGVR).Namespace("").List(ctx, metav1.ListOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil // CloudNativePG's CRDs are not installed
		}
		return err
	}
	live := map[types.UID]bool{}
	for i := range list.Items {
		cl := &list.Items[i]
		if cl.GetDeletionTimestamp() != nil {
			continue
		}
		live[cl.GetUID()] = true
		e.mu.Lock()
		_, known := e.clusters[cl.GetUID()]
		if !known {
			e.clusters[cl.GetUID()] = &playedCluster{}
		}
		e.mu.Unlock()
		if known {
			continue
		}
		go e.playCluster(ctx, cl.GetNamespace(), cl.GetName(), cl.GetUID())
	}
	e.mu.Lock()
	var gone []*playedCluster
	for uid, c := range e.clusters {
		if !live[uid] {
			gone = append(gone, c)
			delete(e.clusters, uid)
		}
	}
	e.mu.Unlock()
	for _, c := range gone {
		c.stop()
	}
	return nil
}

func (e *Executor) playCluster(ctx context.Context, ns, name string, uid types.UID) {
	pg, err := localdb.StartPostgres()
	if err != nil {
		e.logf("CloudNativePG (played): Cluster %s/%s: no local PostgreSQL: %v", ns, name, err)
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	c, ok := e.clusters[uid]
	if ok {
		c.pg, c.cancel = pg, cancel
	}
	e.mu.Unlock()
	if !ok { // gone meanwhile
		cancel()
		pg.Stop()
		return
	}
	defer func() {
		if cctx.Err() != nil {
			cancel()
		}
	}()
	e.logf("CloudNativePG (played): Cluster %s/%s is PostgreSQL at 127.0.0.1:%d", ns, name, pg.Port)
	// The Cluster's context ends with it (playedCluster.stop) or the
	// executor; switchovers are played until then.
	if err := PlayCloudNativePG(cctx, e.o.Client, e.o.Dynamic, ns, name, pg, e.logf); err != nil && cctx.Err() == nil { //nolint:contextcheck
		e.logf("CloudNativePG (played): Cluster %s/%s: %v", ns, name, err)
	}
}

func (c *playedCluster) stop() {
	if c.cancel != nil {
		c.cancel()
	}
	if c.pg != nil {
		c.pg.Stop()
	}
}

// lostInstance is an instance whose pod is gone, or deleted, or made again
// since it was seen (another UID); "" when none. uids learns the pods.
func lostInstance(ctx context.Context, core kubernetes.Interface, ns string, pods []string, uids map[string]types.UID) string {
	for _, name := range pods {
		p, err := core.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, seen := uids[name]; seen {
				return name
			}
		case err != nil:
		case p.DeletionTimestamp != nil:
			return name
		case uids[name] == "":
			uids[name] = p.UID
		case uids[name] != p.UID:
			return name
		}
	}
	return ""
}

// playFailover plays CloudNativePG losing instance lost (the primary when
// it is current): sessions terminated and refused for the failover delay,
// a standby promoted, the instance made again as a replica, every instance
// ready after the rejoin delay.
func playFailover(ctx context.Context, core kubernetes.Interface, dyn dynamic.Interface, cl *unstructured.Unstructured, pods []string,
	lost, current string, pg *localdb.Postgres, logf func(string, ...any)) error {
	ns, name := cl.GetNamespace(), cl.GetName()
	f := DefaultFailover
	setStatus := func(fields string) error {
		_, err := dyn.Resource(ClusterGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"status":{`+fields+`}}`), metav1.PatchOptions{}, "status")
		return err
	}
	primary := lost == current
	next := current
	if primary {
		for _, p := range pods {
			if p != lost {
				next = p
				break
			}
		}
		logf("CloudNativePG (played): %s lost its primary %s: failing over to %s in %s", name, lost, next, f.Delay)
		if err := setStatus(fmt.Sprintf(`"phase":"Failing over","targetPrimary":%q,"readyInstances":%d`, next, len(pods)-1)); err != nil {
			return err
		}
		// The writes the standby had not received are gone with the
		// primary (asynchronous replication), then its sessions.
		if d, err := time.ParseDuration(cl.GetAnnotations()[LoseWritesAnnotation]); err == nil && d > 0 {
			loseWrites(pg, d, func(db, out string) {
				logf("CloudNativePG (played): %s lost the ledger's writes of the last %s in %s: %s rows", name, d, db, out)
			})
		}
		if err := refuseSessions(pg, true); err != nil {
			return err
		}
		select {
		case <-time.After(f.Delay):
		case <-ctx.Done():
		}
		if err := refuseSessions(pg, false); err != nil {
			return err
		}
		if err := setRoles(ctx, core, ns, withoutPod(pods, lost), next); err != nil {
			return err
		}
		if err := setStatus(fmt.Sprintf(`"currentPrimary":%q,"targetPrimary":%q`, next, next)); err != nil {
			return err
		}
		logf("CloudNativePG (played): %s failed over from %s to %s", name, lost, next)
	} else if err := setStatus(fmt.Sprintf(`"phase":"Waiting for the instances to become active","readyInstances":%d`, len(pods)-1)); err != nil {
		return err
	}
	// The lost instance comes back as a replica once its pod is gone.
	for ctx.Err() == nil {
		_, err := core.CoreV1().Pods(ns).Get(ctx, lost, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := recreateReplica(ctx, core, cl, lost); err != nil {
		return err
	}
	select {
	case <-time.After(f.Rejoin):
	case <-ctx.Done():
	}
	if err := setRoles(ctx, core, ns, pods, next); err != nil {
		return err
	}
	return setStatus(fmt.Sprintf(`"phase":%q,"readyInstances":%d`, specs.CNPGHealthyPhase, len(pods)))
}

func withoutPod(pods []string, gone string) []string {
	var out []string
	for _, p := range pods {
		if p != gone {
			out = append(out, p)
		}
	}
	return out
}

// refuseSessions makes the server refuse (or take again) new sessions on
// every database but template0, terminating those it has: clients see
// their primary gone.
func refuseSessions(pg *localdb.Postgres, refuse bool) error {
	if pg == nil {
		return nil
	}
	allow := map[bool]string{true: "false", false: "true"}[refuse]
	out, err := pg.Query("SELECT datname FROM pg_database WHERE datname <> 'template0'")
	if err != nil {
		return err
	}
	var stmts []string
	for _, db := range strings.Fields(out) {
		if db != "postgres" { // the stand-in's own way in
			stmts = append(stmts, fmt.Sprintf("ALTER DATABASE %q ALLOW_CONNECTIONS %s", db, allow))
		}
	}
	if refuse {
		stmts = append(stmts, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
	}
	return pg.SQL(strings.Join(stmts, ";\n") + ";")
}

// recreateReplica makes a lost instance's pod again, a replica, as
// CloudNativePG does.
func recreateReplica(ctx context.Context, core kubernetes.Interface, cl *unstructured.Unstructured, name string) error {
	affinity, err := cnpgPodAffinity(cl)
	if err != nil {
		return err
	}
	nodeSelector, _, _ := unstructured.NestedStringMap(cl.Object, "spec", "affinity", "nodeSelector")
	labels, _, _ := unstructured.NestedStringMap(cl.Object, "spec", "inheritedMetadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range map[string]string{"cnpg.io/cluster": cl.GetName(), "cnpg.io/instanceRole": "replica", "cnpg.io/podRole": "instance", "role": "replica"} {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cl.GetNamespace(), OwnerReferences: cnpgOwner(cl), Labels: labels},
		Spec: corev1.PodSpec{NodeSelector: nodeSelector, Affinity: affinity,
			Containers: []corev1.Container{{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:17"}}},
	}
	return ignoreExists(core.CoreV1().Pods(cl.GetNamespace()).Create(ctx, pod, metav1.CreateOptions{}))
}

// clusterLives says whether the Cluster is there and not being deleted:
// its instances going with it (garbage collection) is no failover.
func clusterLives(ctx context.Context, dyn dynamic.Interface, ns, name string) bool {
	cl, err := dyn.Resource(ClusterGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	return err == nil && cl.GetDeletionTimestamp() == nil
}

// loseWrites deletes the rows of every database's dbperf_ledger written in
// the last d.
func loseWrites(pg *localdb.Postgres, d time.Duration, said func(db, rows string)) {
	out, err := pg.Query("SELECT datname FROM pg_database WHERE datallowconn")
	if err != nil {
		return
	}
	for _, db := range strings.Fields(out) {
		if db == "template0" || db == "template1" {
			continue
		}
		rows, err := pg.QueryIn(db, `SELECT 1 FROM pg_class WHERE relname = 'dbperf_ledger'`)
		if err != nil || strings.TrimSpace(rows) == "" {
			continue
		}
		n, err := pg.QueryIn(db, fmt.Sprintf(`WITH gone AS (DELETE FROM dbperf_ledger WHERE at > now() - interval '%d milliseconds' RETURNING 1) SELECT count(*) FROM gone`, d.Milliseconds()))
		if err == nil {
			said(db, strings.TrimSpace(n))
		}
	}
}

// applyParameters sets the Cluster's spec.postgresql.parameters on the
// local server, as CloudNativePG writes them to its configuration: those
// a reload takes (ALTER SYSTEM, then pg_reload_conf); one that needs a
// restart (shared_buffers, max_connections: sized for a real node, not for
// this machine) is logged and left out, as is one the server does not
// know. A variant's planner or memory settings thus act on the played
// cluster as on a real one.
func applyParameters(cl *unstructured.Unstructured, pg *localdb.Postgres, logf func(format string, args ...any)) {
	params, _, _ := unstructured.NestedStringMap(cl.Object, "spec", "postgresql", "parameters")
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	applied := 0
	for _, k := range names {
		ctxName, err := pg.Query(fmt.Sprintf("SELECT context FROM pg_settings WHERE name = '%s'", strings.ReplaceAll(k, "'", "''")))
		switch {
		case err != nil || ctxName == "":
			logf("CloudNativePG (played): Cluster %s/%s: parameter %s is not known to the local server: left out", cl.GetNamespace(), cl.GetName(), k)
			continue
		case ctxName == "postmaster" || ctxName == "internal":
			logf("CloudNativePG (played): Cluster %s/%s: parameter %s needs a restart (%s): left out", cl.GetNamespace(), cl.GetName(), k, ctxName)
			continue
		}
		if err := pg.SQL(fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", pgIdent(k), strings.ReplaceAll(params[k], "'", "''"))); err != nil {
			logf("CloudNativePG (played): Cluster %s/%s: parameter %s: %v", cl.GetNamespace(), cl.GetName(), k, err)
			continue
		}
		applied++
	}
	if applied > 0 {
		if err := pg.SQL("SELECT pg_reload_conf()"); err != nil {
			logf("CloudNativePG (played): Cluster %s/%s: reloading the configuration: %v", cl.GetNamespace(), cl.GetName(), err)
		}
	}
}

// pgIdent quotes a parameter's name where it needs it (a dotted
// extension's parameter is two identifiers).
func pgIdent(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
	}
	return strings.Join(parts, ".")
}
