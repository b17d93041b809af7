package query

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Target is where `dbperf-runner query` connects, and how.
type Target struct {
	Driver             benchv1.QueryDriver
	Host               string
	Port               int
	Database           string
	Username, Password string
	TLS                TLSFiles
	// Settings apply to every statement (names are the server's).
	Settings map[string]string
	// Timeout bounds one statement; zero: none.
	Timeout time.Duration
}

// TLSFiles is the client side of TLS: off unless Enabled; the server's
// certificate is checked against CAFile when given (else not checked, as
// libpq's sslmode=require), and CertFile and KeyFile are the client's
// certificate of two-way TLS.
type TLSFiles struct {
	Enabled                               bool
	CAFile, CertFile, KeyFile, ServerName string
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
	tc, err := t.TLS.config(t.Host)
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
	return nil, fmt.Errorf("unknown driver %q (known: clickhouse, postgres, mysql)", t.Driver)
}

// config is the TLS configuration of the files, nil when TLS is off.
func (f TLSFiles) config(host string) (*tls.Config, error) {
	if !f.Enabled {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if f.ServerName != "" {
		c.ServerName = f.ServerName
	}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("while reading the target's CA: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the target's CA file %s holds no PEM certificate", f.CAFile)
		}
	} else {
		c.InsecureSkipVerify = true //nolint:gosec // encryption without verification, as libpq's sslmode=require
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("while reading the client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// oneLine shortens a server's message to its first 500 characters on one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}
