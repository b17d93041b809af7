package specs

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// The kinds of disturbance, as cards and events name them: the spec's
// field names.
const (
	DisturbSQLLoad        = "sqlLoad"
	DisturbNoisyNeighbour = "noisyNeighbour"
	DisturbMemberLoss     = "memberLoss"
	DisturbNetwork        = "network"
)

// Planned is a disturbance of one measurement with the offset it acts at.
type Planned struct {
	benchv1.Disturbance
	Kind   string
	Offset time.Duration
}

// Duration is how long it acts (zero for a member loss).
func (p Planned) Duration() time.Duration {
	if p.Disturbance.Duration == nil {
		return 0
	}
	return p.Disturbance.Duration.Duration
}

// ByRunner says whether the runner acts on it (a SQL load) rather than the
// operator.
func (p Planned) ByRunner() bool { return p.Kind == DisturbSQLLoad }

// DisturbanceKind names the kind of a disturbance.
func DisturbanceKind(d benchv1.Disturbance) string {
	switch {
	case d.SQLLoad != nil:
		return DisturbSQLLoad
	case d.NoisyNeighbour != nil:
		return DisturbNoisyNeighbour
	case d.MemberLoss != nil:
		return DisturbMemberLoss
	case d.Network != nil:
		return DisturbNetwork
	}
	return ""
}

// DisturbanceSeed is the seed of a run's random phases: spec.disturbances.
// seed, else one drawn from the run's UID, so that every reconcile (and a
// restarted manager) draws the same offsets without having to record them
// first.
func DisturbanceSeed(run *benchv1.BenchmarkRun) int64 {
	if d := run.Spec.Disturbances; d != nil && d.Seed != nil {
		return *d.Seed
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(run.UID))
	return int64(h.Sum64() >> 1)
}

// Disturbances are the disturbances of the measurements of repetition
// rep, in the order of their offsets.
func Disturbances(run *benchv1.BenchmarkRun, rep int32) []Planned {
	if run.Spec.Disturbances == nil {
		return nil
	}
	seed := DisturbanceSeed(run)
	var out []Planned
	for _, d := range run.Spec.Disturbances.Schedule {
		if len(d.Repetitions) > 0 && !slices.Contains(d.Repetitions, rep) {
			continue
		}
		out = append(out, Planned{Disturbance: d, Kind: DisturbanceKind(d), Offset: DisturbanceOffset(seed, d, rep)})
	}
	slices.SortStableFunc(out, func(a, b Planned) int { return int(a.Offset - b.Offset) })
	return out
}

// DisturbanceOffset is when d acts in repetition rep: its at, or a draw in
// its between range from a generator seeded by the run's seed, the
// disturbance's name and the repetition, to the millisecond.
func DisturbanceOffset(seed int64, d benchv1.Disturbance, rep int32) time.Duration {
	if d.At != nil {
		return d.At.Duration
	}
	if d.Between == nil {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(d.Name))
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()^uint64(rep)))
	from, to := d.Between.From.Milliseconds(), d.Between.To.Milliseconds()
	return time.Duration(from+r.Int64N(to-from+1)) * time.Millisecond
}

// SteadyUntil ends the steady window of a disturbed measurement: the first
// offset (zero for none).
func SteadyUntil(planned []Planned) time.Duration {
	var until time.Duration
	for i, p := range planned {
		if i == 0 || p.Offset < until {
			until = p.Offset
		}
	}
	return until
}

// RestartAfter is the offset of a measurement's first member loss (zero
// for none): a tool the runner can restart (workloads.Restartable) that
// ends early after it is started again for the rest of its time.
func RestartAfter(planned []Planned) time.Duration {
	var at time.Duration
	found := false
	for _, p := range planned {
		if p.MemberLoss != nil && (!found || p.Offset < at) {
			at, found = p.Offset, true
		}
	}
	if found && at == 0 {
		at = time.Millisecond // zero means "never"
	}
	return at
}

// Disturbed says whether a Job's measurements are disturbed: then it
// always has a start barrier (even with one load generator), whose instant
// is the clock both the runner and the operator act on.
func Disturbed(p JobParams) bool {
	return p.Role == benchv1.RoleLoadgen && len(Disturbances(p.Run, p.Repetition)) > 0
}

// runnerDisturbances are the runner's --disturbance flags: the SQL loads
// it runs and the member losses whose writes its ledger checks, through the
// endpoint the tool uses.
func runnerDisturbances(p JobParams) []pod.RunnerDisturbance {
	if p.Role != benchv1.RoleLoadgen {
		return nil
	}
	var out []pod.RunnerDisturbance
	for _, d := range Disturbances(p.Run, p.Repetition) {
		rd := pod.RunnerDisturbance{Name: d.Name, Kind: d.Kind, Offset: d.Offset, Duration: d.Duration(),
			Protocol: p.Protocol, Address: p.Endpoint.Address(), Database: p.Endpoint.Database, TLS: p.Endpoint.ClientTLS()}
		switch {
		case d.SQLLoad != nil:
			s := d.SQLLoad
			rd.Sessions, rd.Statements, rd.Once = int(s.Sessions), s.Statements, s.Once
			rd.Administrator = s.Credentials != benchv1.CredentialsWorkload
		case d.MemberLoss != nil:
			rd.Ledger = d.MemberLoss.WriteLedger == nil || *d.MemberLoss.WriteLedger
			if !rd.Ledger {
				continue
			}
		default:
			continue // the operator acts on it; the runner needs not know
		}
		out = append(out, rd)
	}
	return out
}

// disturbEnv is the account of the runner's SQL loads and ledgers: the
// administrator's (sqlLoad.secretRef, else the target's superuser) when a
// SQL load asks for it and one is known, else the workload's.
func disturbEnv(p JobParams) []corev1.EnvVar {
	ds := runnerDisturbances(p)
	if len(ds) == 0 {
		return nil
	}
	admin := false
	for _, d := range ds {
		admin = admin || d.Administrator
	}
	ep := p.Endpoint
	if admin {
		for _, d := range Disturbances(p.Run, p.Repetition) {
			if d.SQLLoad != nil && d.SQLLoad.SecretRef != nil {
				ref := *d.SQLLoad.SecretRef
				ep.Username = &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "username"}
				ep.Password = &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "password"}
				return ep.CredentialEnv(pod.EnvDisturbUsername, pod.EnvDisturbPassword)
			}
		}
		if ep.Superuser != nil {
			ep.Username, ep.Password = ep.Superuser, ep.SuperuserPassword
		}
	}
	return ep.CredentialEnv(pod.EnvDisturbUsername, pod.EnvDisturbPassword)
}

// SQLLoadAsAdministrator says whether a run's SQL loads ask for the
// target's administrator (its provisioner then hands the superuser's
// Secret out, as for a workload that needs one).
func SQLLoadAsAdministrator(run *benchv1.BenchmarkRun) bool {
	if run.Spec.Disturbances == nil {
		return false
	}
	for _, d := range run.Spec.Disturbances.Schedule {
		if d.SQLLoad != nil && d.SQLLoad.Credentials != benchv1.CredentialsWorkload && d.SQLLoad.SecretRef == nil {
			return true
		}
	}
	return false
}
