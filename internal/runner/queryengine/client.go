package queryengine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// Target is where `dbperf-runner query` connects, and how.
type Target struct {
	Driver             benchv1.QueryDriver
	Host               string
	Port               int
	Database           string
	Username, Password string
	TLS                pod.TLSClient
	// Settings apply to every statement (names are the server's).
	Settings map[string]string
	// Timeout bounds one statement; zero: none.
	Timeout time.Duration
}

// Client runs statements on one connection of a target.
type Client interface {
	// ServerVersion is what the server says it is; it opens the connection,
	// so that the first query's time does not include it.
	ServerVersion(ctx context.Context) (string, error)
	// Exec runs one statement and reads its whole result; id names the run
	// where the protocol can (ClickHouse's query_id).
	Exec(ctx context.Context, sql, id string) (rows int64, err error)
	// Load inserts the rows of a CSV or TSV file into a table.
	Load(ctx context.Context, table string, format benchv1.QueryLoadFormat, r io.Reader) error
	Close() error
}

// Connect returns the client of the target's driver.
func Connect(ctx context.Context, t Target) (Client, error) {
	tc, err := t.TLS.Config(t.Host)
	if err != nil {
		return nil, err
	}
	switch t.Driver {
	case benchv1.QueryDriverClickHouse:
		return newClickHouse(t, tc), nil
	case benchv1.QueryDriverPostgres:
		return connectPostgres(ctx, t, tc)
	case benchv1.QueryDriverMySQL:
		return connectMySQL(t, tc)
	}
	return nil, fmt.Errorf("unknown driver %q (known: %s, %s, %s)", t.Driver, benchv1.QueryDriverClickHouse, benchv1.QueryDriverPostgres, benchv1.QueryDriverMySQL)
}

// oneLine shortens a server's message to its first 500 characters on one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}
