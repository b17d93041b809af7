package testutil

import (
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := localdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Redis is a redis-server started for a test on 127.0.0.1.
type Redis = *localdb.Redis

// StartRedis starts redis-server with extra arguments; it stops with the
// test. A missing server fails the test: .ci/run installs it, and a silently
// skipped test would hide a broken setup.
func StartRedis(t testing.TB, args ...string) Redis {
	t.Helper()
	r, err := localdb.StartRedis(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// Postgres is a PostgreSQL server started for a test on 127.0.0.1, with a
// password-protected user.
type Postgres = *localdb.Postgres

// StartPostgres initialises a cluster in a temporary directory and starts it;
// it stops with the test.
func StartPostgres(t testing.TB) Postgres {
	t.Helper()
	p, err := localdb.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// MariaDB is a MariaDB server started for a test on 127.0.0.1.
type MariaDB = *localdb.MariaDB

// StartMariaDB starts mariadbd with extra arguments in dir; it stops with the test.
func StartMariaDB(t testing.TB, dir string, args ...string) MariaDB {
	t.Helper()
	m, err := localdb.StartMariaDB(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}
