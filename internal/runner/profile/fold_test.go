package profile

import (
	"net"
	"os"
	"strings"
	"testing"
)

// perf script's output as this machine's perf 6.1 prints it (-F
// comm,pid,tid,ip,sym,dso --show-task-events): forks of the processes at
// the start, a backend forked in the window, a thread of it, samples of
// the server's processes and of another, frames without a symbol.
const scriptOutput = `swapper     0/0     PERF_RECORD_FORK(1:1):(0:0)
postgres   700/700   PERF_RECORD_FORK(700:700):(1:1)
postgres   700/700   PERF_RECORD_COMM: postgres:700/700
sh  2522/2522  
	            7129 [unknown] (/usr/bin/dash)

postgres   700/700   PERF_RECORD_FORK(812:812):(700:700)
postgres   812/812  
	    55d0c0a1b2c3 ExecScan+0x13 (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1b000 PostgresMain (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1a000 main (/usr/lib/postgresql/15/bin/postgres)

postgres   812/812  
	    7f00000001 [unknown] (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)
	    55d0c0a1b000 PostgresMain (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1a000 main (/usr/lib/postgresql/15/bin/postgres)

postgres   812/813   PERF_RECORD_FORK(812:813):(812:812)
postgres   812/813  
	    55d0c0a1b2c3 ExecScan (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1b000 PostgresMain (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1a000 main (/usr/lib/postgresql/15/bin/postgres)

my worker 999/999  
	    55d0c0a1b2c3 operator;odd (/usr/bin/w)

postgres   900/900  
	    55d0c0a1b2c3 ExecScan (/opt/other/postgres)
`

// Fold keeps the samples of the root's process tree — the backend forked
// in the window and its thread included, another postgres not of it left
// out — names a frame without a symbol by its object, strips offsets, and
// its functions' self times add up to the samples.
func TestFoldKeepsTheServersProcessTree(t *testing.T) {
	p, err := Fold(strings.NewReader(scriptOutput), 700)
	if err != nil {
		t.Fatal(err)
	}
	if p.HostSamples != 6 || p.Samples != 3 || p.Processes != 1 {
		t.Errorf("samples %d of %d on the host, %d processes: want 3 of 6, one process (812)", p.Samples, p.HostSamples, p.Processes)
	}
	want := map[string]int{"postgres;main;PostgresMain;ExecScan": 2, "postgres;main;PostgresMain;[libcrypto.so.3]": 1}
	if len(p.Stacks) != len(want) {
		t.Fatalf("stacks %+v", p.Stacks)
	}
	for _, s := range p.Stacks {
		if want[s.Stack] != s.Samples {
			t.Errorf("stack %q: %d samples, want %d", s.Stack, s.Samples, want[s.Stack])
		}
	}
	p.FrequencyHz = 100
	fns := Functions(p)
	if len(fns) != 2 || fns[0].Name != "ExecScan" || fns[0].TimeMillis != 20 || fns[0].Figures["inclusiveMillis"] != 20 {
		t.Errorf("functions %+v", fns)
	}
	for _, f := range fns {
		if f.Name == "PostgresMain" || f.Name == "main" {
			t.Errorf("%s never ran itself: its time is its callees'", f.Name)
		}
	}
	other, _ := Fold(strings.NewReader(scriptOutput), 999)
	if len(other.Stacks) != 1 || other.Stacks[0].Stack != "my worker;operator:odd" {
		t.Errorf("a command with a space and a frame with ';': %+v", other.Stacks)
	}
}

// Two local servers on one port, on different loopback addresses (the
// simulated cluster's): the listener on the target's address is the one,
// a wildcard listener on the port is too, another address's is not.
func TestListeningMatchesTheAddress(t *testing.T) {
	file := t.TempDir() + "/tcp"
	// 127.77.0.67:5432 (inode 111), 127.77.0.68:5432 (222), 0.0.0.0:6379 (333).
	content := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 43004D7F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   108        0 111 1 0 100 0 0 10 0
   1: 44004D7F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   108        0 222 1 0 100 0 0 10 0
   2: 00000000:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   108        0 333 1 0 100 0 0 10 0
`
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ip   string
		port int
		want string
	}{{"127.77.0.67", 5432, "111"}, {"127.77.0.68", 5432, "222"}, {"127.77.0.69", 6379, "333"}} {
		got := map[string]bool{}
		listening(file, net.ParseIP(c.ip), c.port, got)
		if len(got) != 1 || !got[c.want] {
			t.Errorf("%s:%d: sockets %v, want %s", c.ip, c.port, got, c.want)
		}
	}
}
