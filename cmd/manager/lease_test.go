package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A manager stopped cleanly (SIGTERM: its context cancelled) releases its
// Lease, so the next one leads at once rather than after the lease
// duration; without the release it waits the whole duration. Measured side
// by side, with a lease duration of 15 s (the chart's default).
func TestLeaseReleasedOnCleanShutdown(t *testing.T) {
	cfg := startAPIServer(t)
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	lease := func() coordinationv1.Lease {
		var l coordinationv1.Lease
		_ = c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "dbperf-operator.bench.dbperf.io"}, &l)
		return l
	}
	holder := func() string {
		l := lease()
		if l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	// start runs a manager until the returned stop is called; it returns
	// once the manager holds the Lease, and how long that took.
	start := func(release bool) (func(), time.Duration) {
		ctx, cancel := context.WithCancel(context.Background())
		o := options{metricsAddr: "0", probeAddr: "0", runnerImage: "runner:test", leaderElect: true, leaderNamespace: "default", secondManager: true,
			lease: leaseOptions{duration: 15 * time.Second, renewDeadline: 10 * time.Second, retryPeriod: 200 * time.Millisecond, releaseOnCancel: release}}
		done := make(chan error, 1)
		before := holder()
		began := time.Now()
		go func() { done <- run(ctx, cfg, o) }()
		testutil.Eventually(t, 40*time.Second, "the manager leads", func() error {
			select {
			case err := <-done:
				t.Fatalf("the manager stopped: %v", err)
			default:
			}
			if h := holder(); h == "" || h == before {
				return fmt.Errorf("the Lease is held by %q", h)
			}
			return nil
		})
		took := time.Since(began)
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		}, took
	}

	stop, _ := start(true)
	stop()
	if h := holder(); h != "" {
		t.Fatalf("after a clean shutdown the Lease is still held by %q", h)
	}
	stop, released := start(true)
	stop() // with release: the next one is not kept waiting
	// Without release: the Lease stays held until it expires.
	stop, _ = start(false)
	stop()
	if h := holder(); h == "" {
		t.Fatal("a manager without release-on-cancel released its Lease")
	}
	stop, held := start(true)
	stop()
	t.Logf("the next manager led %.1f s after a clean shutdown that released the Lease, %.1f s after one that did not (lease duration 15 s)",
		released.Seconds(), held.Seconds())
	if released > 5*time.Second || held < 10*time.Second {
		t.Errorf("took %s after a release and %s without one: want well under and near the 15 s lease duration", released, held)
	}
}
