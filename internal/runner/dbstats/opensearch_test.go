package dbstats

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// No OpenSearch node runs on the test machines (it is not in Debian, and
// opensearch.org cannot be reached from them): these tests serve a real
// node's reply, recorded in OpenSearch's documentation
// (testdata/opensearch-nodes-stats.json, its source in testdata/README.md),
// and replies derived from it in code, over real HTTP from httptest.

const recordedNode = "F-ByTQzVQ3GQeYzQJArJGQ"

// recordedNodesStats is the recorded reply, decoded.
func recordedNodesStats(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/opensearch-nodes-stats.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// node is one node of a decoded reply.
func node(t *testing.T, doc map[string]any, id string) map[string]any {
	t.Helper()
	n, ok := doc["nodes"].(map[string]any)[id].(map[string]any)
	if !ok {
		t.Fatalf("no node %s", id)
	}
	return n
}

// field is the object holding path's last element, and that element.
func field(t *testing.T, n map[string]any, path string) (map[string]any, string) {
	t.Helper()
	parts := strings.Split(path, ".")
	m := n
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			t.Fatalf("no %s in the node's reply", path)
		}
		m = next
	}
	return m, parts[len(parts)-1]
}

// advance adds delta to the number at path.
func advance(t *testing.T, n map[string]any, path string, delta float64) {
	t.Helper()
	m, k := field(t, n, path)
	v, ok := m[k].(float64)
	if !ok {
		t.Fatalf("%s is not a number", path)
	}
	m[k] = v + delta
}

// set puts v at path.
func set(t *testing.T, n map[string]any, path string, v any) {
	t.Helper()
	m, k := field(t, n, path)
	m[k] = v
}

func encode(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// statsServer serves replies[current] at the nodes stats path; user and
// password, when set, are required (401 otherwise, the request's
// Authorization header echoed in the body, as a careless proxy might).
type statsServer struct {
	*httptest.Server
	replies  [][]byte
	current  atomic.Int32
	requests atomic.Int32
	sawTLS   atomic.Bool
}

func startStatsServer(t *testing.T, useTLS bool, user, password string, replies ...[]byte) (*statsServer, Config) {
	t.Helper()
	s := &statsServer{replies: replies}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.sawTLS.Store(r.TLS != nil)
		if r.Method != http.MethodGet || r.URL.Path != "/_nodes/stats/os,process,jvm,indices" {
			http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		if u, p, ok := r.BasicAuth(); user != "" && (!ok || u != user || p != password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="OpenSearch Security"`)
			http.Error(w, "Unauthorized ("+r.Header.Get("Authorization")+")", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(s.replies[s.current.Load()])
	})
	if useTLS {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	host, port, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Host: host, Username: user, Password: password}
	c.Port, _ = strconv.Atoi(port)
	if useTLS {
		pool := x509.NewCertPool()
		pool.AddCert(s.Certificate())
		c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return s, c
}

// TestOpenSearchFiguresFromRecordedReplies: the recorded reply, then the
// same node 5 s later with its counters advanced by known amounts and its
// gauges set: every rate is the known delta over the interval, every gauge
// the polls' mean and maximum, and the epoch is the node and its JVM's
// start (jvm.timestamp − jvm.uptime_in_millis).
func TestOpenSearchFiguresFromRecordedReplies(t *testing.T) {
	first := recordedNodesStats(t)
	second := recordedNodesStats(t)
	n := node(t, second, recordedNode)
	for path, delta := range map[string]float64{
		"jvm.timestamp": 5000, "jvm.uptime_in_millis": 5000, "os.timestamp": 5000, "process.timestamp": 5000,
		"process.cpu.total_in_millis":                       7500, // 1.5 cores
		"jvm.gc.collectors.young.collection_count":          10,
		"jvm.gc.collectors.young.collection_time_in_millis": 250,
		"jvm.gc.collectors.old.collection_count":            1,
		"jvm.gc.collectors.old.collection_time_in_millis":   40,
		"indices.indexing.index_total":                      25000,
		"indices.search.query_total":                        1000,
		"indices.docs.count":                                25000,
		"jvm.mem.heap_used_in_bytes":                        100 << 20,
	} {
		advance(t, n, path, delta)
	}
	set(t, n, "os.cpu.percent", 40)
	set(t, n, "process.cpu.percent", 30)
	set(t, n, "jvm.mem.heap_used_percent", 77)

	srv, c := startStatsServer(t, false, "", "", encode(t, first), encode(t, second))
	ctx := context.Background()
	p, err := Open(ctx, pod.ProtocolOpenSearch, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r1, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := recordedNode + "@" + strconv.Itoa(1664484195264-21232111); r1.Epoch != want {
		t.Errorf("epoch %q, want %q", r1.Epoch, want)
	}
	srv.current.Store(1)
	r2, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Epoch != r1.Epoch {
		t.Errorf("the epoch changed without a restart: %q → %q", r1.Epoch, r2.Epoch)
	}
	if srv.sawTLS.Load() || srv.requests.Load() != 3 {
		t.Errorf("TLS %v, %d requests; want plain HTTP, 3 (the check and two polls)", srv.sawTLS.Load(), srv.requests.Load())
	}
	rep := Summarize(p.Source(), p.Figures(), []Observation{{Time: t0, Reading: r1}, {Time: t0.Add(5 * time.Second), Reading: r2}}, nil)
	got := map[string]float64{}
	for _, f := range rep.Figures {
		got[f.Name] = f.Value
		if f.Subject != "server" {
			t.Errorf("%s: subject %q", f.Name, f.Subject)
		}
	}
	for name, want := range map[string]float64{
		"serverCPUCores":         1.5,
		"youngGCsPerSecond":      2,
		"youngGCMillisPerSecond": 50,
		"oldGCsPerSecond":        0.2,
		"oldGCMillisPerSecond":   8,
		"indexedDocsPerSecond":   5000,
		"searchQueriesPerSecond": 200,
		"osCPUPercentMean":       20, "osCPUPercentMax": 40,
		"osCPUPercentTopNodeMax": 40,
		"processCPUPercentMean":  15, "processCPUPercentMax": 30,
		"heapUsedBytesMean": 308650480 + 50<<20, "heapUsedBytesMax": 308650480 + 100<<20,
		"heapUsedPercentMean": 67, "heapUsedPercentMax": 77,
		"heapUsedPercentTopNodeMax": 77,
		"documentsMean":             13160 + 12500, "documentsMax": 13160 + 25000,
		"serverRestarts": 0,
	} {
		if v, ok := got[name]; !ok || math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings: %v", rep.Warnings)
	}
}

// TestOpenSearchNodes: with a second node (the recorded one copied under
// another id, its figures changed), counters are summed, CPU and heap
// percentages are the nodes' mean with the busiest node's beside them,
// heap bytes and documents are summed, and the epoch names both nodes.
// A node that leaves changes the epoch.
func TestOpenSearchNodes(t *testing.T) {
	doc := recordedNodesStats(t)
	var second map[string]any
	if err := json.Unmarshal(encode(t, node(t, doc, recordedNode)), &second); err != nil {
		t.Fatal(err)
	}
	set(t, second, "os.cpu.percent", 80)
	set(t, second, "process.cpu.percent", 60)
	set(t, second, "jvm.mem.heap_used_percent", 21)
	set(t, second, "jvm.uptime_in_millis", 1000)
	doc["nodes"].(map[string]any)["second-node"] = second
	one := recordedNodesStats(t)
	srv, c := startStatsServer(t, false, "", "", encode(t, doc), encode(t, one))
	ctx := context.Background()
	p, err := NewOpenSearch(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{
		"os.cpu.percent": 40, "os.cpu.percent.max": 80, "process.cpu.percent": 30, "process.cpu.percent.max": 60,
		"jvm.mem.heap_used_pct": 39, "jvm.mem.heap_used_pct.max": 57,
		"jvm.mem.heap_used_bytes": 2 * 308650480, "indices.docs.count": 2 * 13160,
	} {
		if r.Gauges[k] != want {
			t.Errorf("gauge %s = %v, want %v", k, r.Gauges[k], want)
		}
	}
	if r.Counters["jvm.gc.collectors.young.collection_count"] != 0 || r.Counters["jvm.gc.young.collection_count"] != 36 ||
		r.Counters["process.cpu.total_in_millis"] != 2*170870 {
		t.Errorf("counters not summed over the nodes: %v", r.Counters)
	}
	if want := recordedNode + "@1664462963153,second-node@1664484194264"; r.Epoch != want {
		t.Errorf("epoch %q, want %q", r.Epoch, want)
	}
	srv.current.Store(1)
	r2, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Epoch != recordedNode+"@1664462963153" {
		t.Errorf("after the second node left, epoch %q", r2.Epoch)
	}
}

// TestOpenSearchEpochSeesARestartedJVM: the same node with its JVM
// started again (uptime back to 3 s) has a new epoch, and Summarize counts
// the restart; a start that moves by a millisecond between polls (the two
// clocks read a moment apart) is the same life.
func TestOpenSearchEpochSeesARestartedJVM(t *testing.T) {
	base := recordedNodesStats(t)
	jitter := recordedNodesStats(t)
	advance(t, node(t, jitter, recordedNode), "jvm.timestamp", 5000)
	advance(t, node(t, jitter, recordedNode), "jvm.uptime_in_millis", 5001)
	restarted := recordedNodesStats(t)
	n := node(t, restarted, recordedNode)
	advance(t, n, "jvm.timestamp", 10000)
	set(t, n, "jvm.uptime_in_millis", 3000)
	advance(t, n, "process.cpu.total_in_millis", -170000) // a new process counts from zero
	srv, c := startStatsServer(t, false, "", "", encode(t, base), encode(t, jitter), encode(t, restarted))
	ctx := context.Background()
	p, err := NewOpenSearch(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var obs []Observation
	for i := range 3 {
		srv.current.Store(int32(i))
		r, err := p.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, Observation{Time: t0.Add(time.Duration(5*i) * time.Second), Reading: r})
	}
	if obs[1].Epoch != obs[0].Epoch {
		t.Errorf("a 1 ms jitter of the JVM's start changed the epoch: %q → %q", obs[0].Epoch, obs[1].Epoch)
	}
	if want := recordedNode + "@" + strconv.Itoa(1664484195264+10000-3000); obs[2].Epoch != want {
		t.Errorf("after the restart, epoch %q, want %q", obs[2].Epoch, want)
	}
	rep := Summarize(p.Source(), p.Figures(), obs, nil)
	restarts := -1.0
	for _, f := range rep.Figures {
		if f.Name == "serverRestarts" {
			restarts = f.Value
		}
	}
	if restarts != 1 {
		t.Errorf("serverRestarts = %v, want 1", restarts)
	}
}

// TestOpenSearchOverTLSWithBasicAuth: over HTTPS (httptest's TLS server,
// its certificate trusted through Config.TLS) with basic authentication;
// a wrong password is refused (401) with an error that shows neither the
// password, the username, nor the Authorization header, even though the
// server echoes that header in its body.
func TestOpenSearchOverTLSWithBasicAuth(t *testing.T) {
	const user, password, wrong = "dbperf-user", "right-Secret-42", "Wrong-Secret-4711"
	srv, c := startStatsServer(t, true, user, password, encode(t, recordedNodesStats(t)))
	ctx := context.Background()
	p, err := NewOpenSearch(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	if !srv.sawTLS.Load() || r.Gauges["jvm.mem.heap_used_pct"] != 57 {
		t.Errorf("TLS %v, reading %+v", srv.sawTLS.Load(), r)
	}
	c.Password = wrong
	_, err = NewOpenSearch(ctx, c)
	if err == nil {
		t.Fatal("a wrong password was accepted")
	}
	t.Logf("the error: %v", err)
	for _, secret := range []string{wrong, user, basicAuthValue(user, wrong), "Authorization"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("the error does not name the server and the status: %v", err)
	}
	// Without the CA, the server's certificate is refused.
	c.Password, c.TLS = password, &tls.Config{MinVersion: tls.VersionTLS12}
	if _, err := NewOpenSearch(ctx, c); err == nil || strings.Contains(err.Error(), password) {
		t.Errorf("an untrusted certificate: %v", err)
	}
}

// TestOpenSearchMissingSections: a reply without a node's indices section
// and without its jvm.gc section (a node that does not report them) gives
// no figures of them and no error; the other figures are there.
func TestOpenSearchMissingSections(t *testing.T) {
	doc := recordedNodesStats(t)
	n := node(t, doc, recordedNode)
	delete(n, "indices")
	delete(n["jvm"].(map[string]any), "gc")
	_, c := startStatsServer(t, false, "", "", encode(t, doc))
	ctx := context.Background()
	p, err := NewOpenSearch(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var obs []Observation
	for i := range 2 {
		r, err := p.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, Observation{Time: t0.Add(time.Duration(5*i) * time.Second), Reading: r})
	}
	rep := Summarize(p.Source(), p.Figures(), obs, nil)
	got := map[string]bool{}
	for _, f := range rep.Figures {
		got[f.Name] = true
	}
	for _, absent := range []string{"indexedDocsPerSecond", "searchQueriesPerSecond", "documentsMean", "youngGCsPerSecond", "oldGCMillisPerSecond"} {
		if got[absent] {
			t.Errorf("%s is there without its section", absent)
		}
	}
	for _, present := range []string{"serverCPUCores", "heapUsedBytesMean", "osCPUPercentMean", "processCPUPercentMax"} {
		if !got[present] {
			t.Errorf("%s is missing", present)
		}
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings: %v", rep.Warnings)
	}
}
