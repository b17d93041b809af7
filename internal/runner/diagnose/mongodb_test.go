package diagnose

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A window on FerretDB (the MongoDB-compatible server that runs here; no
// MongoDB does): 200 inserts and 100 finds by _id are its commands' calls,
// the diagnostics' and the poller's own commands left out, and what
// FerretDB does not report (opLatencies, top) is said in the notes.
func TestMongoDBWindowCountsTheCommands(t *testing.T) {
	srv := testutil.StartFerretDB(t, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().SetHosts([]string{"127.0.0.1:" + strconv.Itoa(srv.Port)}).SetDirect(true).SetRetryWrites(false))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	coll := client.Database("dbperf").Collection("diag")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: -1}}); err != nil { // the collection exists before the window
		t.Fatal(err)
	}
	src, err := NewMongoDB(ctx, dbstats.Config{Host: "127.0.0.1", Port: srv.Port})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = src.Close() }()
	w, err := Start(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "v", Value: strings.Repeat("x", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: i}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	d, warnings := w.Stop(ctx)
	if d == nil {
		t.Fatal(warnings)
	}
	t.Logf("%.0f transactions (%s); items %+v; notes %q", d.Transactions, d.TransactionsFrom, d.Items, d.Notes)
	ins, find := item(d, results.DiagnosticCommand, "insert"), item(d, results.DiagnosticCommand, "find")
	if ins == nil || ins.Calls != 200 || find == nil || find.Calls != 100 {
		t.Errorf("insert %+v, find %+v: want 200 and 100 calls", ins, find)
	}
	if d.Transactions != 300 {
		t.Errorf("%.0f transactions, want the 300 commands of the workload", d.Transactions)
	}
	for _, own := range []string{"serverStatus", "top", "hello", "isMaster"} {
		if item(d, results.DiagnosticCommand, own) != nil {
			t.Errorf("the diagnostics' own %s is among the items", own)
		}
	}
	if !strings.Contains(strings.Join(d.Notes, "; "), "opLatencies") {
		t.Errorf("the notes do not say opLatencies are missing: %q", d.Notes)
	}
}

// MongoDB's own replies, shaped as its manual documents serverStatus'
// opLatencies and top (no MongoDB runs here): operations and microseconds
// per kind become commands, each collection's operations statements, the
// admin, local and config databases' left out.
func TestMongoDBRepliesAsDocumented(t *testing.T) {
	status, _ := bson.Marshal(bson.D{{Key: "pid", Value: 1}, {Key: "opLatencies", Value: bson.D{
		{Key: "reads", Value: bson.D{{Key: "latency", Value: int64(250000)}, {Key: "ops", Value: int64(1000)}}},
		{Key: "writes", Value: bson.D{{Key: "latency", Value: int64(900000)}, {Key: "ops", Value: int64(300)}}},
		{Key: "commands", Value: bson.D{{Key: "latency", Value: int64(5000)}, {Key: "ops", Value: int64(40)}}},
	}}, {Key: "metrics", Value: bson.D{{Key: "commands", Value: bson.D{
		{Key: "<UNKNOWN>", Value: int64(0)},
		{Key: "find", Value: bson.D{{Key: "failed", Value: int64(2)}, {Key: "total", Value: int64(1000)}}},
		{Key: "serverStatus", Value: bson.D{{Key: "failed", Value: int64(0)}, {Key: "total", Value: int64(7)}}},
	}}}}})
	top, _ := bson.Marshal(bson.D{{Key: "totals", Value: bson.D{
		{Key: "note", Value: "all times in microseconds"},
		{Key: "ycsb.usertable", Value: bson.D{
			{Key: "total", Value: bson.D{{Key: "time", Value: int64(1150000)}, {Key: "count", Value: int64(1300)}}},
			{Key: "queries", Value: bson.D{{Key: "time", Value: int64(250000)}, {Key: "count", Value: int64(1000)}}},
			{Key: "update", Value: bson.D{{Key: "time", Value: int64(900000)}, {Key: "count", Value: int64(300)}}},
		}},
		{Key: "admin.system.version", Value: bson.D{{Key: "queries", Value: bson.D{{Key: "time", Value: int64(10)}, {Key: "count", Value: int64(1)}}}}},
	}}})
	s := Snapshot{Items: map[string]Counters{}}
	var notes []string
	addServerStatus(&s, status, func(_, n string) { notes = append(notes, n) })
	addTop(&s, top)
	if c := s.Items["opLatencies writes"]; c.Kind != results.DiagnosticCommand || c.Calls != 300 || c.TimeMillis != 900 {
		t.Errorf("opLatencies writes: %+v", c)
	}
	if c := s.Items["find"]; c.Calls != 1000 || c.Figures["failedCalls"] != 2 {
		t.Errorf("find: %+v", c)
	}
	if c := s.Items["update ycsb.usertable"]; c.Kind != results.DiagnosticStatement || c.Calls != 300 || c.TimeMillis != 900 {
		t.Errorf("update ycsb.usertable: %+v", c)
	}
	for name := range s.Items {
		if name == "serverStatus" || strings.Contains(name, "admin.") || strings.Contains(name, "total ") {
			t.Errorf("%s is among the items", name)
		}
	}
	if s.Transactions != 1000 || len(notes) != 0 {
		t.Errorf("transactions %v (want the find's 1000), notes %q", s.Transactions, notes)
	}
}

// LATENCY HISTOGRAM lists only the buckets that hold calls, with
// cumulative counts: a bucket that first appears in the window's second
// snapshot holds the calls below it too, which are not the window's. CI
// saw a window's 2,000 GETs of 1 µs reported at p50 66 µs so: the bucket
// of 66 µs, new in the window, counted the first window's 2,000 as well.
func TestRedisHistogramBucketsNewInTheWindow(t *testing.T) {
	reply := func(buckets ...int64) []any {
		var b []any
		for _, v := range buckets {
			b = append(b, v)
		}
		return []any{"get", []any{"calls", buckets[len(buckets)-1], "histogram_usec", b}}
	}
	snap := func(calls float64, r []any) Snapshot {
		s := Snapshot{Items: map[string]Counters{"get": {Kind: results.DiagnosticCommand, Calls: calls, Figures: map[string]float64{}}}}
		addHistograms(s, r)
		return s
	}
	first := snap(2000, reply(1, 2000))
	last := snap(4012, reply(1, 4000, 64, 4010, 128, 4012))
	src := &Redis{}
	d := diff(src, first, last)
	src.Finish(d)
	g := item(d, results.DiagnosticCommand, "get")
	if g == nil || g.Calls != 2012 || g.Figures["p50Micros"] != 1 || g.Figures["p99Micros"] != 1 || g.Figures["p999Micros"] != 64 {
		t.Errorf("the window's get: %+v; want 2,012 calls, p50 and p99 1 µs, p99.9 64 µs", g)
	}
}
