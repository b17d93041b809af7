package hoststats

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestHostReadFromItsNodeExporter: the runner's recording scrapes a real
// node_exporter every second over a 9-second window in which the test
// writes and fsyncs a file throughout and burns a core in its second
// half. The host's CPU agrees with /proc/stat and the bytes written with
// /proc/diskstats within 10 %; every scrape's busy share agrees with
// /proc/stat read every 100 ms beside it over the same second (so the
// series is at scrape resolution whatever else the machine runs); a rule
// over time breaks where the same rule breaks on /proc/stat; every core
// has its own series.
func TestHostReadFromItsNodeExporter(t *testing.T) {
	addr := testutil.StartNodeExporter(t)
	h := Host{Name: "db-01", Role: "database", URL: "http://" + addr + "/metrics"}
	sc := NewScraper(h, 5*time.Second)
	defer func() { _ = sc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	procs := testutil.StartProcSampler(t, 100*time.Millisecond)
	stopWriting := writeContinuously(t)
	stat0, disk0 := testutil.ReadProcStat(t), testutil.ReadDiskWrittenBytes(t)
	rec := dbstats.Start(ctx, sc, time.Second)
	time.Sleep(4500 * time.Millisecond) // the window's first half: measured, not waited for
	burnFrom := time.Now()
	stopBurning := burn(t)
	time.Sleep(4500 * time.Millisecond) // its second half, the core burning
	obs, warnings := rec.StopObservations(ctx)
	stat1, disk1 := testutil.ReadProcStat(t), testutil.ReadDiskWrittenBytes(t)
	stopBurning()
	stopWriting()

	rep := Summarize(h, obs, warnings, 0)
	if len(rep.Warnings) > 0 {
		t.Errorf("warnings: %q", rep.Warnings)
	}
	f := testutil.FiguresOf(rep)
	subject := "host/db-01"
	busy := f.Get(t, FigureBusyPercent, subject)
	procBusy := testutil.BusyPercent(stat0, stat1)
	t.Logf("db-01: %d scrapes, cpuBusyPercent %.1f, /proc/stat %.1f (%+.1f %%)", len(obs), busy, procBusy, 100*(busy-procBusy)/procBusy)
	within(t, "cpuBusyPercent against /proc/stat", busy, procBusy, 0.10)

	span := f.Get(t, "windowSeconds", subject)
	var written, procWritten float64
	for k, v := range f {
		if dev, ok := strings.CutPrefix(k.Name, "diskWriteBytesPerSecond."); ok && k.Subject == subject {
			written += v * span
			procWritten += disk1[dev] - disk0[dev]
		}
	}
	t.Logf("db-01: disk writes %.1f MB, /proc/diskstats %.1f MB", written/1e6, procWritten/1e6)
	within(t, "bytes written against /proc/diskstats", written, procWritten, 0.10)

	cores := int(f.Get(t, FigureCount, subject))
	var coreSeries int
	var scraped telemetry.Series
	for _, s := range rep.Series {
		if strings.HasPrefix(s.Name, FigureBusyPercent+".cpu") {
			coreSeries++
		}
		if s.Name == FigureBusyPercent {
			scraped = s
		}
	}
	if coreSeries != cores {
		t.Errorf("%d per-core busy series for %d cores", coreSeries, cores)
	}
	// The same seconds read from /proc/stat: each sample covers the time
	// since the one before it.
	truth := scraped
	truth.Samples = nil
	var diffs []float64
	if n := len(scraped.Samples); n > 1 { // the sampler reads on past the window's last scrape
		last := scraped.Samples[n-1].Time
		if err := testutil.Poll(ctx, 2*time.Second, 50*time.Millisecond, "/proc/stat sampled past the last scrape", func() error {
			if _, ok := procs.BusyPercent(last.Add(-time.Millisecond), last); !ok {
				return fmt.Errorf("no sample after %s", last.Format("15:04:05.000"))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(scraped.Samples); i++ {
		sm := scraped.Samples[i]
		v, ok := procs.BusyPercent(scraped.Samples[i-1].Time, sm.Time)
		if !ok {
			t.Fatalf("/proc/stat was not sampled around %s", sm.Time.Format("15:04:05.000"))
		}
		truth.Samples = append(truth.Samples, telemetry.Sample{Time: sm.Time, Value: v})
		diffs = append(diffs, math.Abs(sm.Value-v))
	}
	if len(diffs) < 7 {
		t.Fatalf("the busy series has %d samples over 9 s: not at the scrapes' resolution", len(scraped.Samples))
	}
	sort.Float64s(diffs)
	t.Logf("busy series against /proc/stat over the same seconds: median |Δ| %.1f points, largest %.1f (%d samples)", diffs[len(diffs)/2], diffs[len(diffs)-1], len(diffs))
	if med := diffs[len(diffs)/2]; med > 5 {
		t.Errorf("the busy series is %.1f points from /proc/stat over the same seconds (median)", med)
	}

	// A rule over time, busy above the middle of the halves before and
	// after the burn for longer than 2 s, breaks in the scraped series
	// where it breaks in /proc/stat's (on a machine busy with other tests
	// the burn may not rise above what ran before it; then /proc/stat
	// has no breach near it and the rule is not judged).
	var before, after []float64
	for _, sm := range truth.Samples {
		switch {
		case sm.Time.Before(burnFrom):
			before = append(before, sm.Value)
		case sm.Time.After(burnFrom.Add(1500 * time.Millisecond)):
			after = append(after, sm.Value)
		}
	}
	b, a := mean(before), mean(after)
	rule := telemetry.Rule{Name: "burn", Series: FigureBusyPercent, Subject: subject, Condition: telemetry.RuleAbove, Threshold: (a + b) / 2, For: 2 * time.Second}
	judge := func(s telemetry.Series) []telemetry.Breach {
		r := results.New("test")
		telemetry.Attach(r, &telemetry.Report{Series: []telemetry.Series{s}})
		return telemetry.JudgeRules(r, []telemetry.Rule{rule})
	}
	t.Logf("/proc/stat: %.1f %% busy before the burn, %.1f %% after (%d cores)", b, a, cores)
	var atBurn *telemetry.Breach
	for _, br := range judge(truth) {
		if d := br.From.Sub(burnFrom); d >= -time.Second && d <= 1500*time.Millisecond && a-b >= 25/float64(cores) {
			atBurn = &br
		}
	}
	if atBurn == nil {
		t.Logf("/proc/stat shows no rise at the burn (%.1f %% before, %.1f %% after): the rule is not judged", b, a)
		return
	}
	for _, br := range judge(scraped) {
		if d := br.From.Sub(atBurn.From); d.Abs() <= 1100*time.Millisecond {
			t.Logf("burn from %s: %s", burnFrom.Format("15:04:05.000"), br.Text)
			return
		}
	}
	t.Errorf("the rule breaks on /proc/stat from %s (the burn from %s), not in the scraped series", atBurn.From.Format("15:04:05.000"), burnFrom.Format("15:04:05.000"))
}

// TestSecuredNodeExporter: a node_exporter serving HTTPS with basic auth
// (the exporter toolkit's web configuration) is read with the CA and the
// credentials; a wrong password is an error naming the answer, and an
// unverified certificate an error too.
func TestSecuredNodeExporter(t *testing.T) {
	port, ca := testutil.StartSecuredNodeExporter(t, "dbperf", "s3cret")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	url := fmt.Sprintf("https://localhost:%d/metrics", port)
	poll := func(h Host) error {
		sc := NewScraper(h, 5*time.Second)
		defer func() { _ = sc.Close() }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		for range 50 { // the exporter starts serving TLS a moment after it listens
			var rd dbstats.Reading
			if rd, err = sc.Poll(ctx); err == nil {
				if len(rd.Counters) == 0 || rd.Epoch == "" {
					return fmt.Errorf("a reading without counters or boot time: %+v", rd)
				}
				return nil
			}
			if !strings.Contains(err.Error(), "connection reset") && !strings.Contains(err.Error(), "EOF") {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}
	good := Host{Name: "db-01", URL: url, Username: "dbperf", Password: "s3cret", TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	if err := poll(good); err != nil {
		t.Fatalf("HTTPS with basic auth: %v", err)
	}
	wrong := good
	wrong.Password = "guess"
	if err := poll(wrong); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong password: %v, want an error naming 401", err)
	} else if strings.Contains(err.Error(), "guess") {
		t.Errorf("the error prints the password: %v", err)
	}
	unverified := good
	unverified.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	if err := poll(unverified); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a certificate of an unknown CA: %v, want a certificate error", err)
	}
}

// TestSummaryOfScrapes checks the arithmetic on readings made by hand:
// rates and ratios over the window, a reboot, and the series' budget.
func TestSummaryOfScrapes(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var obs []dbstats.Observation
	for i := range 61 { // 5 minutes at 5 s
		c := map[string]float64{
			Key(groupCPU, "0", "idle"): float64(i) * 4, Key(groupCPU, "0", "user"): float64(i) * 1,
			Key(groupCPU, "1", "idle"): float64(i) * 1, Key(groupCPU, "1", "system"): float64(i) * 4,
			Key(groupDisk, "sda", "writes"): float64(i) * 500, Key(groupDisk, "sda", "writtenBytes"): float64(i) * 5e6,
			Key(groupDisk, "sda", "reads"): 0, Key(groupDisk, "sda", "readSeconds"): 0, Key(groupDisk, "sda", "writeSeconds"): float64(i) * 1,
			Key(groupNet, "eth0", "receiveBytes"): float64(i) * 1e6, Key(groupNet, "eth0", "receiveDrops"): float64(i / 30),
			Key(groupNet, "lo", "receiveBytes"): float64(i) * 9e9,
		}
		epoch := "1000"
		if i >= 40 { // rebooted between scrape 39 and 40: counters from zero
			epoch = "2000"
			for k, v := range c {
				c[k] = v - v*39/float64(i)
			}
		}
		obs = append(obs, dbstats.Observation{Time: t0.Add(time.Duration(i) * 5 * time.Second), Reading: dbstats.Reading{Epoch: epoch, Counters: c,
			Gauges: map[string]float64{Key(groupMemory, "", "total"): 8e9, Key(groupMemory, "", "available"): 6e9, Key(groupLoad, "", "1"): 1.5}}})
	}
	rep := Summarize(Host{Name: "app-1"}, obs, nil, 100)
	f := testutil.FiguresOf(rep)
	s := "host/app-1"
	for name, want := range map[string]float64{
		FigureBusyPercent: 50, FigureBusyPercent + ".cpu0": 20, FigureBusyPercent + ".cpu1": 80, "cpuSystemPercent": 40, "cpuUserPercent": 10,
		telemetry.FigureCPUCores: 1, FigureCount: 2, "memoryUsedBytes": 2e9, "load1": 1.5,
		"diskWritesPerSecond.sda": 100, "diskWriteBytesPerSecond.sda": 1e6, "diskAwaitMillis.sda": 2,
		"networkReceiveBytesPerSecond.eth0": 2e5, FigureRestarts: 1, FigureBusyPercent + "BusiestCore": 80,
	} {
		if got := f.Get(t, name, s); abs(got-want) > 1e-6*max(abs(want), 1) {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	if _, ok := f[testutil.FigureKey{Name: "networkReceiveBytesPerSecond.lo", Subject: s}]; ok {
		t.Error("the loopback has figures")
	}
	n := 0
	for _, sr := range rep.Series {
		n += len(sr.Samples)
	}
	if n > 100 {
		t.Errorf("%d samples over a budget of 100", n)
	}
	var coarsened, rebooted bool
	for _, w := range rep.Warnings {
		coarsened = coarsened || strings.Contains(w, "coarsened")
		rebooted = rebooted || strings.Contains(w, "rebooted between 2026-11-28T12:03:15Z and 2026-11-28T12:03:20Z")
	}
	if !coarsened || !rebooted {
		t.Errorf("warnings %q: want the coarsening and the reboot named", rep.Warnings)
	}
}

func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if want == 0 || abs(got-want)/abs(want) > rel {
		t.Errorf("%s: %.4g, want %.4g within %.0f %%", what, got, want, 100*rel)
	}
}

func abs(v float64) float64 { return max(v, -v) }

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(max(len(vs), 1))
}

// burn keeps one core busy until the returned function is called.
func burn(t *testing.T) func() {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	t.Cleanup(stop)
	return stop
}

// writeContinuously writes and fsyncs 256 KiB every 50 ms into a
// temporary file until the returned function is called.
func writeContinuously(t *testing.T) func() {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "writes"))
	if err != nil {
		t.Fatal(err)
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		buf := make([]byte, 256<<10)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			buf[0] = byte(i)
			_, _ = f.WriteAt(buf, int64(i%64)*int64(len(buf)))
			_ = f.Sync()
		}
	}()
	var once bool
	return func() {
		if !once {
			once = true
			close(done)
			<-stopped
			_ = f.Close()
		}
	}
}
