package testutil

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// userHZ is the unit of /proc/<pid>/stat's times on Linux.
const userHZ = 100

// ProcessCPUSeconds is the user+system CPU time a process (all its
// threads) has used, from /proc/<pid>/stat: what telemetry figures are
// checked against.
func ProcessCPUSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's closing parenthesis (a command may
	// hold spaces): utime and stime are the 12th and 13th of them.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return (ut + st) / userHZ, nil
}

// MustProcessCPUSeconds is ProcessCPUSeconds, failing the test on error.
func MustProcessCPUSeconds(t testing.TB, pid int) float64 {
	t.Helper()
	v, err := ProcessCPUSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// RedisPid is the process id a redis-server on 127.0.0.1:port reports in
// INFO server.
func RedisPid(t testing.TB, port int, password string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Password: password, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no process_id in INFO server:\n%s", info)
	return 0
}
