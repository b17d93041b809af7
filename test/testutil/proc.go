package testutil

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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

// CPUWindow is a process's CPU over a window of time, from /proc: the
// reference a telemetry figure (cpuCores) is checked against. Start it
// with the source's window, Stop it when the source stops.
type CPUWindow struct {
	pid        int
	cpu        float64
	start, end time.Time
}

// StartCPUWindow opens the window now.
func StartCPUWindow(t testing.TB, pid int) *CPUWindow {
	t.Helper()
	return &CPUWindow{pid: pid, cpu: MustProcessCPUSeconds(t, pid), start: time.Now()}
}

// Stop closes the window now and returns the process's mean CPU over it,
// in cores.
func (w *CPUWindow) Stop(t testing.TB) float64 {
	t.Helper()
	cpu := MustProcessCPUSeconds(t, w.pid)
	w.end = time.Now()
	return (cpu - w.cpu) / w.Seconds()
}

// Seconds is the stopped window's length.
func (w *CPUWindow) Seconds() float64 { return w.end.Sub(w.start).Seconds() }

// AgreesWithin fails the test when a figure is more than tolerance (0.2:
// 20 %) off the reference from /proc, and logs both.
func AgreesWithin(t testing.TB, what string, got, want, tolerance float64) {
	t.Helper()
	t.Logf("%s %.4f, /proc %.4f (%+.1f %%)", what, got, want, 100*(got-want)/want)
	if d := (got - want) / want; math.Abs(d) > tolerance {
		t.Errorf("%s %.4f is %+.1f %% off /proc's %.4f", what, got, 100*d, want)
	}
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
