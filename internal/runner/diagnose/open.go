package diagnose

import (
	"context"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// Open connects the diagnostics of a protocol's server; nil and no error
// when none are read of it yet (OpenSearch's: docs/telemetry.md
// says which).
func Open(ctx context.Context, p pod.Protocol, c dbstats.Config) (Source, error) {
	switch p {
	case pod.ProtocolPostgres:
		s, err := NewPostgres(ctx, c)
		if err != nil {
			return nil, err
		}
		return s, nil
	case pod.ProtocolMySQL:
		s, err := NewMySQL(ctx, c)
		if err != nil {
			return nil, err
		}
		return s, nil
	case pod.ProtocolRedis:
		s, err := NewRedis(ctx, c)
		if err != nil {
			return nil, err
		}
		return s, nil
	case pod.ProtocolMongoDB:
		s, err := NewMongoDB(ctx, c)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, nil
}
