package runner

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCPUReader(t *testing.T) {
	cases := map[string]struct {
		files  map[string]string
		used   time.Duration
		source string
		cpus   float64
	}{
		"cgroup v2 with a limit": {map[string]string{
			"cpu.stat": "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n", "cpu.max": "150000 100000\n",
		}, 2500 * time.Millisecond, "cgroup2", 1.5},
		"cgroup v2 with a cpuset": {map[string]string{
			"cpu.stat": "usage_usec 10\n", "cpu.max": "max 100000\n", "cpuset.cpus.effective": "0-3,8,10-11\n",
		}, 10 * time.Microsecond, "cgroup2", 7},
		"cgroup v1": {map[string]string{
			"cpu,cpuacct/cpuacct.usage": "3000000000\n", "cpu,cpuacct/cpu.cfs_quota_us": "200000\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
		}, 3 * time.Second, "cgroup1", 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, c := range tc.files {
				write(t, dir, f, c)
			}
			c := CPUReader{Root: dir}
			used, source, ok := c.Usage()
			if !ok || used != tc.used || source != tc.source {
				t.Fatalf("Usage() = %v %q %v", used, source, ok)
			}
			if got := c.AvailableCPUs(); got != tc.cpus {
				t.Fatalf("AvailableCPUs() = %v, want %v", got, tc.cpus)
			}
		})
	}
	if _, _, ok := (CPUReader{Root: t.TempDir()}).Usage(); ok {
		t.Fatal("no cgroup files must say so")
	}
}

func TestRedactorAcrossWrites(t *testing.T) {
	var out stringsBuilder
	w := &lineWriter{out: &out, red: NewRedactor("abc", "abcdef", ""), limit: 1 << 20}
	for _, chunk := range []string{"pass=ab", "cdef; short=a", "bc\nnext line\n", "tail abc"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "pass=[REDACTED]; short=[REDACTED]\nnext line\ntail [REDACTED]"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	if w.copy.String() != "pass=abcdef; short=abc\nnext line\ntail abc" {
		t.Fatal("the parser's copy must be the tool's own output")
	}
}

type stringsBuilder struct{ b []byte }

func (s *stringsBuilder) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }
func (s *stringsBuilder) String() string              { return string(s.b) }
