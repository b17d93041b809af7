package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// requireTool finds a program or fails the test: the servers and tools are
// installed by .ci/run, and a silently skipped test would hide a broken setup.
func requireTool(t testing.TB, name string, globs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, g := range globs {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	t.Fatalf("%s is not installed (bash .ci/run installs it: apt-get install postgresql redis-server)", name)
	return ""
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitForPort(t testing.TB, port int, within time.Duration) {
	t.Helper()
	Eventually(t, within, fmt.Sprintf("server on 127.0.0.1:%d", port), func() error {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// Redis is a redis-server started for a test on 127.0.0.1.
type Redis struct{ Port int }

// StartRedis starts redis-server with extra arguments; it stops with the test.
func StartRedis(t testing.TB, args ...string) Redis {
	t.Helper()
	bin := requireTool(t, "redis-server")
	port := FreePort(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)
	cmd := exec.Command(bin, all...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitForPort(t, port, 10*time.Second)
	return Redis{Port: port}
}

// Postgres is a PostgreSQL server started for a test on 127.0.0.1, with a
// password-protected user.
type Postgres struct {
	Port     int
	User     string
	Password string
	Database string
}

// Env returns the libpq variables that reach the server.
func (p Postgres) Env() []string {
	return []string{"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(p.Port), "PGUSER=" + p.User,
		"PGPASSWORD=" + p.Password, "PGDATABASE=" + p.Database, "PGSSLMODE=disable"}
}

// StartPostgres initialises a cluster in a temporary directory and starts it.
// PostgreSQL refuses to run as root, so as root it runs as the postgres user.
func StartPostgres(t testing.TB) Postgres {
	t.Helper()
	initdb := requireTool(t, "initdb", "/usr/lib/postgresql/*/bin/initdb")
	bindir := filepath.Dir(initdb)
	pgctl := filepath.Join(bindir, "pg_ctl")
	dir, err := os.MkdirTemp("", "dbperf-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := Postgres{Port: FreePort(t), User: "bench", Password: "s3cret-" + strconv.Itoa(os.Getpid()), Database: "postgres"}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(p.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	as := asPostgresUser(t, dir)
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = as
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run(initdb, "-D", data, "-U", p.User, "--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off", p.Port, dir)
	run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
	t.Cleanup(func() {
		cmd := exec.Command(pgctl, "-D", data, "-m", "immediate", "-w", "stop")
		cmd.SysProcAttr = as
		_ = cmd.Run()
	})
	return p
}

// asPostgresUser returns the credentials to run PostgreSQL with when the
// test runs as root, and hands it the directory.
func asPostgresUser(t testing.TB, dir string) *syscall.SysProcAttr {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root needs the postgres user (from the postgresql package): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}
