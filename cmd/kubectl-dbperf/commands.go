package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// cluster connects with the kubeconfig rules kubectl uses.
type cluster struct {
	c         client.Client
	cs        kubernetes.Interface
	namespace string
}

func connect(o common) (*cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.kubeconfig != "" {
		rules.ExplicitPath = o.kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, err
	}
	ns := o.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, err
		}
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &cluster{c: c, cs: cs, namespace: ns}, nil
}

func (k *cluster) run(ctx context.Context, name string) (*benchv1.BenchmarkRun, error) {
	r := &benchv1.BenchmarkRun{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: name}, r); err != nil {
		return nil, fmt.Errorf("BenchmarkRun %s/%s: %w", k.namespace, name, err)
	}
	return r, nil
}

func cmdCompare(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, "table")
	var files listFlag
	fs.Var(&files, "from-file", "a `FILE` written by results -o json (give two: baseline, then candidate)")
	alpha := fs.Float64("alpha", stats.DefaultAlpha, "significance level")
	minEffect := fs.Float64("min-effect", stats.DefaultMinEffectPercent, "minimum effect in percent (0: none)")
	maxCV := fs.Float64("max-cv", 0, "CV in percent above which a metric is Inconclusive (0: off)")
	correction := fs.String("correction", string(stats.DefaultCorrection), "correction over the headline (the primary metric of each step): Holm, BenjaminiHochberg or None")
	opCorrection := fs.String("operation-correction", string(stats.DefaultOperationCorrection), "correction over every other metric of every operation: Holm, BenjaminiHochberg or None")
	var metrics, operations listFlag
	fs.Var(&metrics, "metric", "keep only the metrics matching this pattern (repeatable; the primary metric is always kept)")
	fs.Var(&operations, "operation", "keep only the operations matching this pattern (repeatable; the whole run's figures are always kept)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	opts := compare.Options{Criteria: stats.Criteria{Alpha: *alpha, MinEffectPercent: *minEffect, MaxCVPercent: *maxCV, Correction: stats.Correction(*correction)},
		OperationCorrection: stats.Correction(*opCorrection), Metrics: metrics, Operations: operations}
	if err := opts.Validate(); err != nil {
		return criteriaFlagError(err)
	}
	switch {
	case len(files) > 0:
		if len(files) != 2 || len(pos) != 0 {
			return usageError{"compare --from-file needs exactly two files (baseline, candidate) and no run names"}
		}
		var sides [2]compare.Side
		for i, f := range files {
			if sides[i], err = readSide(f); err != nil {
				return err
			}
		}
		return buildAndRender(stdout, sides, opts, o.output)
	case len(pos) == 2:
		k, err := connect(o)
		if err != nil {
			return err
		}
		var sides [2]compare.Side
		for i, name := range pos {
			r, err := k.fullRun(ctx, name)
			if err != nil {
				return err
			}
			sides[i] = compare.Side{Name: name, Runs: []compare.Run{r}}
		}
		return buildAndRender(stdout, sides, opts, o.output)
	case len(pos) == 1:
		k, err := connect(o)
		if err != nil {
			return err
		}
		reports, err := k.comparisonReports(ctx, pos[0])
		if err != nil {
			return err
		}
		if o.output == "html" {
			return compare.RenderHTML(stdout, reports)
		}
		if o.output == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(reports)
		}
		for _, rep := range reports {
			if err := compare.Render(stdout, rep, o.output); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
		return nil
	}
	return usageError{"compare needs RUN_A RUN_B, a COMPARISON name, or --from-file twice"}
}

// cmdExplain is compare -o explain: the summary, what differed between
// the variants (nodes, images, versions, the server's settings) and the
// suspects (statements, waits, commands by their change per transaction),
// with the plans that changed.
func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cmdCompare(ctx, append([]string{"-o", "explain"}, args...), stdout, stderr)
}

// fullRun is what a comparison needs of a run with the full result of
// every measurement, from its results ConfigMap when the run has finished
// (before that, or without the right to read ConfigMaps, the headline
// metrics of its status).
// criteriaFlags are the compare flags of the criteria, by the name the
// criteria's validation gives them.
var criteriaFlags = map[string]string{"Alpha": "alpha", "MinEffectPercent": "min-effect", "MaxCVPercent": "max-cv",
	"Correction": "correction", "OperationCorrection": "operation-correction"}

// criteriaFlagError is the usage error of criteria out of their bounds,
// which are a BenchmarkComparison's, naming the flag.
func criteriaFlagError(err error) error {
	var bad stats.InvalidCriterion
	if errors.As(err, &bad) && criteriaFlags[bad.Criterion] != "" {
		return usageError{fmt.Sprintf("compare: --%s %s: %s", criteriaFlags[bad.Criterion], bad.Value, bad.Bounds)}
	}
	return usageError{"compare: " + err.Error()}
}

func (k *cluster) fullRun(ctx context.Context, name string) (compare.Run, error) {
	r, err := k.run(ctx, name)
	if err != nil {
		return compare.Run{}, err
	}
	out := compare.FromBenchmarkRun(r)
	cm := &corev1.ConfigMap{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: specs.ResultsConfigMapName(r)}, cm); err == nil {
		doc, err := specs.ReadDocument(cm)
		if err != nil {
			return compare.Run{}, fmt.Errorf("results of %s: %w", name, err)
		}
		out.AddDocument(doc)
	}
	return out, nil
}

// comparisonReports reads a finished BenchmarkComparison's report, or the
// report a comparison of that name deleted with deletionPolicy Retain left
// behind (released).
func (k *cluster) comparisonReports(ctx context.Context, name string) ([]*compare.Report, error) {
	cmp := &benchv1.BenchmarkComparison{}
	cm := &corev1.ConfigMap{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: name}, cmp); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("BenchmarkComparison %s/%s: %w", k.namespace, name, err)
		}
		released, rerr := k.releasedReport(ctx, name)
		if rerr != nil || released == nil {
			return nil, errors.Join(fmt.Errorf("BenchmarkComparison %s/%s: %w", k.namespace, name, err), rerr)
		}
		cm = released
	} else {
		if cmp.Status.ReportConfigMap == "" {
			return nil, fmt.Errorf("BenchmarkComparison %s has no report yet: phase %s, progress %s", name, cmp.Status.Phase, cmp.Status.Progress)
		}
		if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: cmp.Status.ReportConfigMap}, cm); err != nil {
			return nil, err
		}
	}
	reports, err := compare.ReadReports(cm.Data, cm.BinaryData)
	if err != nil {
		return nil, fmt.Errorf("report of %s: %w", name, err)
	}
	return reports, nil
}

// releasedReport is the newest report ConfigMap released by a deleted
// comparison of that name (annotation bench.dbperf.io/released-from), or
// nil.
func (k *cluster) releasedReport(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	var cms corev1.ConfigMapList
	if err := k.c.List(ctx, &cms, client.InNamespace(k.namespace), client.HasLabels{benchv1.LabelComparison}); err != nil {
		return nil, fmt.Errorf("while looking for the report of a deleted BenchmarkComparison %s: %w", name, err)
	}
	var newest *corev1.ConfigMap
	for i := range cms.Items {
		cm := &cms.Items[i]
		if cm.Annotations[benchv1.AnnotationReleasedFrom] != "BenchmarkComparison/"+name {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&cm.CreationTimestamp) {
			newest = cm
		}
	}
	return newest, nil
}

// readSide reads one side of an offline comparison: one exported run or a
// list of them; the side is named after the runs' common name or the file.
// buildAndRender compares a candidate with its baseline and prints the report.
func buildAndRender(stdout io.Writer, sides [2]compare.Side, opts compare.Options, output string) error {
	rep, err := compare.Build(sides[0], sides[1], opts)
	if err != nil {
		return err
	}
	return compare.Render(stdout, rep, output)
}

func readSide(path string) (compare.Side, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return compare.Side{}, err
	}
	var runs []compare.Run
	if err := json.Unmarshal(raw, &runs); err != nil {
		var one compare.Run
		if err2 := json.Unmarshal(raw, &one); err2 != nil {
			return compare.Side{}, fmt.Errorf("%s: neither a run nor a list of runs written by `kubectl dbperf results -o json`: %w", path, err2)
		}
		runs = []compare.Run{one}
	}
	if len(runs) == 0 {
		return compare.Side{}, fmt.Errorf("%s holds no runs", path)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if len(runs) == 1 {
		name = runs[0].Name
	}
	return compare.Side{Name: name, Runs: runs}, nil
}

// oneName parses a command that takes exactly one name and the common
// flags, and connects to the cluster.
func oneName(cmd, what, defaultOutput string, args []string) (*cluster, common, string, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, defaultOutput)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, o, "", err
	}
	if len(pos) != 1 {
		return nil, o, "", usageError{cmd + " needs a " + what + " name"}
	}
	k, err := connect(o)
	if err != nil {
		return nil, o, "", err
	}
	return k, o, pos[0], nil
}

func cmdReport(ctx context.Context, args []string, stdout, _ io.Writer) error {
	k, o, name, err := oneName("report", "COMPARISON", "html", args)
	if err != nil {
		return err
	}
	reports, err := k.comparisonReports(ctx, name)
	if err != nil {
		return err
	}
	if o.output != "html" {
		for _, rep := range reports {
			if err := compare.Render(stdout, rep, o.output); err != nil {
				return err
			}
		}
		return nil
	}
	return compare.RenderHTML(stdout, reports)
}

func cmdResults(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("results", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, "json")
	series := fs.Bool("series", false, "with -o csv: the time series of every measurement (one row per interval and value) instead of its metrics")
	stages := fs.Bool("stages", false, "with -o csv: the stages of every measurement that ramped through them (k6 stages; one row per stage and metric) instead of its metrics")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{"results needs one or more RUN names"}
	}
	k, err := connect(o)
	if err != nil {
		return err
	}
	var runs []compare.Run
	for _, name := range pos {
		r, err := k.fullRun(ctx, name)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	switch o.output {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if len(runs) == 1 {
			return enc.Encode(runs[0])
		}
		return enc.Encode(runs)
	case "csv":
		if *series {
			return compare.WriteSeriesCSV(stdout, runs)
		}
		if *stages {
			return compare.WriteStagesCSV(stdout, runs)
		}
		return compare.WriteMetricsCSV(stdout, runs)
	}
	return usageError{fmt.Sprintf("results: unknown output %q (json or csv)", o.output)}
}

func cmdLogs(ctx context.Context, args []string, stdout, _ io.Writer) error {
	k, _, name, err := oneName("logs", "RUN", "", args)
	if err != nil {
		return err
	}
	r, err := k.run(ctx, name)
	if err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := k.c.List(ctx, pods, client.InNamespace(k.namespace), client.MatchingLabels{benchv1.LabelRunUID: string(r.UID)}); err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		return fmt.Errorf("run %s has no pods left (cleanup %s deletes its Jobs after the run)", r.Name, r.Spec.Cleanup)
	}
	for _, p := range pods.Items {
		if _, ok := p.Labels[benchv1.LabelJob]; !ok {
			continue
		}
		fmt.Fprintf(stdout, "==> %s (%s, node %s) <==\n", p.Name, p.Labels[benchv1.LabelRole], p.Spec.NodeName)
		raw, err := k.cs.CoreV1().Pods(k.namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: specs.LoadgenName}).DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(stdout, "(no log: %v)\n", err)
			continue
		}
		_, _ = stdout.Write(raw)
	}
	return nil
}
