package runner

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads/memtier"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
)

// fakeClock is the watchdog's clock in these tests: time moves only when
// the test says so.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// memtierLines is real memtier_benchmark 2.1.1 output, one line (ended by
// \n or \r, as memtier ends its status lines) per element.
func memtierLines(t *testing.T, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`[^\r\n]*[\r\n]`).FindAllString(string(raw), -1)
}

func TestWatchdog(t *testing.T) {
	hung := memtierLines(t, "memtier-2.1.1-wrongpass-hung.txt")
	ok := memtierLines(t, "memtier-2.1.1-ok-4s.txt")
	cases := map[string]struct {
		cfg    Watchdog
		parser any
		// lines are written one per second of the fake clock, from 0 s.
		lines []string
		// checkAt is when the watchdog is asked, from the start.
		checkAt time.Duration
		want    string // a part of the reason; "" when the tool is left alone
	}{
		"fatal error, then silence": {
			cfg: Watchdog{AfterFatal: 20 * time.Second}, parser: memtier.Memtier{},
			lines: hung[:4], checkAt: 3*time.Second + 20*time.Second,
			want: `no progress for 20s after the fatal error "error: authentication failed [-WRONGPASS`,
		},
		"fatal error, silence shorter than the limit": {
			cfg: Watchdog{AfterFatal: 20 * time.Second}, parser: memtier.Memtier{},
			lines: hung[:4], checkAt: 3*time.Second + 19*time.Second,
		},
		"fatal error, then a hung memtier's status lines (0 ops)": {
			cfg: Watchdog{AfterFatal: 6 * time.Second}, parser: memtier.Memtier{},
			lines: hung, checkAt: time.Duration(len(hung)) * time.Second,
			want: "after the fatal error",
		},
		"fatal error, then output that goes on": {
			cfg: Watchdog{AfterFatal: 5 * time.Second}, parser: memtier.Memtier{},
			lines:   append(hung[:4:4], "retrying\n", "retrying\n", "retrying\n", "retrying\n", "retrying\n", "retrying\n", "retrying\n"),
			checkAt: 11 * time.Second,
		},
		"status lines whose count moves are progress": {
			cfg: Watchdog{AfterFatal: 2 * time.Second, Always: 2 * time.Second}, parser: memtier.Memtier{},
			lines: append([]string{"error: authentication failed [-WRONGPASS]\n"}, ok[3:7]...), checkAt: 5500 * time.Millisecond,
		},
		"a parser without fatal patterns never arms it": {
			cfg: Watchdog{AfterFatal: time.Second}, parser: pgbench.Pgbench{},
			lines: hung[:4], checkAt: time.Hour,
		},
		"silence without a fatal error is left alone by default": {
			cfg: Watchdog{AfterFatal: 20 * time.Second}, parser: memtier.Memtier{},
			lines: ok[:3], checkAt: time.Hour,
		},
		"silence past the hard limit": {
			cfg: Watchdog{AfterFatal: 20 * time.Second, Always: 30 * time.Second}, parser: pgbench.Pgbench{},
			lines: []string{"starting vacuum...end.\n"}, checkAt: 30 * time.Second,
			want: "no progress (new output or a result-file change) for 30s",
		},
		"a hung memtier's status lines are not progress for the hard limit": {
			cfg: Watchdog{Always: 6 * time.Second}, parser: memtier.Memtier{},
			lines: hung, checkAt: time.Duration(len(hung)) * time.Second,
			want: "no progress (new output or a result-file change) for 6s",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1000, 0)}
			start := clock.t
			p := newProgress(tc.cfg, tc.parser, nil, clock.now)
			for i, l := range tc.lines {
				clock.t = start.Add(time.Duration(i) * time.Second)
				if _, err := p.Write([]byte(l)); err != nil {
					t.Fatal(err)
				}
				if got := p.expired(); got != "" {
					t.Fatalf("stopped at line %d (%q): %s", i, l, got)
				}
			}
			clock.t = start.Add(tc.checkAt)
			got := p.expired()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("reason %q, want one with %q", got, tc.want)
			}
		})
	}
}

// A result file the tool writes to is progress, as output is.
func TestWatchdogResultFileIsProgress(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.json")
	clock := &fakeClock{t: time.Unix(1000, 0)}
	start := clock.t
	p := newProgress(Watchdog{Always: 10 * time.Second}, pgbench.Pgbench{}, []string{file}, clock.now)
	clock.t = start.Add(9 * time.Second)
	if err := os.WriteFile(file, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := p.expired(); got != "" {
		t.Fatalf("stopped: %s", got)
	}
	clock.t = start.Add(18 * time.Second)
	if got := p.expired(); got != "" {
		t.Fatalf("the new file did not count as progress: %s", got)
	}
	clock.t = start.Add(19 * time.Second)
	if got := p.expired(); got == "" {
		t.Fatal("not stopped 10 s after the file last changed")
	}
}

func TestPollEvery(t *testing.T) {
	cases := map[string]struct {
		cfg  Watchdog
		want time.Duration
	}{
		"default":         {Watchdog{AfterFatal: pod.DefaultNoProgressTimeout}, time.Second},
		"short for tests": {Watchdog{AfterFatal: time.Second}, 100 * time.Millisecond},
		"the shorter one": {Watchdog{AfterFatal: 20 * time.Second, Always: 2 * time.Second}, 200 * time.Millisecond},
		"floor":           {Watchdog{Always: 100 * time.Millisecond}, 50 * time.Millisecond},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.cfg.pollEvery(); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}
