package dbstats

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// Config reaches a server. PostgreSQL takes what is empty from libpq's
// PG* variables, as pgbench does.
type Config struct {
	Host     string
	Port     int
	Username string
	Password string
	Database string
	// TLS, when set, encrypts the connection.
	TLS *tls.Config
}

// WithEnvCredentials fills an empty username and password from the
// credential variables the load generator's tools get too.
func (c Config) WithEnvCredentials() Config {
	if c.Username == "" {
		c.Username = os.Getenv(pod.EnvUsername)
	}
	if c.Password == "" {
		c.Password = os.Getenv(pod.EnvPassword)
	}
	return c
}

// redactedError is a client's error with the credentials cut out of its
// text. It keeps only the text (a client's own error may carry its
// configuration), and whether a context ended it.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// RedactSecrets is err with every non-empty secret replaced in its text,
// its deadline or cancellation kept: what the diagnostics' errors pass
// through, as the pollers' do.
func RedactSecrets(err error, secrets ...string) error { return redact("", err, secrets...) }

// redact wraps err as "what: err" with every non-empty secret replaced.
func redact(what string, err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	var cause error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	}
	if what != "" {
		msg = what + ": " + msg
	}
	return &redactedError{msg: msg, cause: cause}
}
