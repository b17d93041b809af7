package chart

import (
	"context"
	"fmt"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The users' roles as config/default installs them, asked of a real API
// server (envtest's runs with RBAC authorization): a user bound to the
// editor in a namespace may create, change and delete runs, comparisons
// and schedules there and read the results ConfigMaps; one bound to the
// viewer only reads. envtest runs no controller manager, so the
// aggregation into admin, edit and view (the clusterrole-aggregation
// controller's work) is not exercised here: TestUserRoles checks the
// labels it selects by.
func TestUserRolesAuthorize(t *testing.T) {
	kust := kustomize(t)
	env, err := kit.Start(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	c := env.Client
	ns := kit.Namespace(t, c, "rbac-")
	users := map[string]string{"-editor": "alice", "-viewer": "bob"}
	for suffix, user := range users {
		role := clusterRole(t, kust, suffix)
		role.ResourceVersion = ""
		if err := c.Create(ctx, role); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	may := func(user, verb, group, resource, subresource, namespace string) bool {
		t.Helper()
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource, Subresource: subresource}}}
		if err := c.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	// The API server's authorizer sees new bindings through its own
	// informers, a moment after they are created (CI asked before it had
	// and was told no): the first grant of each is waited for.
	for _, user := range users {
		if err := testutil.Poll(ctx, 10*time.Second, 50*time.Millisecond, user+"'s binding seen by the authorizer", func() error {
			if !may(user, "get", "bench.dbperf.io", "benchmarkruns", "", ns) {
				return fmt.Errorf("%s may not get benchmarkruns yet", user)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, res := range []string{"benchmarkruns", "benchmarkcomparisons", "benchmarkschedules"} {
		for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			if !may("alice", verb, "bench.dbperf.io", res, "", ns) {
				t.Errorf("the editor may not %s %s", verb, res)
			}
			if got, want := may("bob", verb, "bench.dbperf.io", res, "", ns), verb == "get" || verb == "list" || verb == "watch"; got != want {
				t.Errorf("the viewer may %s %s: %v, want %v", verb, res, got, want)
			}
		}
		for _, user := range users {
			if !may(user, "get", "bench.dbperf.io", res, "status", ns) || may(user, "update", "bench.dbperf.io", res, "status", ns) {
				t.Errorf("%s on %s/status: want get, not update", user, res)
			}
			if may(user, "list", "bench.dbperf.io", res, "", "default") {
				t.Errorf("%s may list %s outside the namespace of the binding", user, res)
			}
		}
	}
	for _, user := range users {
		if !may(user, "list", "", "configmaps", "", ns) || !may(user, "get", "", "pods", "log", ns) {
			t.Errorf("%s may not read the results ConfigMaps or the tools' logs", user)
		}
		if may(user, "update", "", "configmaps", "", ns) || may(user, "get", "", "secrets", "", ns) {
			t.Errorf("%s may write ConfigMaps or read Secrets", user)
		}
	}
}
