package workloads_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// FuzzParse feeds every parser arbitrary output, seeded with the real tool
// outputs: a parser must never panic, and must never call a run it cannot
// read a success without saying so. `go test -fuzz FuzzParse ./workloads`
// explores further; plain `go test` runs the seeds.
func FuzzParse(f *testing.F) {
	for _, tool := range []string{"pgbench", "memtier", "ycsb", "k6", "osb"} {
		dir := testutil.FixturesDir(f, tool)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil && len(raw) < 64<<10 {
				f.Add(raw)
			}
		}
	}
	f.Add([]byte(`"test","rps","avg_latency_ms"` + "\n" + `"SET","1","0.1"` + "\n"))
	f.Add([]byte("ALL STATS\n===\nType Ops/sec\n---\nTotals 12\n\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, name := range registry.Names() {
			w, err := registry.ByName(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range []workloads.ParseInput{{Output: out}, {Files: map[string][]byte{"memtier.json": out}}} {
				r := w.Parse(in)
				if r == nil {
					t.Fatalf("%s returned no result", name)
				}
				if r.Verdict != results.Succeeded && len(r.Reasons) == 0 {
					t.Fatalf("%s: a %s result without a reason", name, r.Verdict)
				}
				if r.Verdict == results.Succeeded {
					if _, ok := r.Get(r.Primary); !ok {
						t.Fatalf("%s: a successful result without its primary metric %v", name, r.Primary)
					}
				}
			}
		}
	})
}
