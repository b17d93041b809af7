package redisbenchmark

import (
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// The outputs below were printed by redis-benchmark 7.0.15 (Debian) against
// redis-server 7.0.15 on 127.0.0.1.
const csvOut = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","37037.04","0.144","0.040","0.135","0.239","0.319","4.671"
"GET","36166.37","0.151","0.032","0.135","0.207","0.319","5.655"
`

const textOut = `====== SET ======
  20000 requests completed in 0.53 seconds
  10 parallel clients
  3 bytes payload
  keep alive: 1
  host configuration "save": 
  multi-thread: no

Latency by percentile distribution:
0.000% <= 0.031 milliseconds (cumulative count 1)
100.000% <= 3.039 milliseconds (cumulative count 20000)

Summary:
  throughput summary: 37807.18 requests per second
  latency summary (msec):
          avg       min       p50       p95       p99       max
        0.142     0.024     0.135     0.247     0.303     3.039
`

const quietOut = "SET: 41322.31 requests per second, p50=0.135 msec\r                                                   \rGET: 41666.67 requests per second, p50=0.135 msec\n"

const authErr = `Node 127.0.0.1:16399 replied with error:
NOAUTH Authentication required.
`

func TestParse(t *testing.T) {
	cases := map[string]struct {
		out     string
		verdict results.Verdict
		primary results.Key
		values  map[results.Key]float64
		reason  string
	}{
		"csv": {out: csvOut, verdict: results.Succeeded, primary: results.Key{Name: "opsPerSecond", Operation: "SET"},
			values: map[results.Key]float64{{Name: "opsPerSecond", Operation: "GET"}: 36166.37, {Name: "latencyP99Millis", Operation: "SET"}: 0.319, {Name: "latencyMaxMillis", Operation: "GET"}: 5.655}},
		"text": {out: textOut, verdict: results.Succeeded, primary: results.Key{Name: "opsPerSecond", Operation: "SET"},
			values: map[results.Key]float64{{Name: "opsPerSecond", Operation: "SET"}: 37807.18, {Name: "latencyP95Millis", Operation: "SET"}: 0.247, {Name: "latencyAverageMillis", Operation: "SET"}: 0.142}},
		"quiet": {out: quietOut, verdict: results.Succeeded, primary: results.Key{Name: "opsPerSecond", Operation: "SET"},
			values: map[results.Key]float64{{Name: "opsPerSecond", Operation: "GET"}: 41666.67, {Name: "latencyP50Millis", Operation: "GET"}: 0.135}},
		"server error": {out: authErr, verdict: results.Failed, reason: "NOAUTH"},
		"nothing":      {out: "Could not connect to Redis at 127.0.0.1:1: Connection refused\n", verdict: results.Failed, reason: "Could not connect"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := RedisBenchmark{}.Parse(workloads.ParseInput{Output: []byte(tc.out)})
			if r.Verdict != tc.verdict {
				t.Fatalf("verdict %s %v, want %s", r.Verdict, r.Reasons, tc.verdict)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(r.Reasons, "|"), tc.reason) {
				t.Errorf("reasons %v lack %q", r.Reasons, tc.reason)
			}
			if tc.verdict == results.Succeeded && r.Primary != tc.primary {
				t.Errorf("primary %v, want %v", r.Primary, tc.primary)
			}
			for k, v := range tc.values {
				if m, ok := r.Get(k); !ok || m.Value != v {
					t.Errorf("%v = %v (found %v), want %v", k, m.Value, ok, v)
				}
			}
		})
	}
}
