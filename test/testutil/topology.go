package testutil

import (
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// StartRedisWith starts redis-server with exactly the arguments build
// gives for its port and directory (localdb.StartRedisWith); it stops with
// the test.
func StartRedisWith(t testing.TB, build func(port int, dir string) []string) Redis {
	t.Helper()
	r, err := localdb.StartRedisWith(build)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}
