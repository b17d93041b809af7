package localdb

import (
	"fmt"
	"os/exec"
	"time"
)

// NodeExporter is Debian's prometheus-node-exporter on 127.0.0.1 with the
// collectors the hosts' telemetry reads (CPU, memory, load, disks,
// network, boot time): this machine as a host a run names.
type NodeExporter struct {
	// Address is host:port.
	Address string
	cmd     *exec.Cmd
}

// StartNodeExporter starts one; extra are more flags (--web.config.file).
// It returns once its port accepts connections.
func StartNodeExporter(extra ...string) (*NodeExporter, error) {
	bin, err := Tool("prometheus-node-exporter", "/usr/bin/node_exporter")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{"--web.listen-address=" + addr, "--collector.disable-defaults"}, extra...)
	for _, c := range []string{"cpu", "meminfo", "loadavg", "diskstats", "netdev", "stat"} {
		args = append(args, "--collector."+c)
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &NodeExporter{Address: addr, cmd: cmd}
	if err := WaitForPort(port, 15*time.Second); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// Stop kills it.
func (n *NodeExporter) Stop() {
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
}
