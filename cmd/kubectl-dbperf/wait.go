package main

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// The exit codes of `kubectl dbperf wait` (docs/ci.md): what a pipeline
// branches on. 1 (any error: the API server unreachable, the object not
// found, the timeout passed) and 2 (usage) are every command's.
const (
	exitPass       = 0 // Pass or Improvement; a run Succeeded
	exitError      = 1
	exitRegression = 3 // Regression
	exitNotTrusted = 4 // Inconclusive or Invalid; a run Invalid or Failed
	exitPending    = 5 // --no-wait, and no verdict yet
)

// exitError ends the plugin with its code after printing its message.
type exitStatus struct {
	code int
	msg  string
}

func (e exitStatus) Error() string { return e.msg }

// outcome is what wait found: a verdict (done) or why not yet.
type outcome struct {
	done    bool
	code    int
	verdict string
	lines   []string
	// comparison is the comparison's name when the object is one (its
	// report gives the JUnit file).
	comparison string
	run        *benchv1.BenchmarkRun
}

func cmdWait(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, "table")
	timeout := fs.Duration("timeout", 24*time.Hour, "give up (exit 1) after this long")
	poll := fs.Duration("poll", 10*time.Second, "how often the object is read")
	noWait := fs.Bool("no-wait", false, "return at once: the verdict's exit code, or 5 when there is none yet")
	junit := fs.String("junit", "", "write a JUnit XML report here: a test case per judged metric of a comparison, per measurement of a run")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"wait needs a COMPARISON or RUN name"}
	}
	if *poll <= 0 {
		return usageError{"--poll must be positive"}
	}
	k, err := connect(o)
	if err != nil {
		return err
	}
	return k.wait(ctx, pos[0], waitOptions{timeout: *timeout, poll: *poll, noWait: *noWait, junit: *junit}, stdout)
}

type waitOptions struct {
	timeout, poll time.Duration
	noWait        bool
	junit         string
}

// wait reads the comparison (or run) until it has a verdict, prints it and
// returns the exit status of its verdict.
func (k *cluster) wait(ctx context.Context, name string, o waitOptions, stdout io.Writer) error {
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	for {
		out, err := k.verdictOf(ctx, name)
		if err != nil {
			return err
		}
		if out.done {
			for _, l := range out.lines {
				fmt.Fprintln(stdout, l)
			}
			if o.junit != "" {
				if err := k.writeJUnit(ctx, o.junit, name, out); err != nil {
					return fmt.Errorf("while writing the JUnit report: %w", err)
				}
			}
			if out.code == exitPass {
				return nil
			}
			return exitStatus{code: out.code, msg: fmt.Sprintf("%s: %s", name, out.verdict)}
		}
		if o.noWait {
			return exitStatus{code: exitPending, msg: fmt.Sprintf("%s: no verdict yet: %s", name, strings.Join(out.lines, "; "))}
		}
		select {
		case <-ctx.Done():
			return exitStatus{code: exitError, msg: fmt.Sprintf("%s: no verdict after %s: %s", name, o.timeout, strings.Join(out.lines, "; "))}
		case <-time.After(o.poll):
		}
	}
}

// verdictOf reads the object of that name: a BenchmarkComparison, else a
// BenchmarkRun.
func (k *cluster) verdictOf(ctx context.Context, name string) (outcome, error) {
	key := client.ObjectKey{Namespace: k.namespace, Name: name}
	cmp := &benchv1.BenchmarkComparison{}
	err := k.c.Get(ctx, key, cmp)
	switch {
	case err == nil:
		return comparisonOutcome(cmp), nil
	case !apierrors.IsNotFound(err):
		return outcome{}, fmt.Errorf("BenchmarkComparison %s/%s: %w", k.namespace, name, err)
	}
	run := &benchv1.BenchmarkRun{}
	if err := k.c.Get(ctx, key, run); err != nil {
		if apierrors.IsNotFound(err) {
			return outcome{}, fmt.Errorf("neither a BenchmarkComparison nor a BenchmarkRun %s in namespace %s", name, k.namespace)
		}
		return outcome{}, fmt.Errorf("BenchmarkRun %s/%s: %w", k.namespace, name, err)
	}
	return runOutcome(run), nil
}

func comparisonOutcome(cmp *benchv1.BenchmarkComparison) outcome {
	st := cmp.Status
	out := outcome{comparison: cmp.Name, verdict: string(st.Verdict)}
	switch st.Verdict {
	case "":
		if st.Phase.Terminal() {
			// Ended without a verdict: the cluster's problem (a name
			// taken by another object), not the change's.
			return outcome{done: true, code: exitError, verdict: "ended without a verdict (" + string(st.Phase) + ")",
				lines: []string{fmt.Sprintf("BenchmarkComparison %s ended %s without a verdict: %s", cmp.Name, st.Phase, comparedMessage(cmp))}}
		}
		out.lines = []string{fmt.Sprintf("phase %s, progress %s", orDash(string(st.Phase)), orDash(st.Progress))}
		return out
	case benchv1.OverallPass, benchv1.OverallImprovement:
		out.code = exitPass
	case benchv1.OverallRegression:
		out.code = exitRegression
	default:
		out.code = exitNotTrusted
	}
	out.done = true
	out.lines = append([]string{fmt.Sprintf("BenchmarkComparison %s: %s", cmp.Name, st.Verdict)}, strings.Split(st.Headline, "\n")...)
	if st.ReportConfigMap != "" {
		out.lines = append(out.lines, "report: kubectl dbperf compare "+cmp.Name+" (ConfigMap "+st.ReportConfigMap+")")
	}
	return out
}

func comparedMessage(cmp *benchv1.BenchmarkComparison) string {
	for _, c := range cmp.Status.Conditions {
		if c.Type == benchv1.ConditionCompared {
			return c.Reason + ": " + c.Message
		}
	}
	return "no Compared condition"
}

func runOutcome(run *benchv1.BenchmarkRun) outcome {
	st := run.Status
	out := outcome{run: run, verdict: string(st.Phase)}
	if !st.Phase.Terminal() {
		out.lines = []string{fmt.Sprintf("phase %s", orDash(string(st.Phase)))}
		return out
	}
	out.done = true
	out.code = exitNotTrusted
	if st.Phase == benchv1.PhaseSucceeded {
		out.code = exitPass
	}
	out.lines = []string{fmt.Sprintf("BenchmarkRun %s: %s", run.Name, st.Phase)}
	for _, c := range st.Conditions {
		if c.Status != "True" && c.Message != "" {
			out.lines = append(out.lines, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// JUnit XML, as CI systems read it (the Jenkins/Surefire schema's subset).
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Skipped *junitMessage `xml:"skipped,omitempty"`
	Output  string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the verdict as JUnit XML: a comparison's judged rows a
// test case each (Worse fails, Inconclusive is skipped), a run's
// measurements a test case each (a measurement not Succeeded fails).
func (k *cluster) writeJUnit(ctx context.Context, path, name string, out outcome) error {
	var doc junitSuites
	if out.comparison != "" {
		reports, err := k.comparisonReports(ctx, out.comparison)
		if err != nil && out.verdict != string(benchv1.OverallInvalid) {
			return err
		}
		doc = comparisonJUnit(reports)
		if len(doc.Suites) == 0 { // nothing compared: one failing case says why
			doc.Suites = []junitSuite{{Name: name, Tests: 1, Failures: 1, Cases: []junitCase{{Class: name, Name: "compared",
				Failure: &junitMessage{Message: out.verdict, Text: strings.Join(out.lines, "\n")}}}}}
		}
	} else {
		doc = runJUnit(out.run)
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

func comparisonJUnit(reports []*compare.Report) junitSuites {
	var doc junitSuites
	for _, rep := range reports {
		s := junitSuite{Name: rep.Candidate + " vs " + rep.Baseline}
		for _, row := range rep.Rows {
			if row.Described() || row.Restates != "" {
				continue
			}
			c := junitCase{Class: rep.Candidate + "." + row.StepLabel(), Name: row.Name(),
				Output: fmt.Sprintf("%s: %s → %s %s, Δ %s (CI %s … %s), p %.3g: %s", row.Verdict, fmt.Sprintf("%.4g", row.Baseline.Median), fmt.Sprintf("%.4g", row.Candidate.Median), row.Unit,
					compare.Percent(row.DeltaPercent), compare.Percent(row.CILowPercent), compare.Percent(row.CIHighPercent), float64(row.PAdjusted), row.Reason)}
			switch row.Verdict {
			case stats.Worse:
				c.Failure = &junitMessage{Message: "Worse: Δ " + compare.Percent(row.DeltaPercent), Text: row.Reason}
				s.Failures++
			case stats.Inconclusive:
				c.Skipped = &junitMessage{Message: "Inconclusive: " + row.Reason}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		doc.Suites = append(doc.Suites, s)
	}
	return doc
}

func runJUnit(run *benchv1.BenchmarkRun) junitSuites {
	s := junitSuite{Name: run.Name}
	for _, st := range run.Status.Steps {
		for _, rep := range st.Repetitions {
			c := junitCase{Class: run.Name + "." + st.Name, Name: fmt.Sprintf("repetition %d", rep.Index)}
			if rep.Verdict != benchv1.VerdictSucceeded {
				c.Failure = &junitMessage{Message: string(rep.Verdict), Text: strings.Join(rep.Reasons, "\n")}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
	}
	s.Tests = len(s.Cases)
	return junitSuites{Suites: []junitSuite{s}}
}

// exitCodeOf is the process's exit code for an error a command returned.
func exitCodeOf(err error) (int, bool) {
	var es exitStatus
	if errors.As(err, &es) {
		return es.code, true
	}
	return 0, false
}
