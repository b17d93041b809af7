package dbstats

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// SourceMongoDB names the statistics of MongoDB and the servers that speak
// its protocol (serverStatus).
const SourceMongoDB = "mongodb"

// mongoOpcounters are serverStatus' opcounters (operations since the
// server started; insert, update and delete count documents).
var mongoOpcounters = []string{"insert", "query", "update", "delete", "getmore", "command"}

// mongoCommands are the commands of metrics.commands read as counters
// (commands completed, whatever number of documents each carried).
var mongoCommands = []string{"insert", "find", "update", "delete", "getMore", "aggregate"}

// mongoOwnConnections are the poller's own connections: the one of its
// pool (MaxPoolSize 1) and the driver's server monitor (poll mode: one).
const mongoOwnConnections = 2

// MongoDB polls serverStatus of a MongoDB server or of one that speaks its
// protocol. A real MongoDB reports everything the figures read; FerretDB
// 1.24 reports only pid, uptime and metrics.commands (no opcounters,
// connections, mem, network, wiredTiger or tickets): the figures of what a
// server does not report are left out, without an error.
type MongoDB struct {
	client  *mongo.Client
	addr    string
	secrets []string
	// A restarted server in a container has the same pid (1): a restart
	// also shows as the uptime going down, and generation counts those.
	lastUptimeMillis float64
	generation       int
}

// NewMongoDB connects to c.Host:c.Port directly (not to the rest of a
// replica set) with c's credentials, authenticated against c.Database
// (admin when empty), and checks that serverStatus answers.
func NewMongoDB(ctx context.Context, c Config) (*MongoDB, error) {
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	opts := options.Client().SetHosts([]string{addr}).SetDirect(true).SetAppName("dbperf-dbstats").
		// One connection for the polls and one for the driver's monitor,
		// which polls (no streaming connection and no RTT connection).
		SetMaxPoolSize(1).SetServerMonitoringMode(options.ServerMonitoringModePoll).SetHeartbeatInterval(time.Minute).
		// One attempt per poll: a failed poll is a warning and the next
		// one tries again.
		SetRetryReads(false).SetConnectTimeout(10 * time.Second).SetServerSelectionTimeout(10 * time.Second)
	if c.Username != "" || c.Password != "" {
		source := c.Database
		if source == "" {
			source = "admin"
		}
		opts.SetAuth(options.Credential{Username: c.Username, Password: c.Password, AuthSource: source})
	}
	if c.TLS != nil {
		opts.SetTLSConfig(c.TLS)
	}
	m := &MongoDB{addr: addr, secrets: []string{c.Username, c.Password}}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, redact("configuring the MongoDB client for "+addr, err, m.secrets...)
	}
	m.client = client
	if _, err := m.Poll(ctx); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, err
	}
	return m, nil
}

// Source names the statistics.
func (m *MongoDB) Source() string { return SourceMongoDB }

// serverStatusCommand leaves out tcmalloc, which the figures do not read
// and a real MongoDB spends much on (FerretDB ignores the field). The
// wiredTiger section stays: its cache and, to MongoDB 6.0, its tickets are
// read.
var serverStatusCommand = bson.D{{Key: "serverStatus", Value: 1}, {Key: "tcmalloc", Value: 0}}

// mongoTicketSections hold the storage engine's read and write tickets,
// by version: queues.execution (8.0), concurrentTransactions (6.1 to 7.x),
// wiredTiger.concurrentTransactions (to 6.0), as MongoDB's change notes
// and monitoring agents have them (no live server checked here). The
// first present is read.
var mongoTicketSections = [][]string{{"queues", "execution"}, {"concurrentTransactions"}, {"wiredTiger", "concurrentTransactions"}}

// mongoCache are wiredTiger.cache's statistics read, by their keys.
var mongoCache = []struct {
	field, key string
	gauge      bool
}{
	{"bytes currently in the cache", "wt.cacheBytes", true},
	{"maximum bytes configured", "wt.cacheMaxBytes", true},
	{"pages read into cache", "wt.pagesRead", false},
	{"pages written from cache", "wt.pagesWritten", false},
}

// Poll runs serverStatus once.
func (m *MongoDB) Poll(ctx context.Context) (Reading, error) {
	raw, err := m.client.Database("admin").RunCommand(ctx, serverStatusCommand).Raw()
	if err != nil {
		return Reading{}, redact(fmt.Sprintf("reading serverStatus of %s", m.addr), err, m.secrets...)
	}
	r, uptime, err := parseServerStatus(raw)
	if err != nil {
		return Reading{}, fmt.Errorf("serverStatus of %s: %w", m.addr, err)
	}
	r.Epoch += " #" + strconv.Itoa(m.restarts(uptime))
	return r, nil
}

// restarts counts the times the uptime went down: restarts of a server
// whose host and pid stayed the same.
func (m *MongoDB) restarts(uptimeMillis float64) int {
	if uptimeMillis < m.lastUptimeMillis {
		m.generation++
	}
	m.lastUptimeMillis = uptimeMillis
	return m.generation
}

// parseServerStatus reads serverStatus' reply: the Epoch (host and pid,
// less the restarts of the same pid the caller counts from the uptime),
// and the counters and gauges the server reports. The poller's own
// connections and its own command in progress are taken off.
func parseServerStatus(raw bson.Raw) (Reading, float64, error) {
	r := Reading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	num := func(path ...string) (float64, bool) {
		v, err := raw.LookupErr(path...)
		if err != nil {
			return 0, false
		}
		return v.AsFloat64OK()
	}
	pid, ok := num("pid")
	if !ok {
		return Reading{}, 0, fmt.Errorf("no pid in the reply: not a serverStatus")
	}
	host, _ := raw.Lookup("host").StringValueOK()
	r.Epoch = host + " pid " + strconv.FormatFloat(pid, 'f', 0, 64)
	uptime, ok := num("uptimeMillis")
	if !ok {
		secs, _ := num("uptime")
		uptime = secs * 1000
	}
	for _, k := range mongoOpcounters {
		if v, ok := num("opcounters", k); ok {
			r.Counters["opcounters."+k] = v
		}
	}
	// metrics.commands lists the commands that ran: one that has not run
	// yet counts zero.
	if _, err := raw.LookupErr("metrics", "commands"); err == nil {
		for _, k := range mongoCommands {
			v, _ := num("metrics", "commands", k, "total")
			r.Counters["commands."+k] = v
		}
		if cmds, ok := raw.Lookup("metrics", "commands").DocumentOK(); ok {
			elems, err := cmds.Elements()
			if err != nil {
				return Reading{}, 0, err
			}
			var total float64
			for _, e := range elems {
				// A real MongoDB's "<UNKNOWN>" entry is a number, not a document.
				if d, ok := e.Value().DocumentOK(); ok {
					t, _ := d.Lookup("total").AsFloat64OK()
					total += t
				}
			}
			r.Counters["commands.total"] = total
		}
	}
	for _, k := range []string{"bytesIn", "bytesOut", "numRequests"} {
		if v, ok := num("network", k); ok {
			r.Counters["network."+k] = v
		}
	}
	if v, ok := num("connections", "current"); ok {
		r.Gauges["connections.current"] = max(v-mongoOwnConnections, 0)
	}
	if v, ok := num("connections", "active"); ok {
		r.Gauges["connections.active"] = max(v-1, 0) // the poller's, running serverStatus
	}
	if v, ok := num("mem", "resident"); ok {
		r.Gauges["mem.resident"] = v * (1 << 20) // MiB
	}
	for _, c := range mongoCache {
		v, ok := num("wiredTiger", "cache", c.field)
		switch {
		case !ok:
		case c.gauge:
			r.Gauges[c.key] = v
		default:
			r.Counters[c.key] = v
		}
	}
	for _, section := range mongoTicketSections {
		if _, err := raw.LookupErr(section...); err != nil {
			continue
		}
		for _, op := range []string{"read", "write"} {
			for _, k := range []string{"out", "available"} {
				if v, ok := num(slices.Concat(section, []string{op, k})...); ok {
					r.Gauges["tickets."+op+"."+k] = v
				}
			}
		}
		break
	}
	return r, uptime, nil
}

// Figures of MongoDB. The poll is one command: opcounters.command,
// network.numRequests and the commands' total count it once per poll (the
// driver's monitor adds one hello a minute).
func (m *MongoDB) Figures() []Def {
	return []Def{
		{Name: "insertsPerSecond", Kind: PerSecond, Key: "opcounters.insert", Unit: "docs/s"},
		{Name: "queriesPerSecond", Kind: PerSecond, Key: "opcounters.query", Unit: "ops/s"},
		{Name: "updatesPerSecond", Kind: PerSecond, Key: "opcounters.update", Unit: "docs/s"},
		{Name: "deletesPerSecond", Kind: PerSecond, Key: "opcounters.delete", Unit: "docs/s"},
		{Name: "getMoresPerSecond", Kind: PerSecond, Key: "opcounters.getmore", Unit: "ops/s"},
		{Name: "otherCommandsPerSecond", Kind: PerSecond, Key: "opcounters.command", Unit: "ops/s", OwnPerPoll: 1},
		{Name: "insertCommandsPerSecond", Kind: PerSecond, Key: "commands.insert", Unit: "commands/s"},
		{Name: "findCommandsPerSecond", Kind: PerSecond, Key: "commands.find", Unit: "commands/s"},
		{Name: "updateCommandsPerSecond", Kind: PerSecond, Key: "commands.update", Unit: "commands/s"},
		{Name: "deleteCommandsPerSecond", Kind: PerSecond, Key: "commands.delete", Unit: "commands/s"},
		{Name: "getMoreCommandsPerSecond", Kind: PerSecond, Key: "commands.getMore", Unit: "commands/s"},
		{Name: "aggregateCommandsPerSecond", Kind: PerSecond, Key: "commands.aggregate", Unit: "commands/s"},
		{Name: "commandsPerSecond", Kind: PerSecond, Key: "commands.total", Unit: "commands/s", OwnPerPoll: 1},
		{Name: "requestsPerSecond", Kind: PerSecond, Key: "network.numRequests", Unit: "requests/s", OwnPerPoll: 1},
		{Name: "networkInputBytesPerSecond", Kind: PerSecond, Key: "network.bytesIn", Unit: "bytes/s"},
		{Name: "networkOutputBytesPerSecond", Kind: PerSecond, Key: "network.bytesOut", Unit: "bytes/s"},
		{Name: "connectionsCurrent", Kind: Gauge, Key: "connections.current", Unit: "connections"},
		{Name: "connectionsActive", Kind: Gauge, Key: "connections.active", Unit: "connections"},
		{Name: "residentMemoryBytes", Kind: Gauge, Key: "mem.resident", Unit: "bytes"},
		{Name: "wiredTigerCacheUsedBytes", Kind: Gauge, Key: "wt.cacheBytes", Unit: "bytes"},
		{Name: "wiredTigerCacheConfiguredBytes", Kind: Gauge, Key: "wt.cacheMaxBytes", Unit: "bytes"},
		{Name: "wiredTigerPagesReadPerSecond", Kind: PerSecond, Key: "wt.pagesRead", Unit: "pages/s"},
		{Name: "wiredTigerPagesWrittenPerSecond", Kind: PerSecond, Key: "wt.pagesWritten", Unit: "pages/s"},
		{Name: "readTicketsOut", Kind: Gauge, Key: "tickets.read.out", Unit: "tickets"},
		{Name: "readTicketsAvailable", Kind: Gauge, Key: "tickets.read.available", Unit: "tickets"},
		{Name: "writeTicketsOut", Kind: Gauge, Key: "tickets.write.out", Unit: "tickets"},
		{Name: "writeTicketsAvailable", Kind: Gauge, Key: "tickets.write.available", Unit: "tickets"},
	}
}

// Close ends the connections.
// Command runs an administrative command (admin database) on the
// poller's connection: what the diagnostics read beside the statistics
// (top, getCmdLineOpts). Errors are redacted of the credentials.
func (m *MongoDB) Command(ctx context.Context, cmd bson.D) (bson.Raw, error) {
	raw, err := m.client.Database("admin").RunCommand(ctx, cmd).Raw()
	if err != nil {
		return nil, redact(fmt.Sprintf("running %s on %s", cmd[0].Key, m.addr), err, m.secrets...)
	}
	return raw, nil
}

// Settings: the options the server was started with, from
// getCmdLineOpts' parsed document, flattened ("storage.wiredTiger.
// engineConfig.cacheSizeGB"); paths and ports (where it is, not how it
// runs) and anything that may hold a credential (keyFile, a TLS key's
// password) left out. A server whose reply has no parsed options
// (FerretDB) has none.
func (m *MongoDB) Settings(ctx context.Context) (map[string]string, error) {
	raw, err := m.Command(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	parsed, ok := raw.Lookup("parsed").DocumentOK()
	if !ok {
		return out, nil
	}
	flattenSettings(parsed, "", out)
	return out, nil
}

// settingValue is an option's value as text: a string as it is, a number
// without its BSON type, an array or other value as extended JSON.
func settingValue(v bson.RawValue) string {
	if str, ok := v.StringValueOK(); ok {
		return str
	}
	if b, ok := v.BooleanOK(); ok {
		return strconv.FormatBool(b)
	}
	if f, ok := v.AsFloat64OK(); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v.String()
}

// mongoIdentity are getCmdLineOpts' options that say where a server is.
var mongoIdentity = map[string]bool{"net.port": true, "net.bindIp": true, "net.bindIpAll": true, "storage.dbPath": true, "systemLog.path": true,
	"processManagement.pidFilePath": true, "config": true, "replication.replSetName": true, "sharding.configDB": true, "net.unixDomainSocket.pathPrefix": true}

func flattenSettings(doc bson.Raw, prefix string, out map[string]string) {
	elems, _ := doc.Elements()
	for _, e := range elems {
		name := prefix + e.Key()
		if sub, ok := e.Value().DocumentOK(); ok {
			flattenSettings(sub, name+".", out)
			continue
		}
		value := settingValue(e.Value())
		if mongoIdentity[name] || secretSetting(name, value) || strings.HasSuffix(strings.ToLower(name), "file") || len(out) >= maxSettings {
			continue
		}
		out[name] = value
	}
}

func (m *MongoDB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return m.client.Disconnect(ctx)
}
