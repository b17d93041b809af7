package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/sim"
)

// jobLedger records every Job the namespace ever had, from a watch started
// before the first run: cleanup deletes Jobs, so a Job created twice would
// not show in a list at the end.
type jobLedger struct {
	mu     sync.Mutex
	byName map[string]map[types.UID]bool
	byUnit map[string]map[types.UID]bool // run UID/role/step/repetition → Jobs
	gaps   []string                      // watch errors that may have hidden Jobs
}

func unitKey(runUID, role, step, rep string) string {
	return runUID + "/" + role + "/" + step + "/" + rep
}

func (l *jobLedger) add(j *batchv1.Job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	note(l.byName, j.Name, j.UID)
	note(l.byUnit, unitKey(j.Labels[benchv1.LabelRunUID], j.Labels[benchv1.LabelRole], j.Labels[benchv1.LabelStep], j.Labels[benchv1.LabelRepetition]), j.UID)
}

func note(m map[string]map[types.UID]bool, key string, uid types.UID) {
	if m[key] == nil {
		m[key] = map[types.UID]bool{}
	}
	m[key][uid] = true
}

// watchJobs starts the ledger; it records until ctx ends.
func watchJobs(ctx context.Context, t *testing.T, c *sim.Cluster) *jobLedger {
	t.Helper()
	l := &jobLedger{byName: map[string]map[types.UID]bool{}, byUnit: map[string]map[types.UID]bool{}}
	jobs := c.Clientset.BatchV1().Jobs(ns)
	relist := func() (string, error) {
		list, err := jobs.List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			l.add(&list.Items[i])
		}
		return list.ResourceVersion, nil
	}
	rv, err := relist()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ctx.Err() == nil {
			w, err := jobs.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				sleepCtx(ctx, 200*time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				switch j, ok := ev.Object.(*batchv1.Job); {
				case ev.Type == watch.Error:
					// Resumed from a version the API server no longer
					// has: what happened in between is unknown.
					l.mu.Lock()
					l.gaps = append(l.gaps, apierrors.FromObject(ev.Object).Error())
					l.mu.Unlock()
					if v, err := relist(); err == nil {
						rv = v
					}
				case ok:
					if ev.Type != watch.Bookmark {
						l.add(j)
					}
					rv = j.ResourceVersion
				}
			}
			w.Stop()
		}
	}()
	return l
}
