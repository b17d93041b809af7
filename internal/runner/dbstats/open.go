package dbstats

import (
	"context"
	"fmt"
	"slices"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// poller is the statistics of the servers of one protocol: the name its
// figures are recorded under (a result's metric source, as the status API
// documents it: postgresql, mysql, redis, mongodb, opensearch) and how to
// connect.
type poller struct {
	source string
	open   func(context.Context, Config) (Poller, error)
}

var pollers = map[pod.Protocol]poller{
	pod.ProtocolPostgres:   {SourcePostgreSQL, func(ctx context.Context, c Config) (Poller, error) { return NewPostgres(ctx, c) }},
	pod.ProtocolMySQL:      {SourceMySQL, func(ctx context.Context, c Config) (Poller, error) { return NewMySQL(ctx, c) }},
	pod.ProtocolRedis:      {SourceRedis, func(ctx context.Context, c Config) (Poller, error) { return NewRedis(ctx, c) }},
	pod.ProtocolMongoDB:    {SourceMongoDB, func(ctx context.Context, c Config) (Poller, error) { return NewMongoDB(ctx, c) }},
	pod.ProtocolOpenSearch: {SourceOpenSearch, func(ctx context.Context, c Config) (Poller, error) { return NewOpenSearch(ctx, c) }},
}

// Protocols lists the protocols whose servers a poller reads.
func Protocols() []pod.Protocol {
	var out []pod.Protocol
	for p := range pollers {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// SourceOf names the statistics of a protocol's servers, "" when no poller
// reads them.
func SourceOf(p pod.Protocol) string { return pollers[p].source }

// Open connects the poller of a protocol's server (one of Protocols).
func Open(ctx context.Context, p pod.Protocol, c Config) (Poller, error) {
	s, ok := pollers[p]
	if !ok {
		return nil, fmt.Errorf("no poller reads the statistics of %q servers (known: %v)", p, Protocols())
	}
	return s.open(ctx, c)
}
