package localdb

import (
	"os"
	"os/exec"
	"strconv"
	"time"
)

// StartRedisWith starts redis-server on a free port of 127.0.0.1 with the
// arguments build gives for that port and a fresh directory, and nothing
// else but --bind: for tests of the arguments the operator builds (a
// replica's, a cluster member's).
func StartRedisWith(build func(port int, dir string) []string) (*Redis, error) {
	bin, err := Tool("redis-server")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	// A cluster member also listens on port+10000, its bus.
	for port+10000 > 65535 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "dbperf-redis-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append(build(port, dir), "--bind", "127.0.0.1")...)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &Redis{Port: port, cmd: cmd, dir: dir}
	if err := WaitForPort(port, 10*time.Second); err != nil {
		r.Stop()
		return nil, err
	}
	return r, nil
}

// Pid is the server's process id.
func (r *Redis) Pid() int { return r.cmd.Process.Pid }

// Addr is the server's host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }
