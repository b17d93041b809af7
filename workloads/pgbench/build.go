package pgbench

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Pgbench implements workloads.Workload.
type Pgbench struct{}

var _ workloads.Workload = Pgbench{}

func (Pgbench) Name() string { return "pgbench" }

// DefaultImage is the official PostgreSQL image, which ships pgbench.
func (Pgbench) DefaultImage() string { return "postgres:17" }

const scriptFile = "script.sql"

// defaultMaxJobs caps the default thread count: one pgbench thread drives
// many clients, and more threads than cores only adds contention.
const defaultMaxJobs = 4

func (Pgbench) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	p := spec.Pgbench
	path = path.Child("pgbench")
	var errs field.ErrorList
	if p == nil {
		return append(errs, field.Required(path, "pgbench settings are required"))
	}
	if len(p.Clients) == 0 {
		errs = append(errs, field.Required(path.Child("clients"), "at least one client count"))
	}
	for i, c := range p.Clients {
		if c < 1 {
			errs = append(errs, field.Invalid(path.Child("clients").Index(i), c, "must be at least 1"))
		}
		if p.Jobs != nil && *p.Jobs > c {
			errs = append(errs, field.Invalid(path.Child("jobs"), *p.Jobs, fmt.Sprintf("must not exceed clients (%d)", c)))
		}
	}
	if p.Duration.Duration < 1e9 {
		errs = append(errs, field.Invalid(path.Child("duration"), p.Duration.String(), "must be at least 1s"))
	}
	return errs
}

func (Pgbench) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	return workloads.Sweep(workloads.Dimension{Name: "clients", Values: spec.Pgbench.Clients})
}

// libpqEnv points libpq at the endpoint; the password stays in its Secret.
func libpqEnv(ep pod.Endpoint) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: "PGHOST", Value: ep.Host},
		{Name: "PGPORT", Value: strconv.Itoa(int(ep.Port))},
		{Name: "PGCONNECT_TIMEOUT", Value: "10"},
		{Name: "PGAPPNAME", Value: "dbperf-pgbench"},
	}
	if ep.Database != "" {
		env = append(env, corev1.EnvVar{Name: "PGDATABASE", Value: ep.Database})
	}
	env = append(env, ep.CredentialEnv("PGUSER", "PGPASSWORD")...)
	env = append(env, workloads.LibpqTLSEnv(ep)...)
	return env
}

func (Pgbench) Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation {
	p := spec.Pgbench
	if p.Script != "" {
		return nil
	}
	return &pod.Invocation{
		Command:   []string{"pgbench", "--initialize", "--quiet", "--scale", strconv.Itoa(int(scale(p)))},
		Env:       libpqEnv(ep),
		SecretEnv: []string{"PGPASSWORD"},
	}
}

// progressSeconds is -P: whole seconds, 5 when unset (the schema's default).
func progressSeconds(p *benchv1.PgbenchWorkload) int {
	if p.ProgressInterval == nil {
		return 5
	}
	return int(p.ProgressInterval.Seconds())
}

func scale(p *benchv1.PgbenchWorkload) int32 {
	if p.Scale < 1 {
		return 10
	}
	return p.Scale
}

func (Pgbench) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	p := spec.Pgbench
	clients, ok := step.Params["clients"]
	if !ok && len(p.Clients) > 0 {
		clients = p.Clients[0]
	}
	jobs := min(clients, defaultMaxJobs)
	if p.Jobs != nil {
		jobs = min(*p.Jobs, clients)
	}
	seconds := int(p.Duration.Seconds())
	if d, ok := step.Params[workloads.DurationParameter]; ok {
		seconds = int(d)
	}
	protocol := p.Protocol
	if protocol == "" {
		protocol = "simple"
	}
	cmd := []string{"pgbench",
		"--client", strconv.Itoa(int(clients)),
		"--jobs", strconv.Itoa(int(jobs)),
		"--time", strconv.Itoa(seconds),
		"--protocol", protocol,
	}
	if s := progressSeconds(p); s > 0 {
		cmd = append(cmd, "--progress", strconv.Itoa(s))
	}
	if p.PerStatementLatencies == nil || *p.PerStatementLatencies {
		cmd = append(cmd, "--report-per-command")
	}
	rate, ok := step.Params[workloads.RateParameter]
	if !ok && p.RateLimitPerSecond != nil {
		rate, ok = *p.RateLimitPerSecond, true
	}
	switch {
	case ok && spec.Parallelism > 1:
		// The Job's generators together offer the rate, each its exact share.
		cmd = append(cmd, "--rate", workloads.SharePlaceholder(int64(rate)))
	case ok:
		cmd = append(cmd, "--rate", strconv.Itoa(int(rate)))
	}
	if p.LatencyLimit != nil {
		cmd = append(cmd, "--latency-limit", strconv.FormatFloat(float64(p.LatencyLimit.Microseconds())/1000, 'f', -1, 64))
	}
	inv := pod.Invocation{Env: libpqEnv(ep), SecretEnv: []string{"PGPASSWORD"}}
	if p.Script != "" {
		// A custom script may not touch the pgbench tables: skip their vacuum.
		cmd = append(cmd, "--no-vacuum", "--file", pod.FilesDir+"/"+scriptFile)
		inv.Files = map[string]string{scriptFile: p.Script}
	} else {
		builtin := p.BuiltinScript
		if builtin == "" {
			builtin = "tpcb-like"
		}
		cmd = append(cmd, "--builtin", builtin)
	}
	inv.Command = cmd
	return inv
}

// CheckCapacity: pgbench keeps no latency histogram; it judges a latency
// rule exactly from its count of transactions over --latency-limit, which
// must then be the rule's max, over whole transactions.
func (Pgbench) CheckCapacity(spec *benchv1.WorkloadSpec, c *benchv1.CapacitySpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	p := spec.Pgbench
	for k, l := range c.Rules.Latency {
		if p.LatencyLimit == nil || p.LatencyLimit.Duration != l.Max.Duration {
			errs = append(errs, field.Invalid(path.Child("rules", "latency").Index(k).Child("max"), l.Max.Duration.String(),
				"pgbench keeps no latency histogram: it judges a percentile exactly from its count of transactions over --latency-limit, so spec.workload.pgbench.latencyLimit must equal this max"))
		}
		if l.Operation != "" {
			errs = append(errs, field.Invalid(path.Child("rules", "latency").Index(k).Child("operation"), l.Operation, "pgbench counts whole transactions: leave operation empty"))
		}
	}
	if s := c.Soak; s != nil {
		every := 5 * time.Second
		if p.ProgressInterval != nil {
			every = p.ProgressInterval.Duration
		}
		if every <= 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "workload", "pgbench", "progressInterval"), "0s",
				"a soak judges pgbench's progress series: give a progress interval well below the soak's duration"))
		} else if points := int64(s.Duration.Duration / every); points > MaxSoakPoints {
			errs = append(errs, field.Invalid(field.NewPath("spec", "workload", "pgbench", "progressInterval"), every.String(),
				fmt.Sprintf("a soak of %s prints %d progress lines at this interval, more than the %d a stored result keeps: raise it to at least %s",
					s.Duration.Duration, points, MaxSoakPoints, (s.Duration.Duration/MaxSoakPoints).Round(time.Second)+time.Second)))
		}
	}
	return errs
}

// MaxSoakPoints bounds the progress lines of a soak: 10,000 points keep
// its stored result well inside a ConfigMap, and resolve a trend over them
// far better than any limit needs.
const MaxSoakPoints = 10000

// StepDuration: a step's DurationParameter is its --time.
func (Pgbench) StepDuration() {}

// RateCorrected: under --rate pgbench measures each transaction's latency
// from its scheduled start, so a server that falls behind shows in it
// (with --latency-limit, transactions already late are skipped and counted).
func (Pgbench) RateCorrected(*benchv1.WorkloadSpec) bool { return true }

// Speaks: pgbench measures PostgreSQL in the endpoint's database.
func (Pgbench) Speaks(*benchv1.WorkloadSpec) workloads.Speaks {
	return workloads.Speaks{Protocol: pod.ProtocolPostgres}
}
