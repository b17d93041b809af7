package executor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/disturb"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The stand-in plays CloudNativePG's failover when the primary's pod is
// deleted, as CloudNativePG's status shows one: the primary's sessions
// end and new ones are refused for the failover delay, the standby is
// promoted (currentPrimary, its role labels), the lost instance comes back
// as a replica and the cluster is healthy again. The write ledger, writing
// through it all, reconnects and loses nothing; told to lose the last
// second of writes, the stand-in does, and the ledger names each row.
func TestCloudNativePGFailoverAndTheWriteLedger(t *testing.T) {
	testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	env, err := kit.Start(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	core := kubernetes.NewForConfigOrDie(env.Config)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	pg := testutil.StartPostgres(t)
	for _, lose := range []string{"", "1s"} {
		t.Run("lose writes "+lose, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ns := fmt.Sprintf("failover-%d", len(lose))
			if _, err := core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			cl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
				"metadata": map[string]any{"name": "pg", "namespace": ns, "annotations": map[string]any{LoseWritesAnnotation: lose}},
				"spec":     map[string]any{"instances": int64(2), "storage": map[string]any{"size": "1Gi"}}}}
			if _, err := dyn.Resource(ClusterGVR).Namespace(ns).Create(ctx, cl, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// The kubelet: every instance pod runs (the played cluster
			// waits for it), the one made again too.
			go func() {
				for ctx.Err() == nil {
					pods, _ := core.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
					for i := range pods.Items {
						p := &pods.Items[i]
						if p.Status.Phase != corev1.PodRunning && p.DeletionTimestamp == nil {
							p.Status.Phase = corev1.PodRunning
							_, _ = core.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
						}
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
			if err := PlayCloudNativePG(ctx, core, dyn, ns, "pg", pg, t.Logf); err != nil {
				t.Fatal(err)
			}
			ledger := disturb.StartLedger(ctx, disturb.Ledger{Name: "lose-primary", Protocol: pod.ProtocolPostgres,
				Config: dbstats.Config{Host: "127.0.0.1", Port: pg.Port, Username: pg.User, Password: pg.Password, Database: "app"}},
				time.Now(), time.Now().Add(8*time.Second), io.Discard)
			time.Sleep(2 * time.Second) // measured: two seconds of writes before the loss
			lostAt := time.Now()
			if err := core.CoreV1().Pods(ns).Delete(ctx, "pg-1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 30*time.Second, "a new primary, the old one back as a replica, healthy", func() error {
				c, err := dyn.Resource(ClusterGVR).Namespace(ns).Get(ctx, "pg", metav1.GetOptions{})
				if err != nil {
					return err
				}
				current, _, _ := unstructured.NestedString(c.Object, "status", "currentPrimary")
				phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
				ready, _, _ := unstructured.NestedInt64(c.Object, "status", "readyInstances")
				p1, err := core.CoreV1().Pods(ns).Get(ctx, "pg-1", metav1.GetOptions{})
				if err != nil {
					return err
				}
				p2, err := core.CoreV1().Pods(ns).Get(ctx, "pg-2", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if current != "pg-2" || phase != specs.CNPGHealthyPhase || ready != 2 ||
					p2.Labels["cnpg.io/instanceRole"] != "primary" || p1.Labels["cnpg.io/instanceRole"] != "replica" {
					return fmt.Errorf("primary %q, phase %q, ready %d, roles pg-1 %q pg-2 %q", current, phase, ready,
						p1.Labels["cnpg.io/instanceRole"], p2.Labels["cnpg.io/instanceRole"])
				}
				return nil
			})
			rep := ledger.Check(ctx)
			t.Logf("ledger after a loss at %s: %+v", lostAt.Format(time.RFC3339Nano), rep)
			if rep.Acknowledged < 100 || rep.Failed == 0 || rep.Reconnected.IsZero() || rep.Reconnected.Before(lostAt.Add(DefaultFailover.Delay/2)) {
				t.Errorf("the ledger did not write, see the failover and reconnect after it: %+v", rep)
			}
			switch {
			case lose == "" && rep.MissingCount != 0:
				t.Errorf("writes lost without the stand-in losing any: %v", rep.Missing)
			case lose != "" && (rep.MissingCount < 10 || rep.MissingCount > 60 || len(rep.Missing) != rep.MissingCount):
				// A second of writes every 20 ms: about 50, named each.
				t.Errorf("lost %d writes (%v), want those of the last second before the loss", rep.MissingCount, rep.Missing)
			}
			if out, err := pg.QueryIn("app", "SELECT count(*) FROM dbperf_ledger"); err != nil || strings.TrimSpace(out) != "0" {
				t.Errorf("the ledger's rows were not removed: %q %v", out, err)
			}
		})
	}
}
