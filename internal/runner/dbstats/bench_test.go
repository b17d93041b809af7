package dbstats

import (
	"context"
	"fmt"
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

// BenchmarkPostgresDatabaseSize: the poll with the database's size read
// at every poll and without it, on the empty database and on one of 1,000
// tables (each with its primary key's index and its TOAST table and index:
// 4,000 relations more). pg_database_size stats every file of the
// database, so its cost grows with them: hence the poller reads it at a
// window's edges and at most once per 30 s between them. Not under
// BenchmarkPoll (make bench), as the tables take seconds to create:
// go test ./internal/runner/dbstats -run '^$' -bench BenchmarkPostgresDatabaseSize -benchtime 200x
func BenchmarkPostgresDatabaseSize(b *testing.B) {
	srv := startPostgres(b)
	p, err := NewPostgres(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	backend := int(p.conn.PgConn().PID())
	for _, tables := range []int{0, 1000} {
		for from := 1; from <= tables; from += 250 {
			if err := srv.SQL(fmt.Sprintf(`DO $$ BEGIN FOR i IN %d..%d LOOP
  EXECUTE format('CREATE TABLE t%%s (id int PRIMARY KEY, v text)', i); EXECUTE format('INSERT INTO t%%s VALUES (1, ''x'')', i);
END LOOP; END $$`, from, from+249)); err != nil {
				b.Fatal(err)
			}
		}
		relations, err := srv.Query("SELECT count(*) FROM pg_class")
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range []bool{false, true} {
			b.Run(fmt.Sprintf("tables=%d/size=%v", tables, size), func(b *testing.B) {
				p.sizeEvery, p.sizeAt = 0, time.Time{}
				if !size {
					p.sizeEvery, p.sizeAt = time.Hour, time.Now()
				}
				benchPolls(b, p, func() float64 { return testutil.MustProcessCPUSeconds(b, backend) })
				n, _ := strconv.Atoi(relations)
				b.ReportMetric(float64(n), "relations")
			})
		}
	}
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
