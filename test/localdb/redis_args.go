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

// Restart kills the server (SIGKILL, as a node loses a pod) and starts it
// again on the same port with the same arguments and directory, so that a
// cluster member comes back with its nodes.conf: the same node, rejoining.
func (r *Redis) Restart() error {
	r.Kill()
	cmd := exec.Command(r.cmd.Path, r.cmd.Args[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	r.cmd = cmd
	return WaitForPort(r.Port, 10*time.Second)
}

// Kill kills the server and keeps its directory, for Restart.
func (r *Redis) Kill() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}
