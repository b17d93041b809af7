package dbstats

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// mongoLoad runs clients goroutines on one client of the official driver
// (a pool of clients connections), each inserting perClient documents one
// by one and then finding each of them by _id: a known number of insert
// and find commands.
func mongoLoad(t *testing.T, srv testutil.FerretDB, clients, perClient int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	opts := options.Client().SetHosts([]string{"127.0.0.1:" + strconv.Itoa(srv.Port)}).SetDirect(true).
		SetMaxPoolSize(uint64(clients)).SetMinPoolSize(uint64(clients)).SetRetryWrites(false).SetRetryReads(false)
	if srv.Username != "" {
		opts.SetAuth(options.Credential{Username: srv.Username, Password: srv.Password, AuthSource: "admin"})
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	coll := client.Database("dbperf").Collection("load")
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("c%d-%d", c, i)}, {Key: "v", Value: i}}); err != nil {
					errs <- err
					return
				}
			}
			for i := range perClient {
				if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("c%d-%d", c, i)}}).Err(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestMongoDBCommandsMatchLoad: while a known number of inserts and finds
// run against a real FerretDB (with its authentication on), the commands
// serverStatus counted agree with them. FerretDB 1.24 reports no
// opcounters, connections, mem, network, wiredTiger (cache) or tickets:
// those figures are absent, and no error says so; the test logs the
// sections FerretDB's reply has and the figures it lacks. A real
// MongoDB's are read by the same code (TestParseServerStatusOfMongoDB).
func TestMongoDBCommandsMatchLoad(t *testing.T) {
	srv := testutil.StartFerretDB(t, "bench", "bench-pw")
	ctx := context.Background()
	p, err := NewMongoDB(ctx, Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: "bench-pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first, err := p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := " pid " + strconv.Itoa(srv.Pid()) + " #0"; !strings.HasSuffix(first.Epoch, want) {
		t.Errorf("epoch %q does not end in the server's pid (%q)", first.Epoch, want)
	}

	const clients, perClient = 4, 500
	began := time.Now()
	rec := Start(ctx, p, testInterval)
	mongoLoad(t, srv, clients, perClient)
	took := time.Since(began)
	waitForPolls(t, rec, 3) // at least two intervals, the last after the load
	time.Sleep(testInterval)
	rep := rec.Stop(ctx)

	window := mustFigure(t, rep, "windowSeconds")
	inserts := mustFigure(t, rep, "insertCommandsPerSecond") * window
	finds := mustFigure(t, rep, "findCommandsPerSecond") * window
	total := mustFigure(t, rep, "commandsPerSecond") * window
	n := float64(clients * perClient)
	t.Logf("%d clients, %v inserts and %v finds in %.1f s: the server counted %.0f insert (%+.2f %%) and %.0f find commands (%+.2f %%), %.0f commands in all; window %.1f s; poll %.2f ms",
		clients, n, n, took.Seconds(), inserts, 100*(inserts-n)/n, finds, 100*(finds-n)/n, total, window, mustFigure(t, rep, "pollMillisMean"))
	if !within(inserts, n, 0.02) {
		t.Errorf("insert commands %.0f, the load sent %v", inserts, n)
	}
	if !within(finds, n, 0.02) {
		t.Errorf("find commands %.0f, the load sent %v", finds, n)
	}
	// The load's connection handshakes and the driver's monitors add hellos.
	if total < 2*n || total > 2*n*1.05 {
		t.Errorf("commands %.0f in all, the load sent %v", total, 2*n)
	}
	for _, name := range []string{"insertsPerSecond", "queriesPerSecond", "otherCommandsPerSecond", "connectionsCurrentMean", "connectionsActiveMax",
		"residentMemoryBytesMax", "networkInputBytesPerSecond", "requestsPerSecond", "wiredTigerCacheUsedBytesMax", "wiredTigerCacheConfiguredBytesMax",
		"wiredTigerPagesReadPerSecond", "wiredTigerPagesWrittenPerSecond", "readTicketsOutMax", "readTicketsAvailableMax", "writeTicketsOutMax",
		"writeTicketsAvailableMax"} {
		if v, ok := figureValue(rep, name); ok {
			t.Errorf("FerretDB 1.24 reports no %s, yet the figure is %v: update the docs (and this test)", name, v)
		}
	}
	var lacks []string
	for _, d := range p.Figures() {
		_, plain := figureValue(rep, d.Name)
		_, gauge := figureValue(rep, d.Name+"Mean")
		if !plain && !gauge {
			lacks = append(lacks, d.Name)
		}
	}
	raw, err := p.client.Database("admin").RunCommand(ctx, serverStatusCommand).Raw()
	if err != nil {
		t.Fatal(err)
	}
	elems, _ := raw.Elements()
	var has []string
	for _, e := range elems {
		has = append(has, e.Key())
	}
	t.Logf("FerretDB's serverStatus has %v; the figures it has nothing for: %v", has, lacks)
	if mustFigure(t, rep, "serverRestarts") != 0 || len(rep.Warnings) != 0 {
		t.Errorf("a quiet window has no restarts or warnings: %q", rep.Warnings)
	}
}

// TestParseServerStatusOfMongoDB: the sections a real MongoDB reports and
// FerretDB does not (opcounters, connections, mem, network, metrics.commands
// with its "<UNKNOWN>" number) become counters and gauges, the poller's own
// connections taken off; a restart with the same pid (a container's 1)
// shows as the uptime going down.
func TestParseServerStatusOfMongoDB(t *testing.T) {
	doc := bson.D{
		{Key: "host", Value: "mongo-0"}, {Key: "pid", Value: int64(1)}, {Key: "uptime", Value: 120.0}, {Key: "uptimeMillis", Value: int64(120000)},
		{Key: "opcounters", Value: bson.D{{Key: "insert", Value: int64(10)}, {Key: "query", Value: int64(20)}, {Key: "update", Value: int64(30)},
			{Key: "delete", Value: int64(40)}, {Key: "getmore", Value: int64(50)}, {Key: "command", Value: int64(60)}}},
		{Key: "connections", Value: bson.D{{Key: "current", Value: int32(12)}, {Key: "available", Value: int32(800)}, {Key: "active", Value: int32(5)}}},
		{Key: "mem", Value: bson.D{{Key: "bits", Value: int32(64)}, {Key: "resident", Value: int32(100)}}},
		{Key: "network", Value: bson.D{{Key: "bytesIn", Value: int64(1000)}, {Key: "bytesOut", Value: int64(2000)}, {Key: "numRequests", Value: int64(70)}}},
		{Key: "metrics", Value: bson.D{{Key: "commands", Value: bson.D{
			{Key: "<UNKNOWN>", Value: int64(3)},
			{Key: "find", Value: bson.D{{Key: "failed", Value: int64(0)}, {Key: "total", Value: int64(7)}}},
			{Key: "serverStatus", Value: bson.D{{Key: "failed", Value: int64(0)}, {Key: "total", Value: int64(2)}}},
		}}}},
		{Key: "wiredTiger", Value: bson.D{
			{Key: "cache", Value: bson.D{{Key: "bytes currently in the cache", Value: int64(500)}, {Key: "maximum bytes configured", Value: int64(1000)},
				{Key: "pages read into cache", Value: int64(80)}, {Key: "pages written from cache", Value: int64(90)}}},
			{Key: "concurrentTransactions", Value: bson.D{
				{Key: "write", Value: bson.D{{Key: "out", Value: int32(2)}, {Key: "available", Value: int32(126)}, {Key: "totalTickets", Value: int32(128)}}},
				{Key: "read", Value: bson.D{{Key: "out", Value: int32(1)}, {Key: "available", Value: int32(127)}, {Key: "totalTickets", Value: int32(128)}}},
			}},
		}},
		{Key: "ok", Value: 1.0},
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	r, uptime, err := parseServerStatus(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"opcounters.insert": 10, "opcounters.query": 20, "opcounters.update": 30, "opcounters.delete": 40,
		"opcounters.getmore": 50, "opcounters.command": 60, "network.bytesIn": 1000, "network.bytesOut": 2000, "network.numRequests": 70,
		"commands.find": 7, "commands.insert": 0, "commands.update": 0, "commands.delete": 0, "commands.getMore": 0, "commands.aggregate": 0,
		"commands.total": 9, "wt.pagesRead": 80, "wt.pagesWritten": 90}
	for k, v := range want {
		if r.Counters[k] != v {
			t.Errorf("counter %s = %v, want %v", k, r.Counters[k], v)
		}
	}
	if len(r.Counters) != len(want) {
		t.Errorf("counters %v, want %v", r.Counters, want)
	}
	wantGauges := map[string]float64{"connections.current": 12 - mongoOwnConnections, "connections.active": 4, "mem.resident": 100 << 20,
		"wt.cacheBytes": 500, "wt.cacheMaxBytes": 1000, "tickets.read.out": 1, "tickets.read.available": 127, "tickets.write.out": 2, "tickets.write.available": 126}
	if !maps.Equal(r.Gauges, wantGauges) {
		t.Errorf("gauges %v, want %v", r.Gauges, wantGauges)
	}
	if r.Epoch != "mongo-0 pid 1" || uptime != 120000 {
		t.Errorf("epoch %q, uptime %v ms", r.Epoch, uptime)
	}
	var m MongoDB
	for i, up := range []float64{120000, 125000, 3000, 8000} {
		if got, want := m.restarts(up), []int{0, 0, 1, 1}[i]; got != want {
			t.Errorf("uptime %v ms: restarts %d, want %d", up, got, want)
		}
	}
	if _, _, err := parseServerStatus(must(bson.Marshal(bson.D{{Key: "ok", Value: 1.0}}))); err == nil {
		t.Error("a reply without a pid was taken for a serverStatus")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestServerStatusTicketsOfEachVersion: the tickets are read from where
// the server's version has them, queues.execution (MongoDB 8.0) before
// concurrentTransactions (6.1 to 7.x) before
// wiredTiger.concurrentTransactions (to 6.0); a reply with none of them
// has no tickets, and no error.
func TestServerStatusTicketsOfEachVersion(t *testing.T) {
	tickets := func(out int32) bson.D {
		return bson.D{{Key: "read", Value: bson.D{{Key: "out", Value: out}, {Key: "available", Value: 100 - out}}},
			{Key: "write", Value: bson.D{{Key: "out", Value: out + 1}, {Key: "available", Value: 99 - out}}}}
	}
	base := bson.D{{Key: "host", Value: "m"}, {Key: "pid", Value: int64(1)}, {Key: "uptime", Value: 1.0}}
	for _, tc := range []struct {
		name    string
		extra   bson.D
		readOut float64
	}{
		{"8.0", bson.D{{Key: "queues", Value: bson.D{{Key: "execution", Value: tickets(8)}}}, {Key: "wiredTiger", Value: bson.D{{Key: "concurrentTransactions", Value: tickets(6)}}}}, 8},
		{"6.1-7.x", bson.D{{Key: "concurrentTransactions", Value: tickets(7)}}, 7},
		{"6.0", bson.D{{Key: "wiredTiger", Value: bson.D{{Key: "concurrentTransactions", Value: tickets(6)}}}}, 6},
		{"none", nil, -1},
	} {
		r, _, err := parseServerStatus(must(bson.Marshal(append(slices.Clone(base), tc.extra...))))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := r.Gauges["tickets.read.out"]
		if tc.readOut < 0 {
			if len(r.Gauges) != 0 {
				t.Errorf("%s: gauges %v from a reply without tickets", tc.name, r.Gauges)
			}
			continue
		}
		if !ok || got != tc.readOut || r.Gauges["tickets.write.out"] != tc.readOut+1 || r.Gauges["tickets.read.available"] != 100-tc.readOut {
			t.Errorf("%s: gauges %v, want read out %v", tc.name, r.Gauges, tc.readOut)
		}
	}
}

// getCmdLineOpts' parsed options, flattened, where a server is and what
// may hold a credential left out (the shape MongoDB's manual gives; the
// FerretDB here answers with no parsed options, which is none and no
// error).
func TestMongoDBSettings(t *testing.T) {
	parsed, _ := bson.Marshal(bson.D{
		{Key: "net", Value: bson.D{{Key: "bindIp", Value: "0.0.0.0"}, {Key: "port", Value: 27017}, {Key: "tls", Value: bson.D{{Key: "certificateKeyFilePassword", Value: "s3cret"}}}}},
		{Key: "security", Value: bson.D{{Key: "keyFile", Value: "/etc/keyfile"}, {Key: "authorization", Value: "enabled"}}},
		{Key: "storage", Value: bson.D{{Key: "dbPath", Value: "/data/db"}, {Key: "wiredTiger", Value: bson.D{{Key: "engineConfig", Value: bson.D{{Key: "cacheSizeGB", Value: 4.5}}}}}}},
	})
	out := map[string]string{}
	flattenSettings(parsed, "", out)
	want := map[string]string{"security.authorization": "enabled", "storage.wiredTiger.engineConfig.cacheSizeGB": "4.5"}
	if !maps.Equal(out, want) {
		t.Errorf("settings %v, want %v", out, want)
	}
	srv := testutil.StartFerretDB(t, "", "")
	m, err := NewMongoDB(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	got, err := m.Settings(context.Background())
	t.Logf("FerretDB's getCmdLineOpts: %v (%v)", got, err)
	if err != nil {
		t.Errorf("getCmdLineOpts of FerretDB: %v", err)
	}
}
