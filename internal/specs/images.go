package specs

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// DockerHub is the registry of an image reference that names none.
const DockerHub = "docker.io"

// SplitImage splits an image reference into its registry host and the rest:
// the repository's path with its tag and digest, as a registry serves it.
// The first path component is the registry when it holds a "." or a ":"
// or is "localhost" (the rule of Docker and containerd); otherwise the
// registry is Docker Hub, whose one-component names are its official
// images under library/ ("postgres:17" → "docker.io", "library/postgres:17").
func SplitImage(ref string) (registry, rest string) {
	registry, rest = DockerHub, ref
	if first, path, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		registry, rest = first, path
	}
	if registry == "index.docker.io" {
		registry = DockerHub
	}
	if registry == DockerHub && !strings.Contains(repositoryOf(rest), "/") {
		rest = "library/" + rest
	}
	return registry, rest
}

// repositoryOf is a reference (without registry) without its tag and digest.
func repositoryOf(rest string) string {
	repo, _, _ := strings.Cut(rest, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo
}

// QualifiedImage is a reference with its registry spelled out:
// "postgres:17" → "docker.io/library/postgres:17".
func QualifiedImage(ref string) string {
	registry, rest := SplitImage(ref)
	return registry + "/" + rest
}

// RemapImage replaces the registry of ref by registry (a host, with a port
// and a path if need be), keeping the repository's path, tag and digest:
// with "registry.internal:5000/mirror", "postgres:17" becomes
// "registry.internal:5000/mirror/library/postgres:17" and
// "ghcr.io/dbperf-io/ycsb:0.17.0" "registry.internal:5000/mirror/dbperf-io/ycsb:0.17.0".
// An empty registry leaves ref as it is.
func RemapImage(ref, registry string) string {
	if registry == "" {
		return ref
	}
	_, rest := SplitImage(ref)
	return strings.TrimSuffix(registry, "/") + "/" + rest
}

// registryPattern is a registry host (a name or IPv4 address, a port) and
// an optional path of lower-case components.
var registryPattern = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)

// ValidateRegistry checks a registry to remap default images to. Its host
// must read as one (a "." or a ":" in it, or localhost): "mirror/x" would
// be a Docker Hub repository.
func ValidateRegistry(registry string) error {
	r := strings.TrimSuffix(registry, "/")
	if !registryPattern.MatchString(r) {
		return fmt.Errorf("%q is not a registry: want a host, an optional port and path, such as registry.internal:5000/mirror (no scheme, no tag)", registry)
	}
	host, _, _ := strings.Cut(r, "/")
	if !strings.ContainsAny(host, ".:") && host != "localhost" {
		return fmt.Errorf("%q is not a registry: its host %q has no \".\" or \":\" and is not localhost, so an image under it would be read as Docker Hub's", registry, host)
	}
	return nil
}

// Images is what a cluster asks of the images the operator chooses itself
// (the tools', the targets' and the runner's defaults), from the manager's
// flags: images a user wrote in a spec are never remapped (an allow-list
// checks those at admission).
type Images struct {
	// Registry replaces the registry of every default image (RemapImage);
	// empty: none is remapped.
	Registry string
	// PullSecrets are Secrets of the run's namespace every pod a run
	// creates pulls its images with, before the run's own.
	PullSecrets []string
	// Allowed are prefixes one of which a default image must start with
	// (ImageAllowed); empty: any.
	Allowed []string
}

// Default is a default image as the operator writes it: remapped.
func (im Images) Default(ref string) string { return RemapImage(ref, im.Registry) }

// ImageAllowed says whether ref starts with one of the allowed prefixes, as
// written or with its registry spelled out (QualifiedImage), so that
// "docker.io/library/postgres:" allows "postgres:17". No prefixes allow
// everything.
func ImageAllowed(ref string, allowed []string) bool {
	if len(allowed) == 0 {
		return true
	}
	q := QualifiedImage(ref)
	for _, p := range allowed {
		if strings.HasPrefix(ref, p) || strings.HasPrefix(q, p) {
			return true
		}
	}
	return false
}

// PullSecretRefs are the pull secrets of a run's pods: the manager's, then
// the run's own that are not among them.
func (im Images) PullSecretRefs(own []corev1.LocalObjectReference) []corev1.LocalObjectReference {
	var out []corev1.LocalObjectReference
	seen := map[string]bool{}
	for _, n := range im.PullSecrets {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, corev1.LocalObjectReference{Name: n})
		}
	}
	for _, r := range own {
		if !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r)
		}
	}
	return out
}

// defaultImageField is an image field of a run's target that the operator
// fills with a default when it is empty.
type defaultImageField struct {
	// Field is its path, as admission and the docs name it.
	Field   string
	Default string
	// of is the field in a spec, nil when the spec does not select its kind.
	of func(*benchv1.TargetSpec) *string
}

// targetImageFields are the target's image fields that have a default,
// sorted by field; each kind's builder (target_<kind>.go) adds its own. A
// kind that adds none has no default of the operator's (postgres: left
// empty, CloudNativePG runs its own default image).
var targetImageFields []defaultImageField

// addDefaultImage registers an image field of a target kind and its
// default; of returns nil when a spec does not select the kind.
func addDefaultImage(field, def string, of func(*benchv1.TargetSpec) *string) {
	targetImageFields = append(targetImageFields, defaultImageField{Field: field, Default: def, of: of})
	sort.Slice(targetImageFields, func(i, j int) bool { return targetImageFields[i].Field < targetImageFields[j].Field })
}

// DefaultTargetImages are the targets' default images by the field they
// fill, as the operator has them before any remap.
func DefaultTargetImages() map[string]string {
	out := make(map[string]string, len(targetImageFields))
	for _, f := range targetImageFields {
		out[f.Field] = f.Default
	}
	return out
}

// ImageNotAllowedError is a default image outside the allow-list.
type ImageNotAllowedError struct {
	Image string
	// Field is the spec's field the image fills, or the manager's flag
	// that chose it (--runner-image).
	Field   string
	Allowed []string
}

func (e *ImageNotAllowedError) Error() string {
	fix := "write an allowed image in " + e.Field + ", or remap the default images to an allowed registry (--image-registry, the chart's imageRegistry)"
	what := "the default image " + e.Image + " of " + e.Field
	if strings.HasPrefix(e.Field, "--") {
		what = "the image " + e.Image + " of " + e.Field
		fix = "set " + e.Field + " (the chart's runnerImage) or --image-registry (the chart's imageRegistry) to an allowed one"
	}
	return fmt.Sprintf("%s does not start with one of the allowed prefixes of --allowed-images (the chart's admission.allowedImages): %s; %s",
		what, strings.Join(e.Allowed, ", "), fix)
}

// Resolve is the run as the operator builds its pods: every empty image
// field holding its default image, remapped (the workload's default is
// workloadDefault; "" when the tool has none), and the pods' pull secrets
// (PullSecretRefs) in spec.imagePullSecrets. The run itself is not changed.
// A default image, or the runner image, outside the allow-list is an
// *ImageNotAllowedError; images the spec names are admission's to check.
func (im Images) Resolve(run *benchv1.BenchmarkRun, workloadDefault, runnerImage string) (*benchv1.BenchmarkRun, error) {
	out := run.DeepCopy()
	if !ImageAllowed(runnerImage, im.Allowed) {
		return nil, &ImageNotAllowedError{Image: runnerImage, Field: "--runner-image", Allowed: im.Allowed}
	}
	fill := func(field string, image *string, def string) error {
		if image == nil || *image != "" || def == "" {
			return nil
		}
		*image = im.Default(def)
		if !ImageAllowed(*image, im.Allowed) {
			return &ImageNotAllowedError{Image: *image, Field: field, Allowed: im.Allowed}
		}
		return nil
	}
	if err := fill("spec.workload.image", &out.Spec.Workload.Image, workloadDefault); err != nil {
		return nil, err
	}
	for _, f := range targetImageFields {
		if err := fill(f.Field, f.of(&out.Spec.Target), f.Default); err != nil {
			return nil, err
		}
	}
	out.Spec.ImagePullSecrets = im.PullSecretRefs(run.Spec.ImagePullSecrets)
	return out, nil
}
