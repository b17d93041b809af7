package dbstats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SourceOpenSearch names the statistics of an OpenSearch cluster (the
// nodes stats API).
const SourceOpenSearch = "opensearch"

// openSearchStatsPath asks for the four metric groups the figures read,
// of every node of the cluster.
const openSearchStatsPath = "/_nodes/stats/os,process,jvm,indices"

// openSearchRestartSlack is how far a node's JVM start (jvm.timestamp less
// jvm.uptime_in_millis, two clocks read a moment apart) may move between
// polls without being a new life of the JVM.
const openSearchRestartSlack = 2 * time.Second

// openSearchMaxBody bounds a reply (a stats reply of a node is ~5 kB).
const openSearchMaxBody = 64 << 20

// OpenSearch polls the nodes stats API of an OpenSearch cluster over HTTP
// (HTTPS with Config.TLS), one GET per poll, with basic authentication
// when Config has a username or password. Counters are summed over the
// cluster's nodes; gauges are the nodes' sum, mean or maximum.
type OpenSearch struct {
	client   *http.Client
	url      string
	addr     string
	user     string
	password string
	secrets  []string
	// lives is each node's JVM start as first seen in its current life.
	lives map[string]float64
}

// NewOpenSearch reaches c.Host:c.Port and checks that the nodes stats API
// answers.
func NewOpenSearch(ctx context.Context, c Config) (*OpenSearch, error) {
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	scheme := "http"
	transport := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: false}
	if c.TLS != nil {
		scheme = "https"
		transport.TLSClientConfig = c.TLS.Clone()
	}
	o := &OpenSearch{
		client: &http.Client{Transport: transport, Timeout: 10 * time.Second,
			// A redirect would carry the credentials elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		url: scheme + "://" + addr + openSearchStatsPath, addr: addr,
		user: c.Username, password: c.Password, secrets: []string{c.Username, c.Password},
		lives: map[string]float64{},
	}
	if c.Username != "" || c.Password != "" {
		// The header's own value, should any text ever carry it.
		o.secrets = append(o.secrets, basicAuthValue(c.Username, c.Password))
	}
	if _, err := o.Poll(ctx); err != nil {
		transport.CloseIdleConnections()
		return nil, err
	}
	return o, nil
}

// basicAuthValue is what net/http puts after "Basic " for the credentials.
func basicAuthValue(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	r.SetBasicAuth(user, password)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// Source names the statistics.
func (o *OpenSearch) Source() string { return SourceOpenSearch }

// Poll GETs the nodes stats once.
func (o *OpenSearch) Poll(ctx context.Context) (Reading, error) {
	what := "reading the nodes stats of " + o.addr
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.url, nil)
	if err != nil {
		return Reading{}, redact(what, err, o.secrets...)
	}
	if o.user != "" || o.password != "" {
		req.SetBasicAuth(o.user, o.password)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return Reading{}, redact(what, err, o.secrets...)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, openSearchMaxBody))
	if err != nil {
		return Reading{}, redact(what, err, o.secrets...)
	}
	if resp.StatusCode != http.StatusOK {
		text := strings.Join(strings.Fields(string(body)), " ")
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		return Reading{}, redact(what, fmt.Errorf("HTTP status %s: %s", resp.Status, text), o.secrets...)
	}
	nodes, err := parseNodesStats(body)
	if err != nil {
		return Reading{}, fmt.Errorf("nodes stats of %s: %w", o.addr, err)
	}
	return o.reading(nodes), nil
}

// openSearchNode is what a poll reads of one node: its counters, its
// gauges and its JVM's start (jvm.timestamp less jvm.uptime_in_millis;
// unknown when its reply has no jvm section).
type openSearchNode struct {
	id            string
	counters      map[string]float64
	gauges        map[string]float64
	jvmStart      float64
	hasJVMStarted bool
}

// openSearchCounters are the counters summed over the nodes, by the path
// of each in a node's reply.
var openSearchCounters = map[string][]string{
	"process.cpu.total_in_millis":            {"process", "cpu", "total_in_millis"},
	"jvm.gc.young.collection_count":          {"jvm", "gc", "collectors", "young", "collection_count"},
	"jvm.gc.young.collection_time_in_millis": {"jvm", "gc", "collectors", "young", "collection_time_in_millis"},
	"jvm.gc.old.collection_count":            {"jvm", "gc", "collectors", "old", "collection_count"},
	"jvm.gc.old.collection_time_in_millis":   {"jvm", "gc", "collectors", "old", "collection_time_in_millis"},
	"indices.indexing.index_total":           {"indices", "indexing", "index_total"},
	"indices.search.query_total":             {"indices", "search", "query_total"},
}

// openSearchGauges are the per-node gauges, by the path of each.
var openSearchGauges = map[string][]string{
	"os.cpu.percent":          {"os", "cpu", "percent"},
	"process.cpu.percent":     {"process", "cpu", "percent"},
	"jvm.mem.heap_used_bytes": {"jvm", "mem", "heap_used_in_bytes"},
	"jvm.mem.heap_used_pct":   {"jvm", "mem", "heap_used_percent"},
	"indices.docs.count":      {"indices", "docs", "count"},
}

// parseNodesStats reads every node of a nodes stats reply: the numbers at
// the paths the figures read, those a node does not report left out.
func parseNodesStats(body []byte) ([]openSearchNode, error) {
	var reply struct {
		Nodes map[string]map[string]any `json:"nodes"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&reply); err != nil {
		return nil, fmt.Errorf("not a JSON reply: %w", err)
	}
	if reply.Nodes == nil {
		return nil, errors.New("no nodes in the reply: not a nodes stats reply")
	}
	var out []openSearchNode
	for id, doc := range reply.Nodes {
		n := openSearchNode{id: id, counters: map[string]float64{}, gauges: map[string]float64{}}
		for k, path := range openSearchCounters {
			if v, ok := jsonNumber(doc, path...); ok {
				n.counters[k] = v
			}
		}
		for k, path := range openSearchGauges {
			if v, ok := jsonNumber(doc, path...); ok {
				n.gauges[k] = v
			}
		}
		ts, okTS := jsonNumber(doc, "jvm", "timestamp")
		up, okUp := jsonNumber(doc, "jvm", "uptime_in_millis")
		if okTS && okUp {
			n.jvmStart, n.hasJVMStarted = ts-up, true
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// jsonNumber is the number at path in a decoded JSON object.
func jsonNumber(doc map[string]any, path ...string) (float64, bool) {
	var v any = doc
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		if v, ok = m[p]; !ok {
			return 0, false
		}
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// reading sums the nodes' counters, combines their gauges and names the
// cluster's life: each node's id and its JVM's start. A node whose JVM
// start moved by more than openSearchRestartSlack begins a new life; a node that joined or left changes it too, as
// the sums then count other nodes.
func (o *OpenSearch) reading(nodes []openSearchNode) Reading {
	r := Reading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	var epoch []string
	seen := map[string]bool{}
	gaugeSum, gaugeMax, gaugeN := map[string]float64{}, map[string]float64{}, map[string]int{}
	for _, n := range nodes {
		seen[n.id] = true
		for k, v := range n.counters {
			r.Counters[k] += v
		}
		for k, v := range n.gauges {
			gaugeSum[k] += v
			if gaugeN[k] == 0 || v > gaugeMax[k] {
				gaugeMax[k] = v
			}
			gaugeN[k]++
		}
		life := "?"
		if n.hasJVMStarted {
			start, known := o.lives[n.id]
			if !known || math.Abs(n.jvmStart-start) > float64(openSearchRestartSlack.Milliseconds()) {
				start = n.jvmStart
				o.lives[n.id] = start
			}
			life = strconv.FormatFloat(start, 'f', 0, 64)
		}
		epoch = append(epoch, n.id+"@"+life)
	}
	for id := range o.lives {
		if !seen[id] {
			delete(o.lives, id)
		}
	}
	r.Epoch = strings.Join(epoch, ",")
	for k, sum := range gaugeSum {
		switch k {
		case "jvm.mem.heap_used_bytes", "indices.docs.count":
			r.Gauges[k] = sum
		default:
			r.Gauges[k] = sum / float64(gaugeN[k])
			r.Gauges[k+".max"] = gaugeMax[k]
		}
	}
	return r
}

// Figures of OpenSearch. The poll is one GET of the nodes stats, which is
// no indexing and no search: it adds to none of the counters the figures
// read, and nothing is taken off.
func (o *OpenSearch) Figures() []Def {
	return []Def{
		{Name: "osCPUPercent", Kind: Gauge, Key: "os.cpu.percent", Unit: "%"},
		{Name: "osCPUPercentTopNode", Kind: Gauge, Key: "os.cpu.percent.max", Unit: "%"},
		{Name: "processCPUPercent", Kind: Gauge, Key: "process.cpu.percent", Unit: "%"},
		{Name: "processCPUPercentTopNode", Kind: Gauge, Key: "process.cpu.percent.max", Unit: "%"},
		{Name: "serverCPUCores", Kind: PerSecond, Key: "process.cpu.total_in_millis", Unit: "cores", Scale: 0.001},
		{Name: "heapUsedBytes", Kind: Gauge, Key: "jvm.mem.heap_used_bytes", Unit: "bytes"},
		{Name: "heapUsedPercent", Kind: Gauge, Key: "jvm.mem.heap_used_pct", Unit: "%"},
		{Name: "heapUsedPercentTopNode", Kind: Gauge, Key: "jvm.mem.heap_used_pct.max", Unit: "%"},
		{Name: "youngGCsPerSecond", Kind: PerSecond, Key: "jvm.gc.young.collection_count", Unit: "collections/s"},
		{Name: "youngGCMillisPerSecond", Kind: PerSecond, Key: "jvm.gc.young.collection_time_in_millis", Unit: "ms/s"},
		{Name: "oldGCsPerSecond", Kind: PerSecond, Key: "jvm.gc.old.collection_count", Unit: "collections/s"},
		{Name: "oldGCMillisPerSecond", Kind: PerSecond, Key: "jvm.gc.old.collection_time_in_millis", Unit: "ms/s"},
		{Name: "indexedDocsPerSecond", Kind: PerSecond, Key: "indices.indexing.index_total", Unit: "docs/s"},
		{Name: "searchQueriesPerSecond", Kind: PerSecond, Key: "indices.search.query_total", Unit: "queries/s"},
		{Name: "documents", Kind: Gauge, Key: "indices.docs.count", Unit: "docs"},
	}
}

// Close ends the idle connection.
func (o *OpenSearch) Close() error {
	o.client.CloseIdleConnections()
	return nil
}
