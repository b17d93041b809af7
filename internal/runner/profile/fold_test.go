package profile

import (
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
