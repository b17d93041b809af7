package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The API server's node proxy (/api/v1/nodes/<node>/proxy/..., what the
// kubelet telemetry source reads through) refuses loopback node addresses
// ("address not allowed"). Run as root, the simulated cluster gives its
// nodes a private address of its own on the loopback interface instead:
// reachable from this machine only, like everything else here, and
// removed when the cluster stops. Without root, nodes keep 127.0.0.1 and
// the node proxy is unavailable (container logs still work).

// nodeAddrPrefix is the private range the addresses are taken from: one
// per running cluster, so that clusters of tests running at once (and a
// cluster whose stop was never run) never share one.
const nodeAddrPrefix = "10.254.77."

// loopbackNodeAddr is the node address without root.
const loopbackNodeAddr = "127.0.0.1"

// claimNodeAddr adds the first free address of the range to lo and returns
// it; without root, or when ip refuses, it returns 127.0.0.1 and says why
// to log.
func claimNodeAddr(log io.Writer) (addr string, owned bool) {
	if os.Geteuid() != 0 {
		return loopbackNodeAddr, false
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		fmt.Fprintf(log, "sim: no ip command (%v): nodes keep %s, and the API server's node proxy refuses them\n", err, loopbackNodeAddr)
		return loopbackNodeAddr, false
	}
	for i := 1; i < 255; i++ {
		a := fmt.Sprintf("%s%d", nodeAddrPrefix, i)
		var stderr bytes.Buffer
		cmd := exec.Command(ip, "addr", "add", a+"/32", "dev", "lo")
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			return a, true
		}
		// iproute2 says "File exists" or "Address already assigned",
		// depending on its version and the kernel's.
		if msg := stderr.String(); !strings.Contains(msg, "exists") && !strings.Contains(msg, "already assigned") {
			fmt.Fprintf(log, "sim: ip addr add %s/32 dev lo: %v: %s; nodes keep %s\n", a, err, strings.TrimSpace(stderr.String()), loopbackNodeAddr)
			return loopbackNodeAddr, false
		}
		// Another cluster holds it: the next one.
	}
	fmt.Fprintf(log, "sim: every address of %s0/24 is in use on lo; nodes keep %s\n", nodeAddrPrefix, loopbackNodeAddr)
	return loopbackNodeAddr, false
}

// releaseNodeAddr removes an address claimNodeAddr added.
func releaseNodeAddr(addr string) error {
	if !strings.HasPrefix(addr, nodeAddrPrefix) {
		return errors.New("sim: not a node address of the simulated cluster: " + addr)
	}
	out, err := exec.Command("ip", "addr", "del", addr+"/32", "dev", "lo").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip addr del %s/32 dev lo: %w: %s", addr, err, strings.TrimSpace(string(out)))
	}
	return nil
}
