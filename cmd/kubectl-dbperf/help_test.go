package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/internal/version"
)

// Every command's -h and --help print its usage and flags and succeed,
// without a cluster; so does `help COMMAND`.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				if err := run(context.Background(), args, &stdout, &stderr); err != nil {
					t.Fatalf("%v", err)
				}
				for _, want := range []string{"Usage:\n  kubectl dbperf " + c.name + " ", "Flags:", "-namespace"} {
					if !strings.Contains(stdout.String(), want) {
						t.Errorf("no %q in\n%s", want, stdout.String())
					}
				}
			})
		}
	}
}

// The plugin's usage lists every command, and compare's help gives the
// criteria's defaults from internal/stats.
func TestUsageListsEveryCommandAndTheDefaults(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"help"}, &stdout, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(stdout.String(), "kubectl dbperf "+c.name+" ") {
			t.Errorf("the usage does not list %s:\n%s", c.name, stdout.String())
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"compare", "--help"}, &stdout, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("(default %v)", stats.DefaultAlpha), fmt.Sprintf("(default %v)", stats.DefaultMinEffectPercent),
		fmt.Sprintf("(default %q)", stats.DefaultCorrection), fmt.Sprintf("(default %q)", stats.DefaultOperationCorrection)} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("compare --help does not say %s:\n%s", want, stdout.String())
		}
	}
}

// `kubectl dbperf version` and --version print the build's version alone,
// for scripts and for krew users comparing it with a release.
func TestVersionPrintsTheBuildsVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{arg}, &stdout, &stdout); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if got := stdout.String(); got != version.Version+"\n" {
			t.Errorf("%s printed %q, want %q", arg, got, version.Version+"\n")
		}
	}
}
