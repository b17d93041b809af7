package executor

import (
	"os"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestImageRepository(t *testing.T) {
	for in, want := range map[string]string{
		"postgres:17":                           "postgres",
		"docker.io/library/postgres:17":         "postgres",
		"redislabs/memtier_benchmark:2.1.1":     "redislabs/memtier_benchmark",
		"ghcr.io/org/tool@sha256:abc":           "org/tool",
		"localhost:5000/valkey/valkey:8":        "valkey/valkey",
		"registry.local:5000/postgres":          "postgres",
		"valkey/valkey":                         "valkey/valkey",
		"docker.io/redislabs/memtier_benchmark": "redislabs/memtier_benchmark",
	} {
		if got := ImageRepository(in); got != want {
			t.Errorf("ImageRepository(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandFollowsKubernetesRules(t *testing.T) {
	vals := map[string]string{"USER": "bench", "PW": "s3cret"}
	for in, want := range map[string]string{
		"postgres://$(USER):$(PW)@h": "postgres://bench:s3cret@h",
		"$(MISSING) stays":           "$(MISSING) stays",
		"$$(USER) is escaped":        "$(USER) is escaped",
		"no refs":                    "no refs",
		"unterminated $(USER":        "unterminated $(USER",
	} {
		if got := expand(in, vals); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTailLines(t *testing.T) {
	raw := []byte("a\nb\nc\n")
	for n, want := range map[int]string{0: "", 1: "c\n", 2: "b\nc\n", 3: "a\nb\nc\n", 10: "a\nb\nc\n"} {
		if got := string(tailLines(raw, n)); got != want {
			t.Errorf("tailLines(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTerminationMessageLikeTheKubelet(t *testing.T) {
	dir := t.TempDir()
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	write := func(name string, b []byte) string {
		p := dir + "/" + name
		if err := writeFile(p, b); err != nil {
			t.Fatal(err)
		}
		return p
	}
	msg := write("msg", long)
	empty := write("empty", nil)
	logf := write("log", []byte("fatal: boom\n"))
	if got := readTerminationMessage(msg, logf, corev1.TerminationMessageReadFile, 0); len(got) != maxTerminationMessage {
		t.Errorf("message of %d bytes, want it cut at %d", len(got), maxTerminationMessage)
	}
	if got := readTerminationMessage(empty, logf, corev1.TerminationMessageFallbackToLogsOnError, 1); got != "fatal: boom\n" {
		t.Errorf("FallbackToLogsOnError on failure: %q", got)
	}
	if got := readTerminationMessage(empty, logf, corev1.TerminationMessageFallbackToLogsOnError, 0); got != "" {
		t.Errorf("FallbackToLogsOnError on success must not use the log: %q", got)
	}
}

func TestRunAsPrefersTheContainer(t *testing.T) {
	u1, u2, g := int64(1000), int64(2000), int64(3000)
	pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: &u1, RunAsGroup: &g}}}
	c := corev1.Container{SecurityContext: &corev1.SecurityContext{RunAsUser: &u2}}
	uid, gid, ok := runAs(pod, c)
	if !ok || !reflect.DeepEqual([]int64{uid, gid}, []int64{2000, 3000}) {
		t.Errorf("runAs = %d, %d, %v", uid, gid, ok)
	}
	if _, _, ok := runAs(&corev1.Pod{}, corev1.Container{}); ok {
		t.Error("no runAsUser anywhere must leave the user alone")
	}
}

func writeFile(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
