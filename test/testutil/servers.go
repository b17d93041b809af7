package testutil

import (
	"os"
	"path/filepath"
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

// StartPostgresTLS starts PostgreSQL requiring two-way TLS on every TCP
// connection (localdb.PostgresTLS); it stops with the test.
func StartPostgresTLS(t testing.TB, tls localdb.PostgresTLS) Postgres {
	t.Helper()
	p, err := localdb.StartPostgresTLS(&tls)
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

// FerretDB is a FerretDB server (MongoDB's protocol) started for a test on
// 127.0.0.1 with its SQLite handler.
type FerretDB = *localdb.FerretDB

// StartFerretDB starts the FerretDB that FERRETDB names (hack/build-ferretdb.sh
// builds it; hack/test.sh sets it); with a username, FerretDB requires that
// user and password (created in admin). It stops with the test. Without
// FERRETDB the test is skipped, unless CI is set: there a missing server
// fails the test.
func StartFerretDB(t testing.TB, username, password string) FerretDB {
	t.Helper()
	bin := os.Getenv("FERRETDB")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("FERRETDB is not set in CI: hack/test.sh builds FerretDB with hack/build-ferretdb.sh and sets it")
		}
		t.Skip("FERRETDB is not set: run `export FERRETDB=$(bash hack/build-ferretdb.sh | tail -n 1)` (hack/test.sh does)")
	}
	f, err := localdb.StartFerretDB(bin, username, password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	return f
}

// WriteTLSDirs writes a server's and a client's certificate files (as
// certs.ServerSecrets makes them) into the directories server-tls and
// client-tls of a new directory readable by every user (not t.TempDir():
// a server that runs as its own user, such as mysql, must reach it); it is
// removed with the test.
func WriteTLSDirs(t testing.TB, prefix string, server, client map[string][]byte) (serverDir, clientDir string) {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	write := func(sub string, files map[string][]byte) string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for k, v := range files {
			if err := os.WriteFile(filepath.Join(d, k), v, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	return write("server-tls", server), write("client-tls", client)
}
