package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func phaseCounts(m map[benchv1.Phase]int) string {
	keys := make([]string, 0, len(m))
	for p := range m {
		keys = append(keys, string(p))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[benchv1.Phase(k)])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// since reads a file from the offset to its end ("" when it cannot).
func since(path string, off int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

func listRuns(ctx context.Context, dyn dynamic.Interface) ([]benchv1.BenchmarkRun, error) {
	var l benchv1.BenchmarkRunList
	err := listInto(ctx, dyn, runGVR, &l)
	return l.Items, err
}

func listComparisons(ctx context.Context, dyn dynamic.Interface) ([]benchv1.BenchmarkComparison, error) {
	var l benchv1.BenchmarkComparisonList
	err := listInto(ctx, dyn, cmpGVR, &l)
	return l.Items, err
}

func listInto(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, into any) error {
	u, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

func getSchedule(ctx context.Context, dyn dynamic.Interface, name string) (*benchv1.BenchmarkSchedule, error) {
	u, err := dyn.Resource(scheduleGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	s := &benchv1.BenchmarkSchedule{}
	return s, json.Unmarshal(raw, s)
}
