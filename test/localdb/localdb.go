// Package localdb starts throwaway database servers on 127.0.0.1 from the
// local installation (Debian's postgresql and redis-server): for tests
// (through test/testutil) and for the quickstart on the simulated cluster.
package localdb

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotInstalled says which program is missing and how to get it.
var ErrNotInstalled = errors.New("not installed (bash hack/install-deps.sh installs it: apt-get install postgresql redis-server)")

// Tool finds a program on PATH or in the given globs (newest match last).
func Tool(name string, globs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, g := range globs {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[len(m)-1], nil
		}
	}
	return "", fmt.Errorf("%s is %w", name, ErrNotInstalled)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitForPort waits until something accepts connections on 127.0.0.1:port.
func WaitForPort(port int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on 127.0.0.1:%d after %s: %w", port, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Redis is a redis-server on 127.0.0.1.
type Redis struct {
	Port int
	cmd  *exec.Cmd
	dir  string
	// done is closed once the server's process has exited (and been
	// reaped).
	done chan struct{}
}

// StartRedis starts redis-server without persistence, with extra arguments.
func StartRedis(args ...string) (*Redis, error) {
	return startRedis(false, func(port int, dir string) []string {
		return append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, args...)
	})
}

// redisStarts bounds the ports tried for one server.
const redisStarts = 5

// startRedis starts redis-server with the arguments build gives for a free
// port and a fresh directory, on another port when it exits before it
// listens: between FreePort and the server's bind another process may
// take the port (or, for a cluster member, bus, its bus port+10000),
// which on a busy machine running tests side by side happens.
func startRedis(bus bool, build func(port int, dir string) []string) (*Redis, error) {
	bin, err := Tool("redis-server")
	if err != nil {
		return nil, err
	}
	var last error
	for range redisStarts {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		if bus && port+10000 > 65535 {
			continue
		}
		dir, err := os.MkdirTemp("", "dbperf-redis-")
		if err != nil {
			return nil, err
		}
		r := &Redis{Port: port, dir: dir}
		if err := r.start(exec.Command(bin, build(port, dir)...)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if last = r.waitListening(); last == nil {
			return r, nil
		}
		r.Stop()
	}
	return nil, last
}

// start starts cmd as the server's process, reaped when it exits.
func (r *Redis) start(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	r.cmd, r.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(r.done)
	}()
	return nil
}

// waitListening waits until the server accepts connections, or says it
// exited first.
func (r *Redis) waitListening() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", r.Addr(), time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case <-r.done:
			return fmt.Errorf("redis-server on 127.0.0.1:%d exited before it listened (%s)", r.Port, r.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on 127.0.0.1:%d after 10s: %w", r.Port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop kills the server and removes its directory.
func (r *Redis) Stop() {
	r.Kill()
	_ = os.RemoveAll(r.dir)
}

// Postgres is a PostgreSQL server on 127.0.0.1 with a password-protected
// user (scram-sha-256 over TCP).
type Postgres struct {
	Port     int
	User     string
	Password string
	Database string
	BinDir   string
	dir      string
	as       *syscall.SysProcAttr
}

// Env returns the libpq variables that reach the server.
func (p *Postgres) Env() []string {
	return []string{"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(p.Port), "PGUSER=" + p.User,
		"PGPASSWORD=" + p.Password, "PGDATABASE=" + p.Database, "PGSSLMODE=disable"}
}

// PostgresTLS serves TLS only: the server's certificate and key, and the
// CA that signs clients' certificates, which the server requires of every
// TCP connection (two-way TLS: hostssl … clientcert=verify-ca, so the
// schema user that a tool creates may present the same certificate).
type PostgresTLS struct {
	ServerCert, ServerKey, ClientCA []byte
}

// StartPostgres initialises a cluster in a temporary directory and starts
// it. PostgreSQL refuses to run as root, so as root it runs as the postgres
// user.
func StartPostgres() (*Postgres, error) { return StartPostgresTLS(nil) }

// StartPostgresTLS is StartPostgres with TLS required (two-way) when tls is
// given: clear-text connections and clients without a certificate signed
// by tls.ClientCA are refused.
func StartPostgresTLS(tls *PostgresTLS) (*Postgres, error) {
	initdb, err := Tool("initdb", "/usr/lib/postgresql/*/bin/initdb")
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = real // /usr/local/bin/initdb may link to the versioned bindir
	}
	dir, err := os.MkdirTemp("", "dbperf-pg-")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p := &Postgres{Port: port, User: "bench", Password: "s3cret-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(port),
		Database: "postgres", BinDir: filepath.Dir(initdb), dir: dir}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(p.Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if p.as, err = asPostgresUser(dir); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := p.run(initdb, "-D", data, "-U", p.User, "--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// pg_stat_statements is loaded as CloudNativePG loads it when asked:
	// the diagnostics read it (and create its extension in a database).
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c shared_preload_libraries=pg_stat_statements", p.Port, dir)
	if tls != nil {
		files := map[string][]byte{"server.crt": tls.ServerCert, "server.key": tls.ServerKey, "client-ca.crt": tls.ClientCA,
			"pg_hba.conf": []byte("local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256 clientcert=verify-ca\n")}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(data, name), body, 0o600); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
		}
		if _, err := asPostgresUser(dir); err != nil { // hands the new files over
			os.RemoveAll(dir)
			return nil, err
		}
		opts += " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key -c ssl_ca_file=client-ca.crt"
	}
	if err := p.run(filepath.Join(p.BinDir, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

func (p *Postgres) run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = p.as
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %w\n%s", name, args, err, out)
	}
	return nil
}

// Log is what the server has written to its log so far.
func (p *Postgres) Log() ([]byte, error) { return os.ReadFile(filepath.Join(p.dir, "log")) }

// SQL runs statements with psql as the server's user, over the server's
// Unix socket (which a TLS-only server serves too).
func (p *Postgres) SQL(statements string) error {
	_, err := p.Query(statements)
	return err
}

// Query runs statements with psql as the server's user over the Unix socket
// and returns what they print, unaligned and without headers.
func (p *Postgres) Query(statements string) (string, error) {
	return p.QueryIn(p.Database, statements)
}

// QueryIn is Query in another database of the server.
func (p *Postgres) QueryIn(database, statements string) (string, error) {
	cmd := exec.Command(filepath.Join(p.BinDir, "psql"), "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-c", statements)
	cmd.Env = append(append(os.Environ(), p.Env()...), "PGHOST="+p.dir, "PGDATABASE="+database)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql: %w\n%s%s", err, out, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

// Restart stops the server at once, as a crash or a killed process would
// (pg_ctl -m immediate: no checkpoint, every connection cut), and starts
// it again on the same port with the same data.
func (p *Postgres) Restart() error {
	return p.run(filepath.Join(p.BinDir, "pg_ctl"), "-D", filepath.Join(p.dir, "data"), "-l", filepath.Join(p.dir, "log"), "-m", "immediate", "-w", "-t", "60", "restart")
}

// Pause stops every process of the server (the postmaster and its
// backends) with SIGSTOP for d, then lets them go on with SIGCONT: a
// server that hangs, as on a stalled disk, without losing a connection.
func (p *Postgres) Pause(d time.Duration) error {
	raw, err := os.ReadFile(filepath.Join(p.dir, "data", "postmaster.pid"))
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	postmaster, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return fmt.Errorf("postmaster.pid: %w", err)
	}
	pids := []int{postmaster}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if len(f) > 1 && f[1] == strconv.Itoa(postmaster) {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	time.Sleep(d)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	return nil
}

// Stop stops the server and removes its files.
func (p *Postgres) Stop() {
	_ = p.run(filepath.Join(p.BinDir, "pg_ctl"), "-D", filepath.Join(p.dir, "data"), "-m", "immediate", "-w", "stop")
	_ = os.RemoveAll(p.dir)
}

// asPostgresUser returns the credentials to run PostgreSQL with when running
// as root, and hands it the directory.
func asPostgresUser(dir string) (*syscall.SysProcAttr, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres user (from the postgresql package): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// MariaDB is a MariaDB server (the MySQL-compatible server Debian ships) on
// 127.0.0.1, started with the arguments a test gives, such as the MySQL
// target's TLS settings.
type MariaDB struct {
	Port   int
	Socket string
	dir    string
	cmd    *exec.Cmd
	exited chan error
}

// StartMariaDB initialises a data directory in dir and starts mariadbd with
// extra arguments. As root the server runs as the mysql user, which must be
// able to reach dir (not under a 0700 test directory) and the files the
// arguments name. It waits until the server accepts connections.
func StartMariaDB(dir string, args ...string) (*MariaDB, error) {
	mariadbd, err := Tool("mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	install, err := Tool("mariadb-install-db")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	m := &MariaDB{Port: port, Socket: filepath.Join(dir, "mysqld.sock"), dir: dir}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o750); err != nil {
		return nil, err
	}
	userArg := []string{}
	if os.Geteuid() == 0 {
		userArg = []string{"--user=mysql"}
		u, err := user.Lookup("mysql")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the mysql user (from the mariadb-server package): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
	}
	initArgs := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=socket", "--skip-test-db"}, userArg...)
	if out, err := exec.Command(install, initArgs...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	all := append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + m.Socket, "--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(port), "--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--log-error=" + filepath.Join(dir, "error.log"),
		"--skip-name-resolve", "--innodb-buffer-pool-size=16M", "--performance-schema=OFF"}, userArg...)
	m.cmd = exec.Command(mariadbd, append(all, args...)...)
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	// A server that refuses its arguments exits at once: said then, not
	// after the wait for its port.
	exited := make(chan error, 1)
	m.exited = exited
	go func() { exited <- m.cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		// Ready when both its port and its socket are there: the socket
		// (which the tests' administrator connects through) can come a
		// moment after the port (a CI run's client found none).
		if err := WaitForPort(port, 200*time.Millisecond); err == nil {
			if _, err := os.Stat(m.Socket); err == nil {
				return m, nil
			}
			time.Sleep(20 * time.Millisecond) // the port answers at once: poll the socket at a pace
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			return nil, fmt.Errorf("mariadbd exited (%w):\n%s", err, tailOf(log, 10))
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			m.Stop()
			return nil, fmt.Errorf("nothing listens on 127.0.0.1:%d and %s after 60s\n%s", port, m.Socket, tailOf(log, 10))
		}
	}
}

// Client runs the mariadb client with arguments and returns its output.
func (m *MariaDB) Client(args ...string) (string, error) {
	out, err := exec.Command("mariadb", append([]string{"--no-defaults"}, args...)...).CombinedOutput()
	return string(out), err
}

// Stop stops the server.
func (m *MariaDB) Stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		if m.exited != nil {
			if err := <-m.exited; err != nil {
				return // killed: its exit status says so
			}
		} else {
			_ = m.cmd.Wait()
		}
	}
}

// tailOf is the last n lines of a log.
func tailOf(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FerretDB is a FerretDB server (a MongoDB-compatible server) on 127.0.0.1
// with its SQLite handler, built by hack/build-ferretdb.sh.
type FerretDB struct {
	Port int
	// Username and Password are the user created at start (in admin) when
	// StartFerretDB was given them; FerretDB then requires them.
	Username, Password string
	cmd                *exec.Cmd
	dir                string
}

// StartFerretDB starts the FerretDB binary bin with the SQLite handler in a
// temporary directory, listening on 127.0.0.1 only, with its debug
// listener and telemetry off. With a username, it enables FerretDB's
// authentication (SCRAM) and creates that user with password in admin.
func StartFerretDB(bin, username, password string) (*FerretDB, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "dbperf-ferretdb-")
	if err != nil {
		return nil, err
	}
	args := []string{"--handler=sqlite", "--sqlite-url=file:" + dir + "/", "--state-dir=" + dir,
		"--listen-addr=127.0.0.1:" + strconv.Itoa(port), "--debug-addr=-", "--telemetry=disable", "--log-level=warn"}
	if username != "" {
		args = append(args, "--test-enable-new-auth", "--setup-database=admin", "--setup-username="+username, "--setup-password="+password)
	}
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(dir, "ferretdb.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	log.Close()
	f := &FerretDB{Port: port, Username: username, Password: password, cmd: cmd, dir: dir}
	if err := WaitForPort(port, 20*time.Second); err != nil {
		out, _ := os.ReadFile(filepath.Join(dir, "ferretdb.log"))
		f.Stop()
		return nil, fmt.Errorf("%w; its log:\n%s", err, out)
	}
	return f, nil
}

// Pid is the server's process id.
func (f *FerretDB) Pid() int { return f.cmd.Process.Pid }

// Stop kills the server and removes its directory.
func (f *FerretDB) Stop() {
	_ = f.cmd.Process.Kill()
	_ = f.cmd.Wait()
	_ = os.RemoveAll(f.dir)
}
