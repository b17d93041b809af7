package dbstats

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The cost of one poll, measured against the real servers (make bench):
// ns/op is the round trip; client-CPU-µs/poll is this process's CPU per
// poll (the poller's share of a load-generator pod); server-CPU-µs/poll is
// what the statement cost the server, from /proc of the process or
// backend that served it (Redis: its own used_cpu). At the default 5 s
// interval, divide by 5e6 µs for the share of a core.

func BenchmarkPollPostgres(b *testing.B) {
	srv := startPostgres(b)
	p, err := NewPostgres(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	backend := int(p.conn.PgConn().PID())
	benchPolls(b, p, func() float64 { return testutil.MustProcessCPUSeconds(b, backend) })
}

func BenchmarkPollMySQL(b *testing.B) {
	srv := startMariaDB(b, "bench-pw")
	p, err := NewMySQL(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: "bench-pw"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(srv.Socket), "mysqld.pid"))
	if err != nil {
		b.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	benchPolls(b, p, func() float64 { return testutil.MustProcessCPUSeconds(b, pid) })
}

func BenchmarkPollRedis(b *testing.B) {
	srv := testutil.StartRedis(b)
	p, err := NewRedis(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchPolls(b, p, func() float64 {
		r, err := p.Poll(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		return r.Counters["used_cpu"]
	})
}

// BenchmarkPollMongoDB: serverStatus of FerretDB (its SQLite handler; a
// real MongoDB's reply is larger), the server's CPU from /proc.
func BenchmarkPollMongoDB(b *testing.B) {
	srv := testutil.StartFerretDB(b, "bench", "bench-pw")
	p, err := NewMongoDB(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: "bench-pw"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchPolls(b, p, func() float64 { return testutil.MustProcessCPUSeconds(b, srv.Pid()) })
}

// benchPolls polls b.N times and reports the CPU both sides spent per poll.
func benchPolls(b *testing.B, p Poller, serverCPU func() float64) {
	ctx := context.Background()
	serverBefore, clientBefore := serverCPU(), selfCPU(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Poll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric((selfCPU(b)-clientBefore).Seconds()*1e6/n, "client-CPU-µs/poll")
	b.ReportMetric((serverCPU()-serverBefore)*1e6/n, "server-CPU-µs/poll")
}

func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
