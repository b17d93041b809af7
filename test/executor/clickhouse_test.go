package executor

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A ClickHouse target pod is played by Debian's clickhouse-server 18.16:
// the pod's user and password from its Secret, its database created, its
// client Service (not the headless one) pointed at the server; the server
// goes with the pod. A replica of a replicated shard is not played.
func TestClickHousePodIsPlayedByALocalServer(t *testing.T) {
	if _, err := localdb.Tool("clickhouse-server", "/usr/sbin/clickhouse-server"); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sel := map[string]string{"bench.dbperf.io/run-uid": "u1", "bench.dbperf.io/role": "target", "bench.dbperf.io/instance-role": "server"}
	secretEnv := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "r-clickhouse-credentials"}, Key: key}}}
	}
	pod := func(name, role string) *corev1.Pod {
		l := map[string]string{}
		for k, v := range sel {
			l[k] = v
		}
		l["bench.dbperf.io/instance-role"] = role
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf", UID: types.UID(name), Labels: l},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "clickhouse", Image: "clickhouse/clickhouse-server:25.8",
				Env: []corev1.EnvVar{secretEnv("CLICKHOUSE_USER", "username"), secretEnv("CLICKHOUSE_PASSWORD", "password"),
					{Name: "CLICKHOUSE_DB", Value: "ssb"}}}}}}
	}
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "r-clickhouse-credentials", Namespace: "perf"},
			Data: map[string][]byte{"username": []byte("dbperf"), "password": []byte("p<w&d")}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "r-clickhouse", Namespace: "perf"}, Spec: corev1.ServiceSpec{Selector: sel}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "r-clickhouse-nodes", Namespace: "perf"}, Spec: corev1.ServiceSpec{Selector: sel, ClusterIP: corev1.ClusterIPNone}},
		pod("r-clickhouse-0", "server"), pod("other-clickhouse-replicas-0", "replica"),
	)
	e := &Executor{o: Options{Client: client, WorkDir: t.TempDir(), Log: io.Discard}, played: map[types.UID]*playedServer{},
		starting: map[types.UID]string{}, retryAt: map[types.UID]time.Time{}, clusters: map[types.UID]*playedCluster{},
		services: &serviceProxy{client: client, log: io.Discard}}
	defer e.stopPlayed()
	if err := e.playTargets(ctx); err != nil {
		t.Fatal(err)
	}
	e.waitForTargets(ctx, "perf") // servers start in the background
	if s := e.played["other-clickhouse-replicas-0"]; s != nil {
		t.Error("a replica of a replicated shard was played")
	}
	svc, err := client.CoreV1().Services("perf").Get(ctx, "r-clickhouse", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	backend := svc.Annotations[BackendAnnotation]
	if backend == "" {
		t.Fatalf("the client Service is not pointed at the server: %v", svc.Annotations)
	}
	if h, _ := client.CoreV1().Services("perf").Get(ctx, "r-clickhouse-nodes", metav1.GetOptions{}); h.Annotations[BackendAnnotation] != "" {
		t.Error("the headless Service was pointed at the server")
	}
	// Connections wait until the database exists: once it is no longer
	// starting, the user finds it.
	e.services.waitStarted(backend)
	out, err := localdb.ClickHouseHTTP(ctx, backend, "dbperf", "p<w&d", "SELECT name FROM system.databases WHERE name = 'ssb'")
	if err != nil || strings.TrimSpace(out) != "ssb" {
		t.Fatalf("the pod's user does not find its database: %q, %v", out, err)
	}
	if _, err := localdb.ClickHouseHTTP(ctx, backend, "dbperf", "wrong", "SELECT 1"); err == nil {
		t.Error("a wrong password was accepted")
	}
	if err := client.CoreV1().Pods("perf").Delete(ctx, "r-clickhouse-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.lastPlay = time.Time{}
	if err := e.playTargets(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the server gone with its pod", func() error {
		if _, err := localdb.ClickHouseHTTP(ctx, backend, "dbperf", "p<w&d", "SELECT 1"); err == nil {
			return io.ErrUnexpectedEOF
		}
		return nil
	})
}
