package specs

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
