package sessioncheck

import (
	"context"
	"crypto/tls"
	"database/sql"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/tlsciphers"
)

// Check is one session's check: where, as whom, with which TLS, and what
// the session must have.
type Check struct {
	Host string
	Port int
	// Username and Password are the workload's user's; never printed.
	Username, Password string
	// TLS is the client's configuration; nil connects in clear text.
	TLS *tls.Config
	// TLSVersion and TLSCipher are what was asked for; empty: not checked.
	TLSVersion, TLSCipher string
	// Variables are the session variables asked for, by name.
	Variables map[string]string
	// Note is said as a warning (what the client could not ask for).
	Note string
	// Timeout bounds the connection and the queries; zero is 15s.
	Timeout time.Duration
}

// Session is what one session of the user had.
type Session struct {
	TLSVersion, TLSCipher string
	Variables             map[string]string
}

// Parameters of the result that record what the session had.
const (
	ParamTLSVersion     = "sessionTLSVersion"
	ParamTLSCipher      = "sessionTLSCipher"
	ParamVariablePrefix = "sessionVariable."
)

var variableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,63}$`)

// Apply runs the check and marks the result: what the session had is
// recorded in its parameters, and each difference from what was asked
// for, or a session that could not be opened, makes it Invalid.
func (c Check) Apply(ctx context.Context, r *results.Result) {
	if c.Note != "" {
		r.Warnings = append(r.Warnings, c.Note)
	}
	if c.TLS != nil {
		r.SetParam(pod.ParamServerCertificateVerified, strconv.FormatBool(!c.TLS.InsecureSkipVerify))
	}
	s, err := c.Read(ctx)
	if err != nil {
		r.Invalidate("the session check could not confirm the TLS and session settings asked for: %v", err)
		return
	}
	if s.TLSVersion != "" {
		r.SetParam(ParamTLSVersion, s.TLSVersion)
	}
	if s.TLSCipher != "" {
		r.SetParam(ParamTLSCipher, s.TLSCipher)
	}
	for k, v := range s.Variables {
		r.SetParam(ParamVariablePrefix+k, v)
	}
	for _, p := range c.Problems(s) {
		r.Invalidate("%s", p)
	}
}

// Problems are the differences between what was asked for and what the
// session had, each naming both.
func (c Check) Problems(s Session) []string {
	var out []string
	if c.TLS != nil && s.TLSCipher == "" {
		out = append(out, "the session check's session was not encrypted although TLS was asked for")
	}
	if c.TLSVersion != "" && !strings.EqualFold(s.TLSVersion, c.TLSVersion) {
		out = append(out, fmt.Sprintf("TLS version negotiated %s, asked for %s", orNone(s.TLSVersion), c.TLSVersion))
	}
	if c.TLSCipher != "" && !tlsciphers.Same(s.TLSCipher, c.TLSCipher) {
		out = append(out, fmt.Sprintf("TLS cipher negotiated %s, asked for %s", orNone(s.TLSCipher), c.TLSCipher))
	}
	for _, k := range sortedKeys(c.Variables) {
		if got := s.Variables[k]; !SameValue(got, c.Variables[k]) {
			out = append(out, fmt.Sprintf("session variable %s is %s, asked for %s", k, got, c.Variables[k]))
		}
	}
	return out
}

// Read opens one session and reads what it negotiated and its variables.
func (c Check) Read(ctx context.Context) (Session, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net = c.Username, c.Password, "tcp"
	cfg.Addr = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	cfg.TLS = c.TLS
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = timeout, timeout, timeout
	cfg.ConnectionAttributes = "program_name:dbperf-session-check"
	s := Session{Variables: map[string]string{}}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return s, c.redact("while configuring the client", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return s, c.redact("while connecting to "+cfg.Addr, err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
	if err != nil {
		return s, c.redact("while reading the session's TLS status", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return s, c.redact("while reading the session's TLS status", err)
		}
		switch strings.ToLower(name) {
		case "ssl_version":
			s.TLSVersion = value
		case "ssl_cipher":
			s.TLSCipher = value
		}
	}
	if err := rows.Err(); err != nil {
		return s, c.redact("while reading the session's TLS status", err)
	}
	for _, k := range sortedKeys(c.Variables) {
		if !variableName.MatchString(k) {
			return s, fmt.Errorf("session variable %q: not a variable name", k)
		}
		var v sql.NullString
		if err := conn.QueryRowContext(ctx, "SELECT @@session."+k).Scan(&v); err != nil {
			return s, c.redact("while reading the session variable "+k, err)
		}
		s.Variables[k] = v.String
		if !v.Valid {
			s.Variables[k] = "NULL"
		}
	}
	return s, nil
}

// redact cuts the credentials out of an error's text: a server's "Access
// denied for user …" names the user.
func (c Check) redact(what string, err error) error {
	msg := err.Error()
	for _, s := range []string{c.Password, c.Username} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	return fmt.Errorf("%s: %s", what, msg)
}

// SameValue compares a variable's value as the server reports it with the
// one asked for: booleans by their truth (ON, 1, TRUE, YES), numbers by
// their value, the rest without regard to case.
func SameValue(got, want string) bool {
	if g, ok := truth(got); ok {
		if w, ok := truth(want); ok {
			return g == w
		}
	}
	if g, err := strconv.ParseFloat(got, 64); err == nil {
		if w, err := strconv.ParseFloat(want, 64); err == nil {
			return g == w
		}
	}
	return strings.EqualFold(strings.TrimSpace(got), strings.TrimSpace(want))
}

func truth(s string) (value, ok bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "ON", "1", "TRUE", "YES":
		return true, true
	case "OFF", "0", "FALSE", "NO":
		return false, true
	}
	return false, false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
