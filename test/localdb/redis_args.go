package localdb

import (
	"os/exec"
	"strconv"
)

// StartRedisWith starts redis-server on a free port of 127.0.0.1 with the
// arguments build gives for that port and a fresh directory, and nothing
// else but --bind: for tests of the arguments the operator builds (a
// replica's, a cluster member's).
func StartRedisWith(build func(port int, dir string) []string) (*Redis, error) {
	return startRedis(true, func(port int, dir string) []string { return append(build(port, dir), "--bind", "127.0.0.1") })
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
	if err := r.start(exec.Command(r.cmd.Path, r.cmd.Args[1:]...)); err != nil {
		return err
	}
	return r.waitListening()
}

// Kill kills the server and keeps its directory, for Restart.
func (r *Redis) Kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}
