package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// startAPIServer starts a real API server (envtest) with the CRDs; it
// stops with the test.
func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		out, err := exec.Command("bash", "../../hack/build-control-plane.sh").Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		bin = lines[len(lines)-1]
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

// The manager as the binary wires it (label-filtered pod cache, Secrets
// never cached, CNPG detection, log reader), running as a service account
// bound to nothing but the ClusterRole generated from the RBAC markers,
// brings a run to its first Job: a missing rule fails this test.
func TestManagerStartsAndReconciles(t *testing.T) {
	cfg := startAPIServer(t)
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	asManager := bindGeneratedRole(ctx, t, c, cfg)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, asManager, options{metricsAddr: "0", probeAddr: "0", runnerImage: "runner:test"})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default"}, StringData: map[string]string{"password": "x"}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "default"},
		Spec: benchv1.BenchmarkRunSpec{
			Target: benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "db", Port: 5432, SecretRef: &corev1.LocalObjectReference{Name: "creds"}}},
			Workload: benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{Scale: 1, Clients: []int32{4},
				Duration: metav1.Duration{Duration: time.Minute}}},
		},
	}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "the prepare job", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: specs.PrepareJobName(run)}, &batchv1.Job{})
	})
	// The Job is created within the reconcile whose status patch follows it.
	testutil.Eventually(t, 20*time.Second, "the run Preparing with its target ready", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), run); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(run.Status.Conditions, benchv1.ConditionTargetReady) || run.Status.Phase != benchv1.PhasePreparing {
			return fmt.Errorf("phase %q conditions %+v", run.Status.Phase, run.Status.Conditions)
		}
		return nil
	})
}

// bindGeneratedRole creates config/rbac/role.yaml and binds it to a service
// account, and returns a config that acts as that service account.
func bindGeneratedRole(ctx context.Context, t *testing.T, c client.Client, cfg *rest.Config) *rest.Config {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &role); err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:dbperf-system:dbperf-manager"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "dbperf-manager"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := c.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	return as
}
