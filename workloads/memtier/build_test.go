package memtier

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

func seed() *benchv1.WorkloadSpec {
	return &benchv1.WorkloadSpec{Memtier: &benchv1.MemtierWorkload{Threads: []int32{1}, Clients: 2, KeyMaximum: 2000,
		Duration: metav1.Duration{Duration: time.Second}}}
}

func secretKey(key string, optional bool) *corev1.SecretKeySelector {
	s := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: key}
	if optional {
		s.Optional = ptr.To(true)
	}
	return s
}

// How memtier authenticates for each kind of credentials a target gives.
// An external target's Secret keys are optional (the operator never reads
// the Secret): the command must never hold a reference the kubelet could
// leave unexpanded, such as $(DBPERF_TARGET_USERNAME) when the Secret has
// only a password.
func TestAuthenticate(t *testing.T) {
	cases := map[string]struct {
		ep         pod.Endpoint
		prefix     []string // the command's first words
		auth       string   // the --authenticate value, "" for none
		secretEnvs int
	}{
		"no credentials": {pod.Endpoint{}, []string{"memtier_benchmark"}, "", 0},
		"a server target's user and password": {pod.Endpoint{Username: secretKey("username", false), Password: secretKey("password", false)},
			[]string{"memtier_benchmark"}, "$(DBPERF_TARGET_USERNAME):$(DBPERF_TARGET_PASSWORD)", 1},
		"a password alone": {pod.Endpoint{Password: secretKey("password", false)},
			[]string{"memtier_benchmark"}, "$(DBPERF_TARGET_PASSWORD)", 1},
		"an external target's Secret, username optional": {pod.Endpoint{Username: secretKey("username", true), Password: secretKey("password", true)},
			[]string{"sh", "-c", authScript, "memtier_benchmark"}, "", 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			spec := seed()
			m := Memtier{}
			for step, inv := range map[string]*pod.Invocation{"load": m.Prepare(spec, c.ep), "run": ptr.To(m.Run(spec, c.ep, m.Steps(spec)[0]))} {
				cmd := inv.Command
				if strings.Join(cmd[:len(c.prefix)], "\x00") != strings.Join(c.prefix, "\x00") {
					t.Fatalf("%s: command starts %q, want %q", step, cmd[:min(len(cmd), len(c.prefix))], c.prefix)
				}
				auth := ""
				for i, a := range cmd {
					if a == "--authenticate" {
						auth = cmd[i+1]
					}
					if c.prefix[0] == "sh" && strings.Contains(a, "$(") {
						t.Errorf("%s: %q would be left literal when the Secret lacks the key", step, a)
					}
				}
				if auth != c.auth {
					t.Errorf("%s: --authenticate %q, want %q", step, auth, c.auth)
				}
				if len(inv.SecretEnv) != c.secretEnvs {
					t.Errorf("%s: secret variables %v", step, inv.SecretEnv)
				}
			}
		})
	}
}

// memtier_benchmark 2.1.1 refuses --key-minimum 0 (exit 2, "key-minimum must
// be greater than zero"), which the schema allows.
func TestKeyMinimumIsAtLeastOne(t *testing.T) {
	spec := seed()
	spec.Memtier.KeyMinimum = 0
	cmd := strings.Join(Memtier{}.Run(spec, pod.Endpoint{}, Memtier{}.Steps(spec)[0]).Command, " ")
	if !strings.Contains(cmd, "--key-minimum 1 ") {
		t.Errorf("command %s", cmd)
	}
}

// A Valkey Cluster endpoint makes memtier follow the slot map, in the
// prepare step and the measurement alike; a plain server does not.
func TestClusterMode(t *testing.T) {
	spec := seed()
	for name, ep := range map[string]pod.Endpoint{"cluster": {Host: "kv", Port: 6379, Cluster: true}, "server": {Host: "kv", Port: 6379}} {
		run := Memtier{}.Run(spec, ep, Memtier{}.Steps(spec)[0]).Command
		prepare := Memtier{}.Prepare(spec, ep).Command
		for step, cmd := range map[string][]string{"run": run, "prepare": prepare} {
			if got := slices.Contains(cmd, "--cluster-mode"); got != ep.Cluster {
				t.Errorf("%s %s: --cluster-mode %v in %q", name, step, got, cmd)
			}
		}
	}
}

// A rate level limits each connection to its generator's share divided
// among threads × clients; a confirmation's or soak's duration replaces
// --test-time; a plain step has neither.
func TestRateLevelCommand(t *testing.T) {
	spec := seed()
	spec.Memtier.Threads, spec.Memtier.Clients = []int32{2}, 5
	step := Memtier{}.Steps(spec)[0]
	plain := Memtier{}.Run(spec, pod.Endpoint{Host: "h", Port: 6379}, step).Command
	if slices.Contains(plain, "--rate-limiting") || plain[slices.Index(plain, "--test-time")+1] != "1" {
		t.Errorf("plain step: %q", plain)
	}
	step.Params[workloads.RateParameter], step.Params[workloads.DurationParameter] = 1234, 600
	cmd := Memtier{}.Run(spec, pod.Endpoint{Host: "h", Port: 6379}, step).Command
	if i := slices.Index(cmd, "--rate-limiting"); i < 0 || cmd[i+1] != workloads.SharePerPlaceholder(1234, 10) {
		t.Errorf("rate level: %q", cmd)
	}
	if cmd[slices.Index(cmd, "--test-time")+1] != "600" {
		t.Errorf("held level: %q", cmd)
	}
}

// A level below one request per second per connection of every generator
// cannot be offered: refused naming the field and the connections.
func TestCheckCapacityNeedsARatePerConnection(t *testing.T) {
	spec := seed()
	spec.Memtier.Threads, spec.Memtier.Clients, spec.Parallelism = []int32{2}, 10, 3
	path := field.NewPath("spec", "capacity")
	for _, c := range []struct {
		capacity benchv1.CapacitySpec
		want     string
	}{
		{benchv1.CapacitySpec{Parameter: "rate", Search: &benchv1.CapacitySearch{Start: 50}},
			"spec.capacity.search.start: Invalid value: 50: memtier limits the rate of each connection, at least 1/s each: 60 connections (threads 2 × clients 10 × parallelism 3) offer at least 60/s"},
		{benchv1.CapacitySpec{Parameter: "rate", Levels: []int32{100, 59}}, "spec.capacity.levels: Invalid value: 59:"},
		{benchv1.CapacitySpec{Parameter: "rate", Search: &benchv1.CapacitySearch{Start: 60}}, ""},
		{benchv1.CapacitySpec{Parameter: "threads", Levels: []int32{1, 2}}, ""},
	} {
		errs := Memtier{}.CheckCapacity(spec, &c.capacity, path)
		if got := errs.ToAggregate(); (c.want == "") != (got == nil) || got != nil && !strings.HasPrefix(got.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.capacity, got, c.want)
		}
	}
}
