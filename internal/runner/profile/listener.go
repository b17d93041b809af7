package profile

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ServerProcess finds the process of a server at host:port on this host:
// the one holding the socket that listens on the port (its entry in
// /proc/net/tcp or tcp6 in state LISTEN, and the process with that socket
// among its descriptors). A host that is not this one is an error: its
// processes cannot be profiled from here.
func ServerProcess(procRoot, host string, port int) (int, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	if !local(host) {
		return 0, fmt.Errorf("the server %s is not on the runner's host: its processes cannot be sampled from here", net.JoinHostPort(host, strconv.Itoa(port)))
	}
	inodes := map[string]bool{}
	ip := net.ParseIP(host)
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		listening(filepath.Join(procRoot, f), ip, port, inodes)
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on port %d of this host", port)
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(procRoot, e.Name(), "fd"))
		if err != nil {
			continue // another user's process, or gone
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(procRoot, e.Name(), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("the process listening on port %d is not visible to the runner", port)
}

// listening adds the inodes of the sockets listening on port in a
// /proc/net/tcp file ("sl local_address rem_address st ... inode"), on
// the address ip or on every address (several local servers may share a
// port on different loopback addresses; nil ip: any).
func listening(file string, ip net.IP, port int, inodes map[string]bool) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	want := fmt.Sprintf(":%04X", port)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != "0A" || !strings.HasSuffix(fs[1], want) {
			continue
		}
		if addr := procAddress(strings.TrimSuffix(fs[1], want)); ip != nil && addr != nil && !addr.IsUnspecified() && !addr.Equal(ip) {
			continue
		}
		inodes[fs[9]] = true
	}
}

// procAddress reads /proc/net/tcp's hexadecimal address: IPv4 as one
// 32-bit word, IPv6 as four, each in the host's (little-endian) order.
func procAddress(h string) net.IP {
	b, err := hex.DecodeString(h)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b)
}

// local says whether host names this machine: a loopback address or name,
// or one of its interfaces' addresses.
func local(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		addrs, err := net.LookupIP(host)
		if err != nil || len(addrs) == 0 {
			return false
		}
		ip = addrs[0]
	}
	if ip.IsLoopback() {
		return true
	}
	ifaddrs, _ := net.InterfaceAddrs()
	for _, a := range ifaddrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
