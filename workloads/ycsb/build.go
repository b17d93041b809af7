package ycsb

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// YCSB implements workloads.Workload.
type YCSB struct{}

var _ workloads.Workload = YCSB{}

func (YCSB) Name() string { return "ycsb" }

// DefaultImage: YCSB publishes no image. This one is built by
// workloads/ycsb/image/Dockerfile from the YCSB 0.17.0 jars on Maven Central
// (site.ycsb:core and the bindings); workload.image overrides it.
func (YCSB) DefaultImage() string { return "ghcr.io/dbperf-io/ycsb:0.17.0" }

// classpath and main class inside the image.
const (
	ycsbHome  = "/opt/ycsb"
	mainClass = "site.ycsb.Client"
)

var bindings = map[string]string{
	"mongodb": "site.ycsb.db.MongoDbClient",
	"redis":   "site.ycsb.db.RedisClient",
	"jdbc":    "site.ycsb.db.JdbcDBClient",
	"basic":   "site.ycsb.BasicDB",
}

// core are YCSB's core workloads A–F as property sets.
var core = map[string]map[string]string{
	"a": {"readproportion": "0.5", "updateproportion": "0.5", "scanproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
	"b": {"readproportion": "0.95", "updateproportion": "0.05", "scanproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
	"c": {"readproportion": "1", "updateproportion": "0", "scanproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
	"d": {"readproportion": "0.95", "updateproportion": "0", "scanproportion": "0", "insertproportion": "0.05", "requestdistribution": "latest"},
	"e": {"readproportion": "0", "updateproportion": "0", "scanproportion": "0.95", "insertproportion": "0.05", "requestdistribution": "zipfian",
		"maxscanlength": "100", "scanlengthdistribution": "uniform"},
	"f": {"readproportion": "0.5", "updateproportion": "0", "scanproportion": "0", "insertproportion": "0", "readmodifywriteproportion": "0.5",
		"requestdistribution": "zipfian"},
}

func (YCSB) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	w := spec.YCSB
	p := path.Child("ycsb")
	if w == nil {
		return field.ErrorList{field.Required(p, "ycsb settings are required")}
	}
	var errs field.ErrorList
	if _, ok := bindings[w.Binding]; !ok {
		errs = append(errs, field.NotSupported(p.Child("binding"), w.Binding, workloads.SortedKeys(bindings)))
	}
	for k := range w.Properties {
		switch k {
		case "recordcount", "operationcount", "threadcount", "target", "db":
			errs = append(errs, field.Invalid(p.Child("properties").Key(k), k, "set by the operator from the ycsb fields; use them instead"))
		}
		if strings.ContainsAny(k, " \n=") {
			errs = append(errs, field.Invalid(p.Child("properties").Key(k), k, "a property name has no spaces or '='"))
		}
	}
	return errs
}

func (YCSB) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	threads := spec.YCSB.Threads
	if len(threads) == 0 {
		threads = []int32{32}
	}
	return workloads.Sweep(workloads.Dimension{Name: "threads", Values: threads})
}

// Properties is the workload property file both steps read: the core
// workload (or none), the counts, the measurement settings and the user's
// properties, which win.
func Properties(w *benchv1.YCSBWorkload) string {
	props := map[string]string{
		"workload":                 "site.ycsb.workloads.CoreWorkload",
		"readallfields":            "true",
		"recordcount":              strconv.FormatInt(orDefault(w.RecordCount, 1000000), 10),
		"operationcount":           strconv.FormatInt(orDefault(w.OperationCount, 5000000), 10),
		"measurementtype":          "hdrhistogram",
		"hdrhistogram.percentiles": strings.Join(append([]string{"95", "99"}, w.Percentiles...), ","),
		// Per-operation histogram logs: what merges the results of several
		// load generators into true percentiles.
		"hdrhistogram.fileoutput":  "true",
		"hdrhistogram.output.path": pod.OutputDir + "/" + HistogramPrefix,
	}
	for k, v := range core[w.CoreWorkload] {
		props[k] = v
	}
	if w.MaxExecutionTime != nil && w.MaxExecutionTime.Duration > 0 {
		props["maxexecutiontime"] = strconv.Itoa(int(w.MaxExecutionTime.Seconds()))
	}
	for k, v := range w.Properties {
		props[k] = v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# YCSB properties written by dbperf-operator (core workload %q)\n", w.CoreWorkload)
	for _, k := range workloads.SortedKeys(props) {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

func orDefault(v, d int64) int64 {
	if v < 1 {
		return d
	}
	return v
}

const propertiesFile = "workload.properties"

// HistogramPrefix starts the names of the histogram logs YCSB writes in
// pod.OutputDir: hdr-READ.hdr, hdr-UPDATE.hdr, …
const HistogramPrefix = "hdr-"

// histogramOps are the operations whose histogram logs are collected.
var histogramOps = []string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE"}

// command is the YCSB client invocation for the load (-load) or run (-t) phase.
func command(w *benchv1.YCSBWorkload, ep pod.Endpoint, phase string, threads int32) pod.Invocation {
	cmd := []string{"java", "-cp", ycsbHome + "/conf:" + ycsbHome + "/lib/*", mainClass, phase,
		"-db", bindings[w.Binding], "-P", pod.FilesDir + "/" + propertiesFile,
		"-threads", strconv.Itoa(int(threads)), "-s"}
	if phase == "-t" && w.TargetOpsPerSecond > 0 {
		cmd = append(cmd, "-target", strconv.FormatInt(w.TargetOpsPerSecond, 10))
	}
	inv := pod.Invocation{Files: map[string]string{propertiesFile: Properties(w)}}
	// Both phases write histogram logs (the property file is shared); the
	// runner creates their directory before YCSB opens them.
	for _, op := range histogramOps {
		inv.ResultFiles = append(inv.ResultFiles, pod.OutputDir+"/"+HistogramPrefix+op+".hdr")
	}
	prop := func(k, v string) { cmd = append(cmd, "-p", k+"="+v) }
	port := strconv.Itoa(int(ep.Port))
	switch w.Binding {
	case "mongodb":
		inv.Env = ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)
		auth := ""
		if ep.Username != nil && ep.Password != nil {
			auth = "$(" + pod.EnvUsername + "):$(" + pod.EnvPassword + ")@"
			inv.SecretEnv = []string{pod.EnvPassword}
		}
		db := ep.Database
		if db == "" {
			db = "ycsb"
		}
		q := "w=1"
		if auth != "" {
			q += "&authSource=admin"
		}
		if ep.TLS {
			q += "&tls=true"
		}
		prop("mongodb.url", "mongodb://"+auth+ep.Host+":"+port+"/"+db+"?"+q)
	case "redis":
		prop("redis.host", ep.Host)
		prop("redis.port", port)
		inv.Env = ep.CredentialEnv("", pod.EnvPassword)
		if ep.Password != nil {
			prop("redis.password", "$("+pod.EnvPassword+")")
			inv.SecretEnv = []string{pod.EnvPassword}
		}
	case "jdbc":
		db := ep.Database
		if db == "" {
			db = "postgres"
		}
		prop("db.driver", "org.postgresql.Driver")
		url := "jdbc:postgresql://" + ep.Host + ":" + port + "/" + db
		if ep.TLS {
			url += "?sslmode=require"
		}
		prop("db.url", url)
		inv.Env = ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)
		if ep.Username != nil {
			prop("db.user", "$("+pod.EnvUsername+")")
		}
		if ep.Password != nil {
			prop("db.passwd", "$("+pod.EnvPassword+")")
			inv.SecretEnv = []string{pod.EnvPassword}
		}
	}
	inv.Command = cmd
	return inv
}

// Prepare is YCSB's load phase: it inserts recordcount records.
func (YCSB) Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation {
	w := spec.YCSB
	if w.Binding == "basic" {
		return nil
	}
	threads := w.LoadThreads
	if threads < 1 {
		threads = 32
	}
	inv := command(w, ep, "-load", threads)
	return &inv
}

// Run is YCSB's transaction phase at one thread count. A capacity level's
// offered rate (workloads.RateParameter) becomes -target, each load
// generator its exact share, with measurement.interval=both: YCSB then
// also measures each operation from its intended start (the schedule
// -target sets), and the report's latencies are those (see Parse).
func (YCSB) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	rate, ok := step.Params[workloads.RateParameter]
	if !ok {
		return command(spec.YCSB, ep, "-t", step.Params["threads"])
	}
	w := *spec.YCSB
	w.TargetOpsPerSecond = 0 // the level's rate replaces it
	inv := command(&w, ep, "-t", step.Params["threads"])
	inv.Command = append(inv.Command, "-target", workloads.SharePlaceholder(int64(rate)), "-p", "measurement.interval=both")
	for _, op := range histogramOps {
		inv.ResultFiles = append(inv.ResultFiles, pod.OutputDir+"/"+HistogramPrefix+IntendedPrefix+op+".hdr")
	}
	return inv
}

// IntendedPrefix names YCSB's measurements from each operation's intended
// start (measurement.interval=intended or both): [Intended-READ] and
// hdr-Intended-READ.hdr.
const IntendedPrefix = "Intended-"

// RateCorrected: at a level's rate YCSB measures from the intended start
// (measurement.interval=both), and the parser reports those latencies.
func (YCSB) RateCorrected(*benchv1.WorkloadSpec) bool { return true }

var _ workloads.RateKnob = YCSB{}

var _ workloads.Speaker = YCSB{}

// Speaks: with the mongodb binding, MongoDB's protocol, and the target's
// serverStatus is polled (its user authenticates against admin, as the
// binding's URL says: no database is named). The other bindings' targets
// keep none that a poller reads here.
func (YCSB) Speaks(spec *benchv1.WorkloadSpec) workloads.Speaks {
	if spec.YCSB != nil && spec.YCSB.Binding == "mongodb" {
		return workloads.Speaks{Protocol: pod.ProtocolMongoDB}
	}
	return workloads.Speaks{}
}
