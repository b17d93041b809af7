package memtier

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The real memtier_benchmark 2.1.1 through the runner, as the operator
// builds its command lines, against a local redis-server: the load step
// fills the key range, a 1:10 SET:GET mix is swept over pipelines 1 and 8,
// and a run of INCR commands; every request count memtier reports equals
// the server's own count of the commands it ran (INFO commandstats), the
// GETs after the load all hit, and the mix is 1:10.
func TestRealMemtierLoadMixPipelinesAndIncr(t *testing.T) {
	bin := testutil.NeedEnv(t, "MEMTIER") // memtier_benchmark 2.1.1 built by hack/build-tools.sh
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	redis := testutil.StartRedis(t)
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:" + strconv.Itoa(redis.Port)})
	defer client.Close()
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(redis.Port)}
	exec := func(inv pod.Invocation, prepare bool) *results.Result {
		t.Helper()
		cmd, files := realCommand(t, inv, nil)
		var out bytes.Buffer
		r := runner.Exec(context.Background(), runner.Options{Parser: Memtier{}, Prepare: prepare, Command: cmd, ResultFiles: files,
			Timeout: time.Minute, Stdout: &out})
		if r.Verdict != results.Succeeded {
			t.Fatalf("%s: %v\n%s", r.Verdict, r.Reasons, tail(out.String()))
		}
		return r
	}
	metric := func(r *results.Result, name, op string) float64 {
		t.Helper()
		m, ok := r.Get(results.Key{Name: name, Operation: op})
		if !ok {
			t.Fatalf("no %s[%s] in %+v", name, op, r.Metrics)
		}
		return m.Value
	}

	spec := seed()
	spec.Memtier.KeyMaximum = 5000
	spec.Memtier.Ratio = "1:10"
	spec.Memtier.Pipeline = []int32{1, 8}
	spec.Memtier.Duration.Duration = 2 * time.Second

	before := testutil.RedisCommandCalls(t, client)
	exec(*Memtier{}.Prepare(spec, ep), true)
	loaded := testutil.RedisCommandCalls(t, client)
	if n, _ := client.DBSize(context.Background()).Result(); n != 5000 || loaded["set"]-before["set"] != 5000 {
		t.Fatalf("the load step left %d keys after %g SETs, want the 5000 of the key range", n, loaded["set"]-before["set"])
	}

	steps := Memtier{}.Steps(spec)
	if len(steps) != 2 || steps[0].Params["pipeline"] != 1 || steps[1].Params["pipeline"] != 8 {
		t.Fatalf("steps %+v, want pipeline 1 then 8", steps)
	}
	var throughput []float64
	for _, step := range steps {
		s0 := testutil.RedisCommandCalls(t, client)
		r := exec(Memtier{}.Run(spec, ep, step), false)
		s1 := testutil.RedisCommandCalls(t, client)
		sets, gets := metric(r, "requests", "Sets"), metric(r, "requests", "Gets")
		if sets != s1["set"]-s0["set"] || gets != s1["get"]-s0["get"] {
			t.Errorf("%s: memtier counts %g SETs and %g GETs, the server ran %g and %g", step.Name, sets, gets, s1["set"]-s0["set"], s1["get"]-s0["get"])
		}
		if ratio := gets / sets; math.Abs(ratio-10) > 1 {
			t.Errorf("%s: GET:SET %.2f, want 10 (ratio 1:10)", step.Name, ratio)
		}
		if misses := metric(r, "missesPerSecond", "Gets"); misses != 0 {
			t.Errorf("%s: %g misses/s after the load step filled the key range", step.Name, misses)
		}
		throughput = append(throughput, metric(r, "opsPerSecond", "Totals"))
	}
	t.Logf("throughput: pipeline 1 %.0f ops/s, pipeline 8 %.0f ops/s (×%.1f)", throughput[0], throughput[1], throughput[1]/throughput[0])

	// INCR on the loaded keys (values of 'x') would be refused: the server
	// says "value is not an integer", memtier counts errors and the
	// measurement fails. On an empty keyspace every INCR creates or counts.
	if err := client.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	incr := seed()
	incr.Memtier.KeyMaximum = 100
	incr.Memtier.Commands = []benchv1.MemtierCommand{{Command: "INCR __key__", Ratio: 1, KeyPattern: "R"}}
	s0 := testutil.RedisCommandCalls(t, client)
	r := exec(Memtier{}.Run(incr, ep, Memtier{}.Steps(incr)[0]), false)
	s1 := testutil.RedisCommandCalls(t, client)
	if n := metric(r, "requests", "Incrs"); n <= 0 || n != s1["incr"]-s0["incr"] {
		t.Errorf("memtier counts %g INCRs, the server ran %g", n, s1["incr"]-s0["incr"])
	}
}
