package controllers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/dbperf-io/dbperf-operator/internal/smoke"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// The smoke form of every sample (kubectl dbperf try) is admitted by the
// API server as written: shrinking keeps every rule of the schema (a
// pgbench's jobs within its clients, steps apart), and it shrinks
// something. Every tool knows how to shrink itself.
func TestSmokeFormsOfEverySampleAreAdmitted(t *testing.T) {
	for _, name := range registry.Names() {
		w, err := registry.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := w.(workloads.Shrinker); !ok {
			t.Errorf("tool %s has no Shrink: kubectl dbperf try cannot make its samples small", name)
		}
	}
	ns := kit.Namespace(t, k8s, "smoke-")
	var files []string
	for _, dir := range []string{"config/samples", "config/samples/getting-started", "config/samples/published"} {
		fs, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(), dir, "*.yaml"))
		files = append(files, fs...)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		t.Run(strings.TrimPrefix(f, testutil.RepoRoot()+"/config/"), func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			objs, err := smoke.ShrinkYAML(fh)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if !strings.HasPrefix(o.Kind, "Benchmark") {
					continue
				}
				if len(o.Changes) == 0 {
					t.Errorf("%s %s: nothing shrunk", o.Kind, o.Name)
				}
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(o.YAML, &u.Object); err != nil {
					t.Fatal(err)
				}
				u.SetNamespace(ns)
				if err := k8s.Create(context.Background(), u, client.DryRunAll); err != nil {
					t.Errorf("%s %s in its smoke form (%s) is refused: %v", o.Kind, o.Name, strings.Join(o.Changes, "; "), err)
				}
			}
		})
	}
}
