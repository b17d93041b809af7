package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/sessioncheck"
)

// sessionFlags are exec's flags of the session check: after the tool ran,
// one session of the workload's user (DBPERF_TARGET_USERNAME,
// DBPERF_TARGET_PASSWORD, never flags) with the tool's TLS request must
// have negotiated the TLS version and cipher asked for and have the
// session variables asked for.
type sessionFlags struct {
	address, protocol                     string
	tls                                   bool
	caFile, certFile, keyFile, serverName string
	tlsVersion, tlsCipher                 string
	variables                             listFlag
}

func (f *sessionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.address, "session-check", "", "HOST:PORT: after the tool ran, check a session of the workload's user there (TLS negotiated, session variables); empty: do not")
	fs.StringVar(&f.protocol, "session-protocol", workloads.ProtocolMySQL, "the protocol of the session check (only "+workloads.ProtocolMySQL+")")
	fs.BoolVar(&f.tls, "session-tls", false, "the session check connects over TLS")
	fs.StringVar(&f.caFile, "session-tls-ca", "", "CA bundle that verifies the server (empty: encrypted, not verified, as the tools without a CA)")
	fs.StringVar(&f.certFile, "session-tls-cert", "", "client certificate of two-way TLS")
	fs.StringVar(&f.keyFile, "session-tls-key", "", "client key of two-way TLS")
	fs.StringVar(&f.serverName, "session-tls-name", "", "name the server's certificate must carry (default: the host)")
	fs.StringVar(&f.tlsVersion, "session-tls-version", "", "TLS version asked for and checked (TLSv1.2, TLSv1.3)")
	fs.StringVar(&f.tlsCipher, "session-tls-cipher", "", "TLS cipher asked for and checked (IANA or OpenSSL name)")
	fs.Var(&f.variables, "session-variable", "NAME=VALUE: a session variable the session must have (repeatable)")
}

// check returns the check the flags ask for, or nil when none.
func (f *sessionFlags) check() (runner.SessionCheck, error) {
	if f.address == "" {
		return nil, nil
	}
	if f.protocol != workloads.ProtocolMySQL {
		return nil, fmt.Errorf("--session-protocol %q: only %s is checked", f.protocol, workloads.ProtocolMySQL)
	}
	host, portText, err := net.SplitHostPort(f.address)
	if err != nil {
		return nil, fmt.Errorf("--session-check %q: %w", f.address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("--session-check %q: the port must be a number between 1 and 65535", f.address)
	}
	c := sessioncheck.Check{Host: host, Port: port, Username: os.Getenv(workloads.EnvUsername), Password: os.Getenv(workloads.EnvPassword),
		TLSVersion: f.tlsVersion, TLSCipher: f.tlsCipher}
	for _, v := range f.variables {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--session-variable %q: want NAME=VALUE", v)
		}
		if c.Variables == nil {
			c.Variables = map[string]string{}
		}
		c.Variables[name] = value
	}
	if !f.tls {
		if f.tlsVersion != "" || f.tlsCipher != "" {
			return nil, fmt.Errorf("--session-tls-version and --session-tls-cipher need --session-tls")
		}
		return c, nil
	}
	req := sessioncheck.TLSRequest{CAFile: f.caFile, CertFile: f.certFile, KeyFile: f.keyFile, ServerName: f.serverName,
		Version: f.tlsVersion, Cipher: f.tlsCipher}
	if c.TLS, c.Note, err = req.Config(host); err != nil {
		return nil, fmt.Errorf("--session-tls: %w", err)
	}
	return c, nil
}
