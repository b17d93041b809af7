package memtier

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// realCommand adapts an invocation built for the image to this machine:
// the JSON result goes to a temporary directory, and what the kubelet does
// is done here — $(VAR) references are expanded from env (a missing one
// left literal, as the kubelet leaves it), and the variables are set.
func realCommand(t *testing.T, inv pod.Invocation, env map[string]string) ([]string, []string) {
	t.Helper()
	out := t.TempDir()
	var cmd []string
	for _, a := range inv.Command {
		a = strings.ReplaceAll(a, pod.OutputDir, out)
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		cmd = append(cmd, a)
	}
	for _, k := range []string{pod.EnvUsername, pod.EnvPassword} {
		if v, ok := env[k]; ok {
			t.Setenv(k, v)
		} else {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	var files []string
	for _, f := range inv.ResultFiles {
		files = append(files, strings.Replace(f, pod.OutputDir, out, 1))
	}
	return cmd, files
}

// The real memtier_benchmark 2.1.1 (hack/build-tools.sh; MEMTIER
// names it) against redis-server with a password, through the runner, with
// the command lines the operator builds.
func TestRealMemtierAuthentication(t *testing.T) {
	bin := testutil.NeedEnv(t, "MEMTIER") // memtier_benchmark 2.1.1 built by hack/build-tools.sh
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	redis := testutil.StartRedis(t, "--requirepass", "pa:ss word")
	external := pod.Endpoint{Host: "127.0.0.1", Port: int32(redis.Port), Username: secretKey("username", true), Password: secretKey("password", true)}
	cases := map[string]struct {
		ep     pod.Endpoint
		env    map[string]string
		want   results.Verdict
		reason string
	}{
		// The Secret of an external target with a password only: the
		// username variable is not set at all.
		"external Secret with a password only": {external, map[string]string{pod.EnvPassword: "pa:ss word"}, results.Succeeded, ""},
		"external Secret with user and password": {external, map[string]string{pod.EnvUsername: "default", pod.EnvPassword: "pa:ss word"},
			results.Succeeded, ""},
		// memtier 2.1.1 hangs after a failed AUTH; the runner stops it and
		// the parser names what happened from the output so far.
		"wrong password": {external, map[string]string{pod.EnvPassword: "wrong"}, results.Failed,
			"memtier could not authenticate (check the target's credentials): error: authentication failed [-WRONGPASS"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			spec := seed()
			cmd, files := realCommand(t, Memtier{}.Run(spec, c.ep, Memtier{}.Steps(spec)[0]), c.env)
			var out bytes.Buffer
			r := runner.Exec(context.Background(), runner.Options{Parser: Memtier{}, Command: cmd, ResultFiles: files,
				Timeout: 8 * time.Second, Stdout: &out})
			testutil.CheckVerdict(t, r, c.want, c.reason)
			if t.Failed() {
				t.Logf("command %q\n%s", cmd, out.String())
			}
		})
	}
}

// memtier's load step against a server out of memory exits 0 although the
// server refused most writes: through the runner, the prepare step fails
// and says how many.
func TestRealMemtierLoadIntoAFullServerFails(t *testing.T) {
	bin := testutil.NeedEnv(t, "MEMTIER")
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for name, c := range map[string]struct {
		args   []string
		reason string
	}{
		"full":  {[]string{"--maxmemory", "1200kb", "--maxmemory-policy", "noeviction"}, "of the prepare step's writes failed"},
		"empty": {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			redis := testutil.StartRedis(t, c.args...)
			spec := seed()
			spec.Memtier.KeyMaximum = 20000
			inv := Memtier{}.Prepare(spec, pod.Endpoint{Host: "127.0.0.1", Port: int32(redis.Port)})
			cmd, _ := realCommand(t, *inv, nil)
			var out bytes.Buffer
			r := runner.Exec(context.Background(), runner.Options{Parser: Memtier{}, Prepare: true, Command: cmd, Timeout: time.Minute, Stdout: &out})
			if r.ExitCode == nil || *r.ExitCode != 0 {
				t.Fatalf("memtier exit %v, want 0\n%s", r.ExitCode, tail(out.String()))
			}
			want := results.Failed
			if c.reason == "" {
				want = results.Succeeded
			}
			testutil.CheckVerdict(t, r, want, c.reason)
		})
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// A rate level through the runner, as the operator builds it: each
// generator's share of the level divided among its connections
// (--rate-limiting), memtier's offer as its result reports it (its own
// arithmetic, which loses a little when the quota does not divide the
// rate), and what it achieved against that. Two generators split a level
// between them and their merged offers add up.
func TestRealMemtierRateLevel(t *testing.T) {
	bin := testutil.NeedEnv(t, "MEMTIER")
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	redis := testutil.StartRedis(t)
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(redis.Port)}
	if (Memtier{}).RateCorrected(seed()) {
		t.Error("memtier's latency at a fixed rate is from when each request was sent: uncorrected")
	}
	for _, c := range []struct {
		rate       int32
		generators int
		offered    float64 // memtier 2.1.1's arithmetic, worked by hand
	}{
		{2000, 1, 2000}, // 500/s per connection: 10 every 20 ms
		{2010, 1, 1980}, // 503/s per connection: 11 every 22,222 µs = 495/s
		{3000, 2, 2944}, // 1500 each, 375/s per connection: 8 every 21,739 µs = 368/s
	} {
		t.Run(fmt.Sprint(c.rate, "/s by ", c.generators), func(t *testing.T) {
			spec := seed()
			spec.Memtier.Clients, spec.Memtier.Duration = 4, metav1.Duration{Duration: 3 * time.Second}
			step := Memtier{}.Steps(spec)[0]
			step.Params[workloads.RateParameter] = c.rate
			inv := Memtier{}.Run(spec, ep, step)
			parts := make([]*results.Result, c.generators)
			var wg sync.WaitGroup
			for i := range c.generators {
				gi := inv
				gi.Command = runner.ForGenerator(inv.Command, i, c.generators)
				cmd, files := realCommand(t, gi, nil)
				wg.Add(1)
				go func() {
					defer wg.Done()
					var out bytes.Buffer
					parts[i] = runner.Exec(context.Background(), runner.Options{Parser: Memtier{}, Command: cmd, ResultFiles: files, Timeout: 30 * time.Second, Stdout: &out})
					if parts[i].Verdict != results.Succeeded {
						t.Errorf("generator %d: %s %v\n%s", i, parts[i].Verdict, parts[i].Reasons, tail(out.String()))
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			r := parts[0]
			if c.generators > 1 {
				r = results.Merge(parts)
			}
			offered, ok := r.Get(results.Key{Name: capacity.MetricOffered})
			ops, _ := r.Get(r.Primary)
			if !ok || math.Abs(offered.Value-c.offered) > 0.5 {
				t.Fatalf("offered %+v, want %.0f/s", offered, c.offered)
			}
			// Light load on an idle server: memtier sends what it was set to.
			if d := math.Abs(ops.Value/offered.Value - 1); d > 0.05 {
				t.Errorf("achieved %.0f/s of the %.0f/s offered (%.1f %% off)", ops.Value, offered.Value, 100*d)
			}
			// The level judged as a search judges it: p99 from the merged
			// histograms of the generators' operations (memtier's own).
			p99 := []benchv1.LatencyRule{{Percentile: 99, Max: metav1.Duration{Duration: 50 * time.Millisecond}}}
			j := capacity.Judge(&benchv1.CapacityRules{Latency: p99}, capacity.Input{Value: c.rate, Rate: true, Results: []*results.Result{r}})
			if j.LatencyMillis == nil || *j.LatencyMillis <= 0 || !j.Passed {
				t.Errorf("judged on memtier's histograms: %+v", j)
			}
			t.Logf("level %d/s over %d generators: offered %.0f/s, achieved %.0f/s, p99 %v ms", c.rate, c.generators, offered.Value, ops.Value, *j.LatencyMillis)
		})
	}
}
