package sim

import (
	"context"
	"fmt"
	"time"
)

// poll checks cond every 200 ms for up to a minute.
func poll(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(time.Minute)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("waiting for %s: timed out after 1m (last error: %w)", what, last)
}
