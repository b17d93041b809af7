package testutil

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The tests' one wait: Poll calls f until it returns nil, for goroutines
// beside a test and for the simulated cluster; Eventually is Poll for a
// test's own goroutine, failing the test.

// Poll calls f every interval until it returns nil, within passes or ctx
// ends; the error says what was awaited and f's last error.
func Poll(ctx context.Context, within, interval time.Duration, what string, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: still not true after %s: %w", what, within, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// Eventually calls f until it returns nil, failing the test when the
// timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	if err := Poll(context.Background(), timeout, 100*time.Millisecond, what, f); err != nil {
		t.Fatal(err)
	}
}
