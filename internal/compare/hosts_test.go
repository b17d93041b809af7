package compare

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// withHosts gives every measurement of the runs the series and figures of
// one database host, host/db-01, as the runner's node_exporter scrapes
// record them (5 s over 60 s): CPU by mode (user busy × 0.7, system × 0.3),
// memory, a disk and an interface; and of one node of the run's pool.
func withHosts(runs []Run, busy float64, node string) []Run {
	for i := range runs {
		for _, m := range runs[i].Measurements {
			res := m.Result
			add := func(subject, name, unit string, v float64) {
				res.Add(results.Metric{Name: name, Operation: subject, Value: v, Unit: unit, Direction: results.Neutral, Source: telemetry.SourceHosts})
				s := results.Series{Name: name, Subject: subject, Unit: unit, Source: telemetry.SourceHosts}
				for k := 1; k <= 12; k++ {
					s.Samples = append(s.Samples, results.Sample{Time: res.StartTime.Add(time.Duration(5*k) * time.Second), Value: v * (0.9 + 0.2*float64(k%2))})
				}
				res.Series = append(res.Series, s)
			}
			for _, subject := range []string{"host/db-01", "node/" + node} {
				add(subject, "cpuBusyPercent", "%", busy)
				add(subject, "cpuUserPercent", "%", busy*0.7)
				add(subject, "cpuSystemPercent", "%", busy*0.3)
				add(subject, "memoryUsedBytes", "bytes", 4e9)
				add(subject, "diskReadBytesPerSecond.vda", "bytes/s", 1e6)
				add(subject, "diskWriteBytesPerSecond.vda", "bytes/s", 3e6)
				add(subject, "networkReceiveBytesPerSecond.eth0", "bytes/s", 2e7)
				add(subject, "networkTransmitBytesPerSecond.eth0", "bytes/s", 1e7)
			}
		}
	}
	return runs
}

func hostSides() (Side, Side) {
	base, cand := sides()
	base.Runs = withHosts(withTimeline(base.Runs, 0), 40, "v3-0")
	cand.Runs = withHosts(withTimeline(cand.Runs, 0), 60, "v4a-0")
	return base, cand
}

// TestReportDrawsTheMachines: a comparison whose measurements recorded a
// database host (the same in both variants) and their pools' nodes draws,
// per variant, each machine's CPU stacked by mode, then memory, disk and
// network over time, and tables each machine's mean and p95 with the
// change where both variants read it (the host: +50 % CPU).
func TestReportDrawsTheMachines(t *testing.T) {
	base, cand := hostSides()
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]bool{}
	for _, v := range rep.Hosts {
		views[v.Variant+" "+v.Subject] = len(v.CPUModes["user"]) > 1 && len(v.Memory) > 1 && len(v.Disk) > 1 && len(v.Network) > 1
	}
	for _, k := range []string{"standard-v3 host/db-01", "standard-v3 node/v3-0", "standard-v4a host/db-01", "standard-v4a node/v4a-0"} {
		if !views[k] {
			t.Errorf("no complete view of %s: %v", k, views)
		}
	}
	rows := map[string]HostRow{}
	for _, r := range rep.HostTable {
		rows[r.Subject+" "+r.Quantity] = r
	}
	cpu := rows["host/db-01 cpuBusyPercent"]
	if fmt.Sprintf("%.1f", float64(cpu.DeltaPercent)) != "50.0" || cpu.Baseline.Mean != 40 || cpu.Baseline.P95 != 44 {
		t.Errorf("the host's CPU row: %+v", cpu)
	}
	if d := rows["host/db-01 diskBytesPerSecond"]; d.Baseline.Mean != 4e6 || d.DeltaPercent != 0 {
		t.Errorf("the host's disk row (read + written): %+v", d)
	}
	if n := rows["node/v3-0 cpuBusyPercent"]; n.Baseline.N == 0 || n.Candidate.N != 0 || !math.IsNaN(float64(n.DeltaPercent)) {
		t.Errorf("a node only the baseline ran on has no change: %+v", n)
	}
	var page bytes.Buffer
	if err := RenderHTML(&page, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"Machines over time", "host/db-01 CPU by mode (standard-v4a", "disk read + written by machine over time",
		"network received + sent by machine over time", `<table class="sortable hosts">`, "<td>host/db-01</td><td>cpuBusyPercent</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(html, `class="chart half host"`); n != 4 {
		t.Errorf("%d stacked CPU charts, want one per machine and variant (4)", n)
	}
}

// The machines' charts, rendered by a real browser: the stacked CPU areas
// of user and system time are on the page in their colours, and the
// memory, disk and network lines in both variants'.
func TestMachinesRenderInChromium(t *testing.T) {
	browser := testutil.NeedEnv(t, "CHROMIUM")
	base, cand := hostSides()
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := RenderHTML(&page, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	want := map[string][3]uint8{"user": {0x4c, 0x78, 0xa8}, "system": {0xf5, 0x85, 0x18}, "baseline": {0x5b, 0x6f, 0x82}, "candidate": {0xe0, 0x7b, 0x39}}
	counts := colourCounts(t, browser, page.String(), "1100,4200", want)
	t.Logf("pixels: %v", counts)
	// Four stacked charts (two machines, two variants), each a ~330-pixel
	// wide plot with user time about a third of its height at 40-60 % busy.
	if counts["user"] < 20000 || counts["system"] < 8000 {
		t.Errorf("the stacked CPU areas: %d user and %d system pixels, want them drawn", counts["user"], counts["system"])
	}
	if counts["baseline"] < 2000 || counts["candidate"] < 2000 {
		t.Errorf("the variants' lines and bars: %d and %d pixels", counts["baseline"], counts["candidate"])
	}
}
