// Command defaultimages prints every image the operator and its chart use
// by default (docs/install.md, "Air-gapped installs"), one a line; with
// -registry, each followed by its name under that registry (the manager's
// --image-registry rule), for a mirror's copy commands:
//
//	go run ./hack/defaultimages -registry registry.internal:5000/mirror |
//	  while read src dst; do crane copy "$src" "$dst"; done
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/version"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

func main() {
	reg := flag.String("registry", "", "print each image beside its name under this registry (host[:port][/path])")
	flag.Parse()
	if err := write(os.Stdout, *reg); err != nil {
		fmt.Fprintln(os.Stderr, "defaultimages:", err)
		os.Exit(1)
	}
}

// defaults are the default images, sorted: the manager's and the runner's
// at this version, every tool's, every target field's.
func defaults() []string {
	set := map[string]bool{
		"ghcr.io/dbperf-io/dbperf-operator:" + version.Version: true,
		"ghcr.io/dbperf-io/dbperf-runner:" + version.Version:   true,
	}
	for _, tool := range registry.Tools() {
		if img := tool.Workload.DefaultImage(); img != "" {
			set[img] = true
		}
	}
	for _, img := range specs.DefaultTargetImages() {
		set[img] = true
	}
	out := make([]string, 0, len(set))
	for img := range set {
		out = append(out, img)
	}
	slices.Sort(out)
	return out
}

func write(w io.Writer, reg string) error {
	if reg != "" {
		if err := specs.ValidateRegistry(reg); err != nil {
			return err
		}
	}
	for _, img := range defaults() {
		line := img
		if reg != "" {
			line += " " + specs.RemapImage(img, reg)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
