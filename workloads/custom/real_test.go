package custom

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
)

// secretKey is a key of the target's Secret, as an Endpoint names it.
func secretKey(key string) *corev1.SecretKeySelector {
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: key}
}

// local adapts an invocation built for a pod to this machine, as the
// kubelet would run it: the output and files directories become temporary
// directories (the invocation's files written into the latter), and the
// variables are resolved, Secret references from secrets. PATH is the
// caller's.
type local struct {
	cmd, resultFiles []string
	config           []byte
	// env is the pod's variables, NAME=VALUE.
	env []string
}

func localInvocation(t *testing.T, inv pod.Invocation, secrets map[string]string) local {
	t.Helper()
	out, files := t.TempDir(), t.TempDir()
	rw := strings.NewReplacer(pod.OutputDir, out, pod.FilesDir, files)
	var l local
	for name, body := range inv.Files {
		if err := os.WriteFile(filepath.Join(files, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range inv.Env {
		v := e.Value
		if e.ValueFrom != nil {
			v = secrets[e.ValueFrom.SecretKeyRef.Key]
		}
		l.env = append(l.env, e.Name+"="+rw.Replace(v))
	}
	for _, a := range inv.Command {
		l.cmd = append(l.cmd, rw.Replace(a))
	}
	for _, f := range inv.ResultFiles {
		l.resultFiles = append(l.resultFiles, rw.Replace(f))
	}
	if inv.ParserConfig != "" {
		var err error
		if l.config, err = os.ReadFile(rw.Replace(inv.ParserConfig)); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// execLocal runs an invocation through the runner, as dbperf-runner exec
// does in the pod.
func execLocal(t *testing.T, inv pod.Invocation, secrets map[string]string, prepare bool) (*results.Result, string) {
	t.Helper()
	l := localInvocation(t, inv, secrets)
	for _, kv := range l.env {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	if prepare {
		l.config = nil // dbperf-runner exec --prepare gets none
	}
	var out bytes.Buffer
	r := runner.Exec(context.Background(), runner.Options{Parser: Custom{}, Prepare: prepare, Command: l.cmd, ResultFiles: l.resultFiles,
		ParserConfig: l.config, SecretValues: []string{secrets["password"]}, Timeout: 2 * time.Minute, Stdout: &out})
	return r, out.String()
}

// execLocalPrepared runs an invocation localInvocation prepared, with its
// variables set for the tool alone (env NAME=VALUE … COMMAND), as each pod
// has its own: load generators may run at once in this process.
func execLocalPrepared(l local, secrets map[string]string) (*results.Result, string) {
	var out bytes.Buffer
	cmd := append(append([]string{"env"}, l.env...), l.cmd...)
	r := runner.Exec(context.Background(), runner.Options{Parser: Custom{}, Command: cmd, ResultFiles: l.resultFiles,
		ParserConfig: l.config, SecretValues: []string{secrets["password"]}, Timeout: 2 * time.Minute, Stdout: &out})
	return r, out.String()
}

// valid checks a spec as the operator does before it builds anything.
func valid(t *testing.T, spec *benchv1.WorkloadSpec) {
	t.Helper()
	if errs := (Custom{}).Validate(spec, field.NewPath("spec", "workload")); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
}

func examplesDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
