package diagnose

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// MongoDB reads where a server of MongoDB's protocol spent its time: the
// operations of serverStatus' opLatencies (reads, writes, commands,
// transactions: how many and their total microseconds) as commands, each
// collection's operations of the admin command top (insert, queries,
// update, remove, getmore, commands on "db.collection": count and
// microseconds) as statements, and every command's calls and failures of
// metrics.commands (no time). A server that lacks one (FerretDB reports
// metrics.commands only; mongos has no top) is said once in the notes.
type MongoDB struct {
	poller *dbstats.MongoDB
	notes  []string
	said   map[string]bool
}

// NewMongoDB connects as the statistics poller does.
func NewMongoDB(ctx context.Context, c dbstats.Config) (*MongoDB, error) {
	p, err := dbstats.NewMongoDB(ctx, c)
	if err != nil {
		return nil, err
	}
	return &MongoDB{poller: p, said: map[string]bool{}}, nil
}

// Name is the statistics' source.
func (m *MongoDB) Name() string { return dbstats.SourceMongoDB }

// TransactionsFrom says what the transactions count.
func (m *MongoDB) TransactionsFrom() string {
	return "metrics.commands' calls (the diagnostics' and the poller's own commands left out)"
}

// mongoOwn are commands that are not the workload's: the diagnostics',
// the poller's, the drivers' handshakes and monitoring.
var mongoOwn = map[string]bool{"serverStatus": true, "top": true, "getCmdLineOpts": true, "hello": true, "isMaster": true, "ismaster": true,
	"ping": true, "buildInfo": true, "buildinfo": true, "saslStart": true, "saslContinue": true, "endSessions": true, "getParameter": true}

// topOperations are top's per-collection operations read (its total,
// readLock and writeLock sum them).
var topOperations = []string{"insert", "queries", "update", "remove", "getmore", "commands"}

// Snapshot reads serverStatus and top.
func (m *MongoDB) Snapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{Items: map[string]Counters{}}
	raw, err := m.poller.Command(ctx, bson.D{{Key: "serverStatus", Value: 1}, {Key: "tcmalloc", Value: 0}})
	if err != nil {
		return Snapshot{}, err
	}
	s.At = time.Now()
	addServerStatus(&s, raw, m.say)
	if m.said["top"] {
		return s, nil // refused once: not asked again
	}
	if top, err := m.poller.Command(ctx, bson.D{{Key: "top", Value: 1}}); err != nil {
		m.say("top", fmt.Sprintf("no per-collection times (top: %v)", err))
	} else {
		addTop(&s, top)
	}
	return s, nil
}

// say notes something once.
func (m *MongoDB) say(key, note string) {
	if !m.said[key] {
		m.said[key] = true
		m.notes = append(m.notes, note)
	}
}

// addServerStatus reads opLatencies and metrics.commands.
func addServerStatus(s *Snapshot, raw bson.Raw, say func(key, note string)) {
	if lat, ok := raw.Lookup("opLatencies").DocumentOK(); ok {
		for _, kind := range []string{"reads", "writes", "commands", "transactions"} {
			d, ok := lat.Lookup(kind).DocumentOK()
			if !ok {
				continue
			}
			us, _ := d.Lookup("latency").AsFloat64OK()
			ops, _ := d.Lookup("ops").AsFloat64OK()
			s.Items["opLatencies "+kind] = Counters{Kind: results.DiagnosticCommand, Calls: ops, TimeMillis: us / 1000, Figures: map[string]float64{}}
		}
	} else {
		say("opLatencies", "no time per kind of operation (serverStatus has no opLatencies)")
	}
	cmds, ok := raw.Lookup("metrics", "commands").DocumentOK()
	if !ok {
		return
	}
	elems, _ := cmds.Elements()
	for _, e := range elems {
		d, ok := e.Value().DocumentOK() // "<UNKNOWN>" is a number
		if !ok || mongoOwn[e.Key()] {
			continue
		}
		total, _ := d.Lookup("total").AsFloat64OK()
		failed, _ := d.Lookup("failed").AsFloat64OK()
		s.Items[e.Key()] = Counters{Kind: results.DiagnosticCommand, Calls: total, Figures: map[string]float64{"failedCalls": failed}}
		s.Transactions += total
	}
}

// addTop reads top's totals: {"totals": {"db.coll": {"insert": {"time":
// µs, "count": n}, ...}, "note": ...}}.
func addTop(s *Snapshot, raw bson.Raw) {
	totals, ok := raw.Lookup("totals").DocumentOK()
	if !ok {
		return
	}
	elems, _ := totals.Elements()
	for _, e := range elems {
		ns := e.Key()
		d, ok := e.Value().DocumentOK()
		if !ok || strings.HasPrefix(ns, "admin.") || strings.HasPrefix(ns, "local.") || strings.HasPrefix(ns, "config.") {
			continue
		}
		for _, op := range topOperations {
			o, ok := d.Lookup(op).DocumentOK()
			if !ok {
				continue
			}
			us, _ := o.Lookup("time").AsFloat64OK()
			n, _ := o.Lookup("count").AsFloat64OK()
			s.Items[op+" "+ns] = Counters{Kind: results.DiagnosticStatement, Calls: n, TimeMillis: us / 1000, Figures: map[string]float64{}}
		}
	}
}

// Notes say what the server could not give.
func (m *MongoDB) Notes() []string { return m.notes }

// Close closes the connection.
func (m *MongoDB) Close() error { return m.poller.Close() }
