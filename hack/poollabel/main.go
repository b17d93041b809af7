// Command poollabel writes the kustomize components that change the node
// label the samples choose their pools by. The samples select pools with
// nodeSelector {pool: <name>}, the label of the embedded cluster's nodes and
// of many self-managed clusters; GKE, EKS and AKS name a node's pool with a
// label of their own. Each component moves every `pool` key of every
// nodeSelector of every sample to the cloud's key, keeping the pool names:
//
//	config/samples/pool-label/gke   cloud.google.com/gke-nodepool
//	config/samples/pool-label/eks   eks.amazonaws.com/nodegroup
//	config/samples/pool-label/aks   kubernetes.azure.com/agentpool
//
// A kustomization that lists samples (config/samples, its published/ or
// getting-started/ directory) and one of these under `components:` renders
// the samples with that key (docs/getting-started.md). A patch whose sample
// is not among the kustomization's resources does nothing, so one component
// serves any selection of samples.
//
//	go run ./hack/poollabel                              # the three components (make manifests)
//	go run ./hack/poollabel -key example.com/pool -out DIR  # a component for another key
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// SampleKey is the label key the samples are written with.
const SampleKey = "pool"

// Clouds are the components written by default: directory name and key.
var Clouds = []struct{ Name, Key string }{
	{"gke", "cloud.google.com/gke-nodepool"},
	{"eks", "eks.amazonaws.com/nodegroup"},
	{"aks", "kubernetes.azure.com/agentpool"},
}

// SampleDirs are the directories of samples, relative to the repository.
var SampleDirs = []string{"config/samples", "config/samples/getting-started", "config/samples/published"}

// ComponentsDir is where the components are written.
const ComponentsDir = "config/samples/pool-label"

func main() {
	root := flag.String("root", ".", "the repository")
	key := flag.String("key", "", "write one component for this label key instead of the clouds'")
	out := flag.String("out", "", "the directory of that component (with -key)")
	flag.Parse()
	if err := run(*root, *key, *out); err != nil {
		fmt.Fprintln(os.Stderr, "poollabel:", err)
		os.Exit(1)
	}
}

func run(root, key, out string) error {
	selectors, err := Find(root)
	if err != nil {
		return err
	}
	if key != "" {
		if out == "" {
			return fmt.Errorf("-key needs -out, the directory to write the component to")
		}
		return write(filepath.Join(out, "kustomization.yaml"), Component(selectors, key))
	}
	for _, c := range Clouds {
		if err := write(filepath.Join(root, ComponentsDir, c.Name, "kustomization.yaml"), Component(selectors, c.Key)); err != nil {
			return err
		}
	}
	return nil
}

func write(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o644)
}

// Selector is a nodeSelector of a sample that names a pool by SampleKey.
type Selector struct {
	File, Kind, Name string
	// Path is the JSON pointer of the nodeSelector map.
	Path string
}

// Find returns every nodeSelector of the samples that holds SampleKey, in
// file order, then document order, then path order.
func Find(root string) ([]Selector, error) {
	var out []Selector
	seen := map[string]string{}
	for _, dir := range SampleDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			rel, _ := filepath.Rel(root, f)
			for _, doc := range bytes.Split(raw, []byte("\n---")) {
				var obj map[string]any
				if err := yaml.Unmarshal(doc, &obj); err != nil {
					return nil, fmt.Errorf("%s: %w", rel, err)
				}
				kind, _ := obj["kind"].(string)
				meta, _ := obj["metadata"].(map[string]any)
				name, _ := meta["name"].(string)
				if !strings.HasPrefix(kind, "Benchmark") {
					continue
				}
				// A patch selects its object by kind and name, so two
				// samples with one name would receive each other's moves.
				id := kind + "/" + name
				if other, ok := seen[id]; ok {
					return nil, fmt.Errorf("%s and %s both hold %s: a component's patches select by kind and name", other, rel, id)
				}
				seen[id] = rel
				for _, p := range nodeSelectors(obj, "") {
					out = append(out, Selector{File: rel, Kind: kind, Name: name, Path: p})
				}
			}
		}
	}
	return out, nil
}

// nodeSelectors are the JSON pointers of the maps named nodeSelector under
// v that hold SampleKey, in key order.
func nodeSelectors(v any, path string) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			p := path + "/" + escape(k)
			if sel, ok := t[k].(map[string]any); ok && k == "nodeSelector" {
				if _, has := sel[SampleKey]; has {
					out = append(out, p)
				}
				continue
			}
			out = append(out, nodeSelectors(t[k], p)...)
		}
	case []any:
		for i, e := range t {
			out = append(out, nodeSelectors(e, fmt.Sprintf("%s/%d", path, i))...)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escape makes a map key a JSON pointer token (RFC 6901).
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// Component is the kustomization of a component that moves SampleKey to key
// in every selector: one patch per object, one move per selector.
func Component(selectors []Selector, key string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated by hack/poollabel from the samples. DO NOT EDIT: run `make manifests`.\n"+
		"# The samples' nodeSelectors name their pools by the label %q; this component\n"+
		"# moves each to %q, keeping the pool names (docs/getting-started.md).\n", SampleKey, key)
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n")
	for i := 0; i < len(selectors); {
		s := selectors[i]
		fmt.Fprintf(&b, "- target: {group: bench.dbperf.io, kind: %s, name: %s}  # %s\n  patch: |-\n", s.Kind, s.Name, s.File)
		for ; i < len(selectors) && selectors[i].Kind == s.Kind && selectors[i].Name == s.Name; i++ {
			p := selectors[i].Path
			fmt.Fprintf(&b, "    - {op: move, from: %s/%s, path: %s/%s}\n", p, escape(SampleKey), p, escape(key))
		}
	}
	return b.Bytes()
}
