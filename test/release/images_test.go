package release

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/dbperf-io/dbperf-operator/internal/version"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// project is where the project's own images live.
const project = "ghcr.io/dbperf-io/"

// versioned are the images built from this repository's code: their tag is
// the VERSION file's.
var versioned = []string{project + "dbperf-operator", project + "dbperf-runner"}

// releaseVersion is the VERSION file's content.
func releaseVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}

// imageRef is one image named somewhere, and where.
type imageRef struct {
	ref, where string
}

// splitRef splits an image reference into its repository, tag and digest.
func splitRef(ref string) (repo, tag, digest string) {
	repo, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

// imageFlag is a command-line flag that names an image (--runner-image=…).
var imageFlag = regexp.MustCompile(`^--[a-z-]*image=(.+)$`)

// collectImages walks a decoded manifest: the value of every key that
// names an image (image, imageName, runnerImage, …) and every image flag in
// a string list.
func collectImages(v any, path, where string, out *[]imageRef) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			lk := strings.ToLower(k)
			if s, ok := c.(string); ok && (strings.HasSuffix(lk, "image") || strings.HasSuffix(lk, "imagename")) {
				if s != "" {
					*out = append(*out, imageRef{ref: s, where: where + ":" + path + "." + k})
				}
				continue
			}
			collectImages(c, path+"."+k, where, out)
		}
	case []any:
		for _, c := range v {
			if s, ok := c.(string); ok {
				if m := imageFlag.FindStringSubmatch(s); m != nil {
					flag, _, _ := strings.Cut(s, "=")
					*out = append(*out, imageRef{ref: m[1], where: where + ":" + path + "[] " + flag})
				}
				continue
			}
			collectImages(c, path+"[]", where, out)
		}
	}
}

// imagesIn decodes a multi-document YAML stream and collects its images.
func imagesIn(t *testing.T, where string, raw []byte) []imageRef {
	t.Helper()
	var refs []imageRef
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return refs
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		var obj any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if m, ok := obj.(map[string]any); ok {
			kind, _ := m["kind"].(string)
			meta, _ := m["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			collectImages(m, "", where+" "+kind+"/"+name, &refs)
		}
	}
}

func command(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func kubectl(t *testing.T) string {
	t.Helper()
	if k := os.Getenv("KUBECTL"); k != "" {
		return k
	}
	return filepath.Join(testutil.NeedEnv(t, "KUBEBUILDER_ASSETS"), "kubectl")
}

// shipped renders every manifest the project ships, by where it came from.
func shipped(t *testing.T) map[string][]imageRef {
	t.Helper()
	root := testutil.RepoRoot()
	helm, chart := testutil.NeedEnv(t, "HELM"), filepath.Join(root, "charts", "dbperf-operator")
	out := map[string][]imageRef{
		"helm template (defaults)": imagesIn(t, "chart", command(t, helm, "template", "rel", chart, "-n", "dbperf-system")),
		// Every optional object on, so that an image added to one of them is seen.
		"helm template (every switch on)": imagesIn(t, "chart", command(t, helm, "template", "rel", chart, "-n", "dbperf-system",
			"--set", "metrics.serviceMonitor.enabled=true", "--set", "telemetry.resources=kubelet", "--set", "admission.allowedImages[0]=registry.internal/")),
		"kubectl kustomize config/default": imagesIn(t, "config/default", command(t, kubectl(t), "kustomize", filepath.Join(root, "config", "default"))),
	}
	samples, err := filepath.Glob(filepath.Join(root, "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	published, _ := filepath.Glob(filepath.Join(root, "config", "samples", "published", "*.yaml"))
	for _, f := range append(samples, published...) {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		out["config/samples"] = append(out["config/samples"], imagesIn(t, rel, raw)...)
	}
	return out
}

// Every image a shipped manifest names has a tag (or a digest) other than
// latest, and the project's own images the VERSION file's tag; the chart
// and config/default both name the manager and the runner image.
func TestShippedManifestsPinTheRelease(t *testing.T) {
	v := releaseVersion(t)
	built := imagesBuilt(t)
	for source, refs := range shipped(t) {
		seen := map[string]bool{}
		for _, r := range refs {
			checkPinned(t, r, v, built)
			repo, _, _ := splitRef(r.ref)
			seen[repo] = true
		}
		if source != "config/samples" {
			for _, want := range versioned {
				if !seen[want] {
					t.Errorf("%s names no %s image (found %v): the check would not see it", source, want, refs)
				}
			}
		}
	}
}

// checkPinned: a reference names a tag or digest, not latest; the
// project's images are ones `make docker-build` builds, at VERSION where
// they are built from this repository.
func checkPinned(t *testing.T, r imageRef, v string, built []string) {
	t.Helper()
	repo, tag, digest := splitRef(r.ref)
	switch {
	case tag == "" && digest == "":
		t.Errorf("%s: image %s has no tag: it means :latest", r.where, r.ref)
	case tag == "latest":
		t.Errorf("%s: image %s is :latest", r.where, r.ref)
	case slices.Contains(versioned, repo) && tag != v:
		t.Errorf("%s: image %s, want the tag %s of the VERSION file", r.where, r.ref, v)
	case strings.HasPrefix(r.ref, project) && !slices.Contains(built, r.ref):
		t.Errorf("%s: image %s is the project's, but `make docker-build` builds %v", r.where, r.ref, built)
	}
}

// imagesBuilt are the images `make docker-build` builds (`make images`).
func imagesBuilt(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("make", "-s", "--no-print-directory", "images")
	cmd.Dir = testutil.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make images: %v", err)
	}
	return strings.Fields(string(out))
}

// The defaults compiled into the binaries are pinned as well: the runner
// image's tag (internal/version, kept equal to VERSION by hack/versiongen),
// every tool's default image, and the targets' default images.
func TestDefaultImagesArePinned(t *testing.T) {
	v := releaseVersion(t)
	if version.Release != v || version.Version != v {
		t.Errorf("internal/version says Release %s, Version %s; VERSION says %s: run `make manifests`", version.Release, version.Version, v)
	}
	built := imagesBuilt(t)
	want := []string{project + "dbperf-operator:" + v, project + "dbperf-runner:" + v}
	var defaults []imageRef
	for _, tool := range registry.Tools() {
		if img := tool.Workload.DefaultImage(); img != "" {
			defaults = append(defaults, imageRef{ref: img, where: "the " + tool.Field + " workload's default image"})
			if strings.HasPrefix(img, project) {
				want = append(want, img)
			}
		}
	}
	defaults = append(defaults, targetDefaults(t)...)
	for _, r := range defaults {
		checkPinned(t, r, v, built)
	}
	if !slices.Equal(built, want) {
		t.Errorf("`make images` lists %v, want the manager, the runner and the project's tool images %v", built, want)
	}
	if len(defaults) < 8 {
		t.Errorf("only %d default images found: %v", len(defaults), defaults)
	}
}

// defaultImageConst is a Go declaration of a default image (DefaultMySQLImage = "mysql:8.4").
var defaultImageConst = regexp.MustCompile(`\b(Default\w*Image)\s*=\s*"([^"]+)"`)

// targetDefaults are the Default…Image constants of the code the manager
// builds target pods with.
func targetDefaults(t *testing.T) []imageRef {
	t.Helper()
	var out []imageRef
	for _, dir := range []string{"internal", "controllers"} {
		err := filepath.WalkDir(filepath.Join(testutil.RepoRoot(), dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range defaultImageConst.FindAllSubmatch(src, -1) {
				out = append(out, imageRef{ref: string(m[2]), where: filepath.Base(path) + ": " + string(m[1])})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestSplitRef(t *testing.T) {
	for ref, want := range map[string][3]string{
		"postgres":                          {"postgres", "", ""},
		"postgres:17":                       {"postgres", "17", ""},
		"registry:5000/x/postgres":          {"registry:5000/x/postgres", "", ""},
		"registry:5000/x/postgres:17":       {"registry:5000/x/postgres", "17", ""},
		"ghcr.io/org/tool@sha256:abc":       {"ghcr.io/org/tool", "", "sha256:abc"},
		"ghcr.io/org/tool:1.0@sha256:abc":   {"ghcr.io/org/tool", "1.0", "sha256:abc"},
		"ghcr.io/dbperf-io/dbperf-runner:x": {"ghcr.io/dbperf-io/dbperf-runner", "x", ""},
	} {
		repo, tag, digest := splitRef(ref)
		if got := [3]string{repo, tag, digest}; got != want {
			t.Errorf("splitRef(%q) = %q, want %q", ref, got, want)
		}
	}
}

// The walk finds images where manifests put them: container images, the
// run spec's image fields and image flags in argument lists.
func TestCollectImagesSeesEveryPlace(t *testing.T) {
	raw := []byte(`kind: Deployment
metadata: {name: m}
spec:
  template:
    spec:
      initContainers: [{name: a, image: "a:1"}]
      containers: [{name: b, image: "b:2", args: ["--leader-elect", "--runner-image=c:3"]}]
---
kind: BenchmarkRun
metadata: {name: r}
spec:
  target: {postgres: {imageName: "d:4"}}
  workload: {pgbench: {}, image: "e:5"}
`)
	var got []string
	for _, r := range imagesIn(t, "test", raw) {
		got = append(got, r.ref)
	}
	slices.Sort(got)
	if want := []string{"a:1", "b:2", "c:3", "d:4", "e:5"}; !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
