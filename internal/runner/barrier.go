package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/workloads"
)

// ForGenerator fills in the placeholders a workload leaves in its command
// for generator index of n (k6's execution segment and sequence, and its
// share of an offered rate, whole or per sender).
func ForGenerator(command []string, index, n int) []string {
	seg, seq := workloads.Segment(index, n)
	rep := strings.NewReplacer(workloads.SegmentPlaceholder, seg, workloads.SegmentSequencePlaceholder, seq)
	out := make([]string, len(command))
	for i, a := range command {
		out[i] = workloads.ShareOf.ReplaceAllStringFunc(rep.Replace(a), func(m string) string {
			g := workloads.ShareOf.FindStringSubmatch(m)
			total, _ := strconv.ParseInt(g[1], 10, 64)
			per, _ := strconv.ParseInt(g[2], 10, 64)
			return strconv.FormatInt(workloads.SharePer(total, index, n, per), 10)
		})
	}
	return out
}

// WaitForStart is the start barrier of a measurement with several load
// generators. The operator writes the same start time into an annotation of
// every generator's pod once all of them are running; the kubelet projects
// it into file (a downward API volume, refreshed in place). Each generator
// waits for the file to hold a time, then until that instant, so that all
// begin together rather than whenever their pods happened to start. It
// returns that instant: the clock the operator's disturbances act on, which
// a generator that read the file late (a loaded kubelet) started after.
func WaitForStart(ctx context.Context, file string, timeout time.Duration, out io.Writer, now func() time.Time) (time.Time, error) {
	if now == nil {
		now = time.Now
	}
	deadline := now().Add(timeout)
	fmt.Fprintf(out, "[dbperf-runner] waiting for the other load generators (start barrier %s)\n", file)
	for {
		data, err := os.ReadFile(file)
		if err == nil && strings.TrimSpace(string(data)) != "" {
			at, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
			if perr != nil {
				return time.Time{}, fmt.Errorf("start barrier: %q is not a time: %w", strings.TrimSpace(string(data)), perr)
			}
			wait := at.Sub(now())
			fmt.Fprintf(out, "[dbperf-runner] all load generators are running; starting at %s (in %s)\n", at.UTC().Format(time.RFC3339Nano), wait.Round(time.Millisecond))
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return time.Time{}, ctx.Err()
				}
			}
			return at, nil
		}
		if now().After(deadline) {
			return time.Time{}, fmt.Errorf("start barrier: no start signal after %s: not every load generator started (look for pending pods of the Job)", timeout)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}
