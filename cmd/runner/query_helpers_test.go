package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
	"github.com/dbperf-io/dbperf-operator/workloads/query/ssbgen"
)

// podDirs stands for a workload pod: the directories its volumes are mounted
// at, here under one temporary directory.
type podDirs struct {
	dir string
	// secrets are the values of the Secret keys the invocation's
	// environment refers to, by key.
	secrets map[string]string
	// claims are the directories standing for PersistentVolumeClaims.
	claims map[string]string
}

// run runs an invocation of the query workload as its Job would: its
// files and ConfigMap keys written where they are mounted (configMaps
// gives their content), its environment set, and the runner's `query`
// subcommand called with its arguments, paths rewritten to the pod's
// directories. It returns what Parse gets and the exit code.
func (p *podDirs) run(t *testing.T, inv pod.Invocation, configMaps map[string]string) (workloads.ParseInput, int) {
	t.Helper()
	paths := map[string]string{
		pod.FilesDir:          filepath.Join(p.dir, "files"),
		pod.OutputDir:         filepath.Join(p.dir, "out"),
		pod.ConfigMapFilesDir: filepath.Join(p.dir, "configmaps"),
	}
	for _, m := range inv.ClaimMounts {
		paths[m.MountPath] = p.claims[m.Claim]
	}
	// A path may be a flag's whole value or its end (--load TABLE:CSV:PATH).
	rewrite := func(s string) string {
		for from, to := range paths {
			if s == from || strings.HasPrefix(s, from+"/") {
				return to + strings.TrimPrefix(s, from)
			}
			if i := strings.Index(s, ":"+from+"/"); i >= 0 {
				return s[:i+1] + to + s[i+1+len(from):]
			}
		}
		return s
	}
	for name, body := range inv.Files {
		writeFile(t, rewrite(pod.FilesDir+"/"+name), body)
	}
	for _, f := range inv.ConfigMapFiles {
		body, ok := configMaps[f.ConfigMap+"/"+f.Key]
		if !ok {
			t.Fatalf("the invocation mounts ConfigMap key %s/%s, which the test does not have", f.ConfigMap, f.Key)
		}
		writeFile(t, rewrite(pod.ConfigMapFilePath(f)), body)
	}
	for _, e := range inv.Env {
		v := e.Value
		if e.ValueFrom != nil {
			v = p.secrets[e.ValueFrom.SecretKeyRef.Key]
		}
		t.Setenv(e.Name, v)
	}
	if len(inv.Command) < 2 || inv.Command[0] != pod.RunnerPath || inv.Command[1] != pod.CommandQuery {
		t.Fatalf("the invocation's command %q is not the runner's query subcommand", inv.Command)
	}
	args := make([]string, 0, len(inv.Command))
	for _, a := range inv.Command[1:] {
		args = append(args, rewrite(a))
	}
	var stdout, stderr bytes.Buffer
	code := run(args, nil, &stdout, &stderr)
	t.Logf("dbperf-runner %s: exit %d\n%s%s", strings.Join(args[:3], " "), code, tail(stdout.String(), 30), stderr.String())
	for _, s := range p.secrets {
		if strings.Contains(stdout.String()+stderr.String(), s) {
			t.Errorf("the output holds the secret %q", s)
		}
	}
	in := workloads.ParseInput{Output: append(stdout.Bytes(), stderr.Bytes()...), Files: map[string][]byte{}, ExitCode: &code}
	for _, f := range inv.ResultFiles {
		if b, err := os.ReadFile(rewrite(f)); err == nil {
			in.Files[filepath.Base(f)] = b
		}
	}
	return in, code
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, lines int) string {
	l := strings.SplitAfter(s, "\n")
	if len(l) > lines {
		l = append([]string{"…\n"}, l[len(l)-lines:]...)
	}
	return strings.Join(l, "")
}

// credentials are the Secret keys of an endpoint's user and password.
func credentials(ep *pod.Endpoint) {
	ep.Username = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "target"}, Key: "username"}
	ep.Password = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "target"}, Key: "password"}
}

// serveSSB serves the generated tables as gzip-compressed CSV files on
// 127.0.0.1: /TABLE.csv.gz.
func serveSSB(t *testing.T, data *ssbgen.Data) *httptest.Server {
	t.Helper()
	files := map[string][]byte{}
	for _, table := range ssbgen.Tables {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		if err := data.WriteCSV(table, gz); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		files["/"+table+".csv.gz"] = buf.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// example reads a file of workloads/query/examples.
func example(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "workloads", "query", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ssbQueries are the 13 queries' names.
var ssbQueries = []string{"Q1.1", "Q1.2", "Q1.3", "Q2.1", "Q2.2", "Q2.3", "Q3.1", "Q3.2", "Q3.3", "Q3.4", "Q4.1", "Q4.2", "Q4.3"}

// checkQueries checks that every named query has its times, no failure,
// and rows where the test expects some.
func checkQueries(t *testing.T, r *results.Result, names []string, runs int) {
	t.Helper()
	for _, name := range names {
		cold, okCold := r.Get(results.Key{Name: query.MetricCold, Operation: name})
		hot, okHot := r.Get(results.Key{Name: query.MetricHot, Operation: name})
		if !okCold || cold.Value <= 0 || (runs > 1 && (!okHot || hot.Value <= 0)) {
			t.Errorf("query %s: cold %v (%v), hot %v (%v)", name, cold.Value, okCold, hot.Value, okHot)
		}
		if f, ok := r.Get(results.Key{Name: query.MetricFailedRuns, Operation: name}); ok {
			t.Errorf("query %s failed %v runs: %v", name, f.Value, r.Warnings)
		}
	}
}

// ssbSpec is a query workload on the SSB tables: the schema script, a
// load of each table's CSV, and queries from a ConfigMap key.
func ssbSpec(driver benchv1.QueryDriver, schema string, loads []benchv1.QueryLoad, runs int32) *benchv1.WorkloadSpec {
	return &benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{
		Driver:           driver,
		QueriesConfigMap: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "ssb"}, Key: "queries.sql"},
		RunsPerQuery:     runs,
		Prepare:          &benchv1.QueryPrepare{Script: schema, Loads: loads},
	}}
}
