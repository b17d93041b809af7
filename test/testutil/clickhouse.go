package testutil

import (
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// ClickHouse is a clickhouse-server started for a test on 127.0.0.1, with
// a password-protected user whose queries go to system.query_log.
type ClickHouse = *localdb.ClickHouse

// StartClickHouse starts Debian's clickhouse-server in a temporary
// directory; it stops with the test. A missing server fails the test, as
// a missing PostgreSQL does (hack/install-deps.sh installs it).
func StartClickHouse(t testing.TB) ClickHouse {
	t.Helper()
	c, err := localdb.StartClickHouse()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}
