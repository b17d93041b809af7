package localdb

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ClickHouse is a clickhouse-server (Debian's, 18.16) on 127.0.0.1 with a
// password-protected user whose queries go to system.query_log.
type ClickHouse struct {
	// HTTPPort serves ClickHouse's HTTP interface; TCPPort its native protocol.
	HTTPPort, TCPPort int
	User, Password    string
	dir               string
	cmd               *exec.Cmd
}

// ClickHouseConfig is a clickhouse-server 18.16 configuration for a
// throwaway server: 127.0.0.1 only, everything under dir, small caches,
// query_log flushed every second, users from dir/users.xml. Its log goes
// to dir/server.log and dir/error.log, or to the console with console.
func ClickHouseConfig(dir string, httpPort, tcpPort int, console bool) string {
	logger := fmt.Sprintf("<level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/error.log</errorlog><console>0</console>", dir)
	if console {
		logger = "<level>warning</level><console>1</console>"
	}
	return fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger>%[4]s</logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>%[2]d</http_port>
  <tcp_port>%[3]d</tcp_port>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <users_config>%[1]s/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <mlock_executable>false</mlock_executable>
  <query_log>
    <database>system</database>
    <table>query_log</table>
    <flush_interval_milliseconds>1000</flush_interval_milliseconds>
  </query_log>
</yandex>
`, dir, httpPort, tcpPort, logger)
}

// ClickHouseUser is one user of ClickHouseUsers.
type ClickHouseUser struct {
	Name, Password string
	// Network the user may connect from (an ip element: 127.0.0.1, ::/0).
	Network string
}

// ClickHouseUsers is the users.xml of ClickHouseConfig: the users with
// their passwords (escaped), all logging their queries.
func ClickHouseUsers(users ...ClickHouseUser) string {
	var b strings.Builder
	for _, u := range users {
		var pw bytes.Buffer
		_ = xml.EscapeText(&pw, []byte(u.Password))
		fmt.Fprintf(&b, "    <%[1]s><password>%[2]s</password><networks><ip>%[3]s</ip></networks><profile>default</profile><quota>default</quota></%[1]s>\n",
			u.Name, pw.String(), u.Network)
	}
	return `<?xml version="1.0"?>
<yandex>
  <profiles><default><log_queries>1</log_queries><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users>
` + b.String() + `  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
}

// StartClickHouse starts clickhouse-server in a temporary directory and
// waits until it answers queries. As root the server runs as the
// clickhouse user when there is one.
func StartClickHouse() (*ClickHouse, error) {
	bin, err := Tool("clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse")
	if err != nil {
		return nil, err
	}
	c := &ClickHouse{User: "bench", Password: "s3cret-" + strconv.Itoa(os.Getpid())}
	if c.HTTPPort, err = FreePort(); err != nil {
		return nil, err
	}
	if c.TCPPort, err = FreePort(); err != nil {
		return nil, err
	}
	if c.dir, err = os.MkdirTemp("", "dbperf-clickhouse-"); err != nil {
		return nil, err
	}
	// The default user (no password) for the test's own queries, and the
	// password-protected one for the client under test.
	config := filepath.Join(c.dir, "config.xml")
	files := map[string]string{config: ClickHouseConfig(c.dir, c.HTTPPort, c.TCPPort, false),
		filepath.Join(c.dir, "users.xml"): ClickHouseUsers(ClickHouseUser{Name: "default", Network: "127.0.0.1"},
			ClickHouseUser{Name: c.User, Password: c.Password, Network: "127.0.0.1"})}
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			c.Stop()
			return nil, err
		}
	}
	args := []string{"--config-file=" + config}
	if bin == "/usr/bin/clickhouse" {
		args = append([]string{"server"}, args...)
	}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Dir = c.dir
	c.cmd.SysProcAttr = asClickHouseUser(c.dir)
	if err := c.cmd.Start(); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitReady(60 * time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "error.log"))
		c.Stop()
		return nil, fmt.Errorf("clickhouse-server: %w\n%s", err, log)
	}
	return c, nil
}

func (c *ClickHouse) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		_, err := c.Query("SELECT 1")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// URL is the server's HTTP interface.
func (c *ClickHouse) URL() string { return "http://127.0.0.1:" + strconv.Itoa(c.HTTPPort) + "/" }

// Query runs one statement as the default user through the HTTP interface
// and returns its output (TabSeparated) without the last line end.
func (c *ClickHouse) Query(statement string) (string, error) {
	return ClickHouseHTTP(context.Background(), "127.0.0.1:"+strconv.Itoa(c.HTTPPort), "default", "", statement)
}

// ClickHouseHTTP runs one statement as user through the HTTP interface of
// the server at backend (host:port) and returns its output without the
// last line end; a status other than 200 is an error with the server's
// message.
func ClickHouseHTTP(ctx context.Context, backend, user, password, statement string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+backend+"/", strings.NewReader(statement))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-ClickHouse-User", user)
	if password != "" {
		req.Header.Set("X-ClickHouse-Key", password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("clickhouse: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return strings.TrimSuffix(string(body), "\n"), nil
}

// Stop kills the server and removes its directory.
func (c *ClickHouse) Stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	}
	_ = os.RemoveAll(c.dir)
}

// asClickHouseUser hands dir to the clickhouse user when running as root
// (Debian's package creates it): the server's files then belong to it.
func asClickHouseUser(dir string) *syscall.SysProcAttr {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("clickhouse")
	if err != nil {
		return nil // ClickHouse 18.16 runs as root too
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}
