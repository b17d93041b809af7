package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/stress"
)

// cmdStress runs a noisy neighbour's workers for their duration and
// writes their report (JSON) to the summary file, the stress pod's
// termination message, and to stdout. SIGTERM (the pod deleted) stops
// them at once.
func cmdStress(args []string, stdout, stderr io.Writer) int {
	c, err := pod.ParseStress(args, stderr)
	if err != nil {
		return runner.ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rep, err := stress.Run(ctx, stress.Options{CPUWorkers: c.CPUWorkers, MemoryBytes: int64(c.MemoryBytes), DiskWorkers: c.DiskWorkers,
		Dir: c.Dir, Duration: c.Duration}, stdout)
	b, _ := json.Marshal(rep)
	fmt.Fprintf(stdout, "%s\n", b)
	if c.SummaryFile != "" {
		if werr := os.WriteFile(c.SummaryFile, b, 0o644); werr != nil {
			fmt.Fprintf(stderr, "dbperf-runner stress: %v\n", werr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner stress: %v\n", err)
		return runner.ExitFailed
	}
	return 0
}
