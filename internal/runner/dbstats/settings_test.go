package dbstats

import (
	"context"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A real PostgreSQL's settings as a comparison's environment diff reads
// them: those set away from the built-in defaults (ALTER SYSTEM, the
// database's own), with their units; not the built-in defaults, not the
// client's session settings, never one that can hold a credential.
func TestPostgresSettingsAwayFromTheDefaults(t *testing.T) {
	srv := startPostgres(t)
	ctx := context.Background()
	if err := srv.SQL("ALTER SYSTEM SET work_mem = '8MB'"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SQL("ALTER SYSTEM SET primary_conninfo = 'host=other user=repl password=s3cret-repl'"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SQL("SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SQL("ALTER DATABASE " + srv.Database + " SET random_page_cost = 1.1"); err != nil {
		t.Fatal(err)
	}
	p, err := NewPostgres(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := p.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d settings: %v", len(got), got)
	if got["work_mem"] != "8192 kB" || got["random_page_cost"] != "1.1" {
		t.Errorf("work_mem %q, random_page_cost %q: want 8192 kB and 1.1", got["work_mem"], got["random_page_cost"])
	}
	for _, name := range []string{"primary_conninfo", "application_name", "port", "unix_socket_directories", "geqo"} {
		if v, ok := got[name]; ok {
			t.Errorf("%s = %q read: a credential, the client's own, or a built-in default", name, v)
		}
	}
	for name, v := range got {
		if secretSetting(name, v) {
			t.Errorf("%s = %q may hold a credential", name, v)
		}
	}
}

// A real MariaDB's global variables set away from their compiled-in
// defaults: a SET GLOBAL is read, a default is not, nor where the server
// is (its port, its data directory).
func TestMySQLSettingsAwayFromTheDefaults(t *testing.T) {
	const password = "s3cret-settings"
	db := startMariaDB(t, password)
	if out, err := db.Client("--socket="+db.Socket, "-e", "SET GLOBAL join_buffer_size = 1048576"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx := context.Background()
	m, err := NewMySQL(ctx, Config{Host: "127.0.0.1", Port: db.Port, Username: "bench", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := m.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d settings: %v", len(got), got)
	if got["join_buffer_size"] != "1048576" {
		t.Errorf("join_buffer_size %q, want 1048576", got["join_buffer_size"])
	}
	for _, name := range []string{"port", "datadir", "sort_buffer_size"} {
		if v, ok := got[name]; ok {
			t.Errorf("%s = %q read: where the server is, or a compiled-in default", name, v)
		}
	}
}

// A real redis-server's parameters: every one but where it is and its
// credentials.
func TestRedisSettingsWithoutWhereOrCredentials(t *testing.T) {
	srv := testutil.StartRedis(t, "--requirepass", "s3cret-settings", "--maxmemory-policy", "allkeys-lru")
	ctx := context.Background()
	r, err := NewRedis(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Password: "s3cret-settings"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["maxmemory-policy"] != "allkeys-lru" || got["appendonly"] != "no" {
		t.Errorf("maxmemory-policy %q, appendonly %q", got["maxmemory-policy"], got["appendonly"])
	}
	for name, v := range got {
		if name == "port" || name == "dir" || name == "requirepass" || name == "masterauth" || strings.Contains(v, "s3cret") {
			t.Errorf("%s = %q read", name, v)
		}
	}
}
