package hammerdb

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/tlsciphers"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// HammerDB implements workloads.Workload.
type HammerDB struct{}

var _ workloads.Workload = HammerDB{}

func (HammerDB) Name() string { return "hammerdb" }

// DefaultImage is the TPC Council's official image; its working directory
// is the HammerDB installation, where hammerdbcli lives.
func (HammerDB) DefaultImage() string { return "tpcorg/hammerdb:v4.12" }

// Files of the generated scripts, mounted at pod.FilesDir.
const (
	buildScript = "build.tcl"
	// TimeProfileFile is where xtprof writes its report: HammerDB writes
	// into $TMP, which the invocation points at pod.OutputDir.
	TimeProfileFile = "hdbxtprofile.log"
	// JobsDatabase is HammerDB's jobs database (the output of every job),
	// which it opens in $TMP at start-up, schema build and timed test alike.
	JobsDatabase = "hammer.DB"
)

func runScript(step int) string { return fmt.Sprintf("run-%d.tcl", step) }

// levelScript is the timed test of a capacity level (Run).
const levelScript = "run-level.tcl"

// autopilotScript runs every virtual-user count in one measurement
// (spec.workload.hammerdb.autopilot), and AutopilotStep is its one step.
const (
	autopilotScript = "run-autopilot.tcl"
	AutopilotStep   = "autopilot"
)

// The lines an autopilot script prints around each timed test, with
// HammerDB's clock in milliseconds: the stages are cut from them.
const (
	clockMarker = "DBPERF CLOCK"
	stageMarker = "DBPERF STAGE"
)

// settingKey is a tpcc dictionary key such as pg_vacuum.
var settingKey = regexp.MustCompile(`^(pg|mysql)_[a-z_]+$`)

// managed are the dictionary keys the operator sets from the spec.
var managed = []string{"count_ware", "num_vu", "superuser", "superuserpass", "defaultdbase", "user", "pass", "dbase",
	"driver", "rampup", "duration", "allwarehouse", "timeprofile", "keyandthink", "storedprocs", "partition", "total_iterations", "raiseerror"}

func (HammerDB) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	w := spec.HammerDB
	p := path.Child("hammerdb")
	if w == nil {
		return field.ErrorList{field.Required(p, "hammerdb settings are required")}
	}
	var errs field.ErrorList
	if w.Database != benchv1.HammerDBPostgres && w.Database != benchv1.HammerDBMySQL {
		errs = append(errs, field.NotSupported(p.Child("database"), w.Database, []benchv1.HammerDBDatabase{benchv1.HammerDBPostgres, benchv1.HammerDBMySQL}))
	}
	if len(w.VirtualUsers) == 0 {
		errs = append(errs, field.Required(p.Child("virtualUsers"), "at least one virtual-user count is required"))
	}
	if w.BuildVirtualUsers > warehouses(w) {
		errs = append(errs, field.Invalid(p.Child("buildVirtualUsers"), w.BuildVirtualUsers, "must not exceed warehouses"))
	}
	prefix := prefixOf(w)
	for _, k := range workloads.SortedKeys(w.Settings) {
		kp := p.Child("settings").Key(k)
		switch {
		case !settingKey.MatchString(k):
			errs = append(errs, field.Invalid(kp, k, "a tpcc dictionary key such as pg_vacuum or mysql_prepared"))
		case !strings.HasPrefix(k, prefix+"_"):
			errs = append(errs, field.Invalid(kp, k, fmt.Sprintf("keys of database %s start with %s_", w.Database, prefix)))
		case isManaged(strings.TrimPrefix(k, prefix+"_")):
			errs = append(errs, field.Invalid(kp, k, "set by the operator from the hammerdb fields; use them instead"))
		}
		if strings.ContainsAny(w.Settings[k], "{}[]$\\\"\n;") {
			errs = append(errs, field.Invalid(kp, w.Settings[k], "a plain value without Tcl special characters"))
		}
	}
	return errs
}

func isManaged(k string) bool {
	for _, m := range managed {
		if m == k {
			return true
		}
	}
	return false
}

func (HammerDB) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	if spec.HammerDB.Autopilot {
		return []workloads.Step{{Name: AutopilotStep, Params: map[string]int32{}}}
	}
	return workloads.Sweep(workloads.Dimension{Name: "vu", Values: spec.HammerDB.VirtualUsers})
}

// Prepare builds the schema, unless the spec keeps one.
func (h HammerDB) Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation {
	inv := invocation(spec, ep, buildScript)
	return &inv
}

// Run is one timed test at the step's virtual-user count.
func (h HammerDB) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	seconds, held := step.Params[workloads.DurationParameter]
	vu := step.Params["vu"]
	if spec.HammerDB.Autopilot && step.Name == AutopilotStep {
		return invocation(spec, ep, autopilotScript)
	}
	if vu < 1 {
		return invocation(spec, ep, runScript(0))
	}
	for i, s := range h.Steps(spec) {
		if s.Name == step.Name && !held {
			return invocation(spec, ep, runScript(i))
		}
	}
	// A step the sweep does not hold: a capacity level at its own virtual
	// users, and a confirmation's or soak's own duration, in the whole
	// minutes HammerDB takes (rounded up; the ramp-up comes first).
	w := *spec.HammerDB
	if held {
		w.Duration = &metav1.Duration{Duration: time.Duration((int64(seconds)+59)/60) * time.Minute}
	}
	inv := invocation(spec, ep, levelScript)
	inv.Files[levelScript] = script(&w, ep, vu)
	return inv
}

// StepDuration: a step's DurationParameter becomes the timed test's
// duration, in whole minutes rounded up.
func (HammerDB) StepDuration() {}

var _ workloads.DurationKnob = HammerDB{}

// invocation runs one script. Every invocation carries every script, so
// that the run's files ConfigMap shows all of them from the first Job on.
func invocation(spec *benchv1.WorkloadSpec, ep pod.Endpoint, script string) pod.Invocation {
	w := spec.HammerDB
	inv := pod.Invocation{
		Command: []string{"./hammerdbcli", "auto", pod.FilesDir + "/" + script},
		Env:     append([]corev1.EnvVar{{Name: "TMP", Value: pod.OutputDir}}, credentialEnv(ep)...),
		Files:   Scripts(w, ep),
	}
	// HammerDB uses $TMP only when the directory exists, else it falls back
	// to /tmp; the runner makes the directories of result files, so every
	// invocation names the jobs database as one, and $TMP applies to the
	// schema build as it does to the timed test.
	inv.ResultFiles = []string{pod.OutputDir + "/" + JobsDatabase}
	if script != buildScript && timeProfile(w) {
		inv.ResultFiles = append(inv.ResultFiles, pod.OutputDir+"/"+TimeProfileFile)
	}
	if w.Database != benchv1.HammerDBMySQL && ep.TLS {
		// pg_sslmode below sets the mode; Pgtcl's libpq finds the CA and
		// the client certificate of two-way TLS in its variables.
		for _, e := range workloads.LibpqTLSEnv(ep) {
			if e.Name != "PGSSLMODE" {
				inv.Env = append(inv.Env, e)
			}
		}
	}
	for _, e := range inv.Env {
		if e.Name == pod.EnvPassword || e.Name == pod.EnvSuperuserPassword {
			inv.SecretEnv = append(inv.SecretEnv, e.Name)
		}
	}
	return inv
}

func credentialEnv(ep pod.Endpoint) []corev1.EnvVar {
	env := ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)
	if ep.Superuser != nil && ep.SuperuserPassword != nil {
		env = append(env,
			corev1.EnvVar{Name: pod.EnvSuperuser, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ep.Superuser}},
			corev1.EnvVar{Name: pod.EnvSuperuserPassword, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ep.SuperuserPassword}})
	}
	return env
}

func warehouses(w *benchv1.HammerDBWorkload) int32 {
	if w.Warehouses < 1 {
		return 1
	}
	return w.Warehouses
}

func prefixOf(w *benchv1.HammerDBWorkload) string {
	if w.Database == benchv1.HammerDBMySQL {
		return "mysql"
	}
	return "pg"
}

func timeProfile(w *benchv1.HammerDBWorkload) bool { return w.TimeProfile == nil || *w.TimeProfile }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Scripts are the build script and one run script per step (with
// autopilot, the one script of every test).
func Scripts(w *benchv1.HammerDBWorkload, ep pod.Endpoint) map[string]string {
	files := map[string]string{buildScript: script(w, ep, 0)}
	if w.Autopilot {
		files[autopilotScript] = tclScript(w, ep, w.VirtualUsers, true)
		return files
	}
	for i, vu := range w.VirtualUsers {
		files[runScript(i)] = script(w, ep, vu)
	}
	return files
}

// script writes the Tcl of the build (vu 0) or of a timed test at vu
// virtual users.
func script(w *benchv1.HammerDBWorkload, ep pod.Endpoint, vu int32) string {
	if vu == 0 {
		return tclScript(w, ep, nil, false)
	}
	return tclScript(w, ep, []int32{vu}, false)
}

// tclScript writes the Tcl of the build (no virtual-user counts) or of a
// timed test per count, in order; staged, each test prints HammerDB's
// clock before and after it (stageMarker), and the script its clock at
// its start (clockMarker). Values from the spec are validated or braced;
// secrets are read from the environment, never written into the script.
func tclScript(w *benchv1.HammerDBWorkload, ep pod.Endpoint, vus []int32, staged bool) string {
	var b strings.Builder
	pre := prefixOf(w)
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	diset := func(dict, key, value string) { line("diset %s %s_%s %s", dict, pre, key, value) }
	kind := "timed test"
	switch {
	case len(vus) == 0:
		kind = "schema build"
	case staged:
		kind = fmt.Sprintf("autopilot (%d timed tests)", len(vus))
	}
	line("#!/bin/tclsh")
	line("# HammerDB TPROC-C %s written by dbperf-operator.", kind)
	line("# Credentials come from the environment and never appear in this file.")
	if staged {
		line(`puts "%s [clock milliseconds]"`, clockMarker)
	}
	line(`puts "SETTING CONFIGURATION"`)
	if w.Database == benchv1.HammerDBMySQL {
		line("dbset db mysql")
	} else {
		line("dbset db pg")
	}
	line("dbset bm TPC-C")
	diset("connection", "host", brace(ep.Host))
	diset("connection", "port", strconv.Itoa(int(ep.Port)))
	user, pass := "$::env("+pod.EnvUsername+")", "$::env("+pod.EnvPassword+")"
	if w.Database == benchv1.HammerDBMySQL {
		diset("connection", "socket", "null")
		diset("connection", "ssl", strconv.FormatBool(ep.TLS))
		if ep.TLS && ep.CASecret == "" && ep.ClientCertSecret == "" {
			// TLS without a CA to verify against: HammerDB then needs a
			// capath that exists (else it turns TLS off, only saying so in
			// a message box) and no file names; the output directory is one.
			diset("connection", "ssl_linux_capath", pod.OutputDir)
			diset("connection", "ssl_ca", "{}")
			diset("connection", "ssl_cert", "{}")
			diset("connection", "ssl_key", "{}")
			diset("connection", "ssl_two_way", "false")
		} else if ep.TLS {
			diset("connection", "ssl_linux_capath", pod.TLSDir)
			if ep.CASecret != "" {
				diset("connection", "ssl_ca", pod.TLSDir+"/ca.crt")
			}
			if ep.ClientCertSecret != "" {
				diset("connection", "ssl_two_way", "true")
				diset("connection", "ssl_cert", pod.TLSDir+"/tls.crt")
				diset("connection", "ssl_key", pod.TLSDir+"/tls.key")
			} else {
				diset("connection", "ssl_two_way", "false")
			}
		}
		if ep.TLS && ep.TLSCipher != "" && !tlsciphers.IsTLS13(ep.TLSCipher) {
			// HammerDB hands mysql_ssl_cipher to mysqltcl's -sslcipher,
			// the C client's list of TLS 1.2 ciphers by OpenSSL name. It
			// has no setting for TLS 1.3 suites (nor for the version):
			// those the runner's session check guards.
			diset("connection", "ssl_cipher", brace(tlsciphers.OpenSSL(ep.TLSCipher)))
		}
		diset("tpcc", "user", user)
		diset("tpcc", "pass", pass)
	} else {
		mode := "prefer"
		for _, e := range workloads.LibpqTLSEnv(ep) {
			if e.Name == "PGSSLMODE" { // the mode every libpq tool of ours uses
				mode = e.Value
			}
		}
		diset("connection", "sslmode", mode)
		superUser, superPass := user, pass
		if ep.Superuser != nil && ep.SuperuserPassword != nil {
			superUser, superPass = "$::env("+pod.EnvSuperuser+")", "$::env("+pod.EnvSuperuserPassword+")"
		}
		diset("tpcc", "superuser", superUser)
		diset("tpcc", "superuserpass", superPass)
		diset("tpcc", "defaultdbase", brace(orDefault(ep.Database, "postgres")))
		diset("tpcc", "user", orDefault(w.SchemaUser, "tpcc"))
		diset("tpcc", "pass", pass)
		diset("tpcc", "storedprocs", strconv.FormatBool(w.StoredProcedures == nil || *w.StoredProcedures))
	}
	diset("tpcc", "dbase", orDefault(w.SchemaDatabase, "tpcc"))
	diset("tpcc", "count_ware", strconv.Itoa(int(warehouses(w))))
	diset("tpcc", "partition", strconv.FormatBool(w.Partition))
	keys := make([]string, 0, len(w.Settings))
	for k := range w.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line("diset tpcc %s %s", k, brace(w.Settings[k]))
	}
	if len(vus) == 0 {
		build := w.BuildVirtualUsers
		if build < 1 {
			build = 1
		}
		diset("tpcc", "num_vu", strconv.Itoa(int(build)))
		line(`puts "SCHEMA BUILD STARTED"`)
		line("buildschema")
		line(`puts "SCHEMA BUILD COMPLETED"`)
		return b.String()
	}
	rampup, duration := minutes(w.RampUp, 2), minutes(w.Duration, 5)
	diset("tpcc", "driver", "timed")
	diset("tpcc", "total_iterations", "10000000000")
	diset("tpcc", "rampup", strconv.Itoa(int(rampup)))
	diset("tpcc", "duration", strconv.Itoa(int(duration)))
	diset("tpcc", "allwarehouse", strconv.FormatBool(w.AllWarehouses))
	diset("tpcc", "timeprofile", strconv.FormatBool(timeProfile(w)))
	diset("tpcc", "keyandthink", strconv.FormatBool(w.KeyAndThink))
	diset("tpcc", "raiseerror", "false")
	line("loadscript")
	for i, vu := range vus {
		if staged {
			line(`puts "%s %d vu=%d begin [clock milliseconds]"`, stageMarker, i+1, vu)
		}
		line(`puts "TEST STARTED"`)
		line("vuset vu %d", vu)
		line("vucreate")
		line("tcstart")
		line("vurun")
		line("tcstop")
		line("vudestroy")
		line(`puts "TEST COMPLETE"`)
		if staged {
			line(`puts "%s %d vu=%d end [clock milliseconds]"`, stageMarker, i+1, vu)
		}
	}
	return b.String()
}

// brace quotes a value for Tcl: braces keep it literal.
func brace(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t{}[]$\\\";") {
		return s
	}
	return "{" + strings.NewReplacer("{", "", "}", "").Replace(s) + "}"
}

// minutes is a duration in the whole minutes HammerDB takes (the schema
// allows whole minutes only), or the default when unset.
func minutes(d *metav1.Duration, def int32) int32 {
	if d == nil {
		return def
	}
	return int32(d.Minutes())
}
