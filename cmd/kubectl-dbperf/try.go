package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/dbperf-io/dbperf-operator/internal/smoke"
)

// cmdTry writes the smoke form of sample files (internal/smoke: each tool's
// workload shortened, one repetition and one run per variant, shared
// nodes), saying on stderr what it shrank; with --apply it applies them to
// the cluster instead (server-side apply), ready to try in a minute or two.
func cmdTry(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("try", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, "yaml")
	apply := fs.Bool("apply", false, "apply the smoke forms to the cluster instead of printing them")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{"try needs one or more sample FILEs (- for standard input)"}
	}
	var objs []smoke.Object
	for _, f := range pos {
		var r io.Reader = os.Stdin
		if f != "-" {
			fh, err := os.Open(f)
			if err != nil {
				return err
			}
			defer fh.Close()
			r = fh
		}
		got, err := smoke.ShrinkYAML(r)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, got...)
	}
	for _, ob := range objs {
		if len(ob.Changes) > 0 {
			fmt.Fprintf(stderr, "%s %s: %s\n", ob.Kind, ob.Name, strings.Join(ob.Changes, "; "))
		}
	}
	if !*apply {
		for i, ob := range objs {
			if i > 0 {
				fmt.Fprintln(stdout, "---")
			}
			if _, err := stdout.Write(ob.YAML); err != nil {
				return err
			}
		}
		return nil
	}
	k, err := connect(o)
	if err != nil {
		return err
	}
	for _, ob := range objs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(ob.YAML, &u.Object); err != nil {
			return err
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(k.namespace)
		}
		if err := k.c.Patch(ctx, u, client.Apply, client.FieldOwner("kubectl-dbperf-try"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", ob.Kind, ob.Name, err)
		}
		fmt.Fprintf(stdout, "%s/%s applied (smoke form)\n", strings.ToLower(ob.Kind), ob.Name)
	}
	return nil
}
