package specs

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The remap rule of --image-registry (docs/install.md, "Air-gapped
// installs"): the registry host goes, the repository's path, tag and
// digest stay, Docker Hub's short names are library/ ones.
func TestRemapImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct{ ref, registry, want, qualified string }{
		{"postgres:17", "", "postgres:17", "docker.io/library/postgres:17"},
		{"postgres:17", "registry.internal", "registry.internal/library/postgres:17", ""},
		{"postgres:17", "registry.internal:5000/mirror", "registry.internal:5000/mirror/library/postgres:17", ""},
		{"postgres:17", "registry.internal:5000/mirror/", "registry.internal:5000/mirror/library/postgres:17", ""},
		{"postgres", "registry.internal", "registry.internal/library/postgres", "docker.io/library/postgres"},
		{"postgres@" + digest, "r.example", "r.example/library/postgres@" + digest, "docker.io/library/postgres@" + digest},
		{"postgres:17@" + digest, "r.example", "r.example/library/postgres:17@" + digest, ""},
		{"grafana/k6:1.0.0", "r.example", "r.example/grafana/k6:1.0.0", "docker.io/grafana/k6:1.0.0"},
		{"docker.io/postgres:17", "r.example", "r.example/library/postgres:17", "docker.io/library/postgres:17"},
		{"docker.io/library/postgres:17", "r.example", "r.example/library/postgres:17", "docker.io/library/postgres:17"},
		{"index.docker.io/grafana/k6:1.0.0", "r.example", "r.example/grafana/k6:1.0.0", "docker.io/grafana/k6:1.0.0"},
		{"ghcr.io/dbperf-io/ycsb:0.17.0", "r.example/m", "r.example/m/dbperf-io/ycsb:0.17.0", "ghcr.io/dbperf-io/ycsb:0.17.0"},
		{"localhost:5000/tool:1", "r.example", "r.example/tool:1", "localhost:5000/tool:1"},
		{"localhost/tool:1", "r.example", "r.example/tool:1", "localhost/tool:1"},
		{"10.0.0.1:5000/a/b/c:1", "r.example", "r.example/a/b/c:1", "10.0.0.1:5000/a/b/c:1"},
		{"quay.io/org/img@" + digest, "r.example:443", "r.example:443/org/img@" + digest, ""},
	} {
		if got := RemapImage(c.ref, c.registry); got != c.want {
			t.Errorf("RemapImage(%q, %q) = %q, want %q", c.ref, c.registry, got, c.want)
		}
		if c.qualified != "" {
			if got := QualifiedImage(c.ref); got != c.qualified {
				t.Errorf("QualifiedImage(%q) = %q, want %q", c.ref, got, c.qualified)
			}
		}
	}
}

func TestValidateRegistry(t *testing.T) {
	for _, ok := range []string{"registry.internal", "registry.internal:5000", "registry.internal:5000/mirror", "localhost", "localhost:5000/a/b", "10.0.0.1:5000", "r.example/m/"} {
		if err := ValidateRegistry(ok); err != nil {
			t.Errorf("ValidateRegistry(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "mirror", "mirror/x", "https://r.example", "r.example/Mirror", "r.example/m:1", "r.example/m@sha256:00", "r example"} {
		if err := ValidateRegistry(bad); err == nil {
			t.Errorf("ValidateRegistry(%q) accepted it", bad)
		}
	}
}

func TestImageAllowed(t *testing.T) {
	for _, c := range []struct {
		ref     string
		allowed []string
		want    bool
	}{
		{"postgres:17", nil, true},
		{"postgres:17", []string{"registry.internal/"}, false},
		{"postgres:17", []string{"docker.io/library/postgres:"}, true}, // qualified
		{"postgres:17", []string{"postgres:"}, true},                   // as written
		{"registry.internal/library/mysql:8.4", []string{"registry.internal/"}, true},
		{"registry.internal.evil/x:1", []string{"registry.internal/"}, false},
	} {
		if got := ImageAllowed(c.ref, c.allowed); got != c.want {
			t.Errorf("ImageAllowed(%q, %v) = %v, want %v", c.ref, c.allowed, got, c.want)
		}
	}
}

// No two default images land on one name after a remap (images of
// different registries with the same path would).
func TestDefaultTargetImagesStayDistinctRemapped(t *testing.T) {
	seen := map[string]string{}
	for field, img := range DefaultTargetImages() {
		r := RemapImage(img, "r.example")
		if other, ok := seen[r]; ok {
			t.Errorf("%s and %s both remap to %s", field, other, r)
		}
		seen[r] = field
	}
}

func airgapRun(target benchv1.TargetSpec, own ...string) *benchv1.BenchmarkRun {
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: "uid-1"},
		Spec: benchv1.BenchmarkRunSpec{Target: target}}
	for _, n := range own {
		run.Spec.ImagePullSecrets = append(run.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: n})
	}
	return run
}

// Resolve fills the empty image fields with remapped defaults, keeps the
// spec's own images as written, and puts the manager's pull secrets first;
// the run it was given is untouched.
func TestResolveRemapsOnlyDefaults(t *testing.T) {
	im := Images{Registry: "registry.internal/m", PullSecrets: []string{"mirror", "own"}}
	run := airgapRun(benchv1.TargetSpec{ClickHouse: &benchv1.ClickHouseTarget{
		ServerTarget: benchv1.ServerTarget{Image: "my.registry/clickhouse:1"}, Keeper: &benchv1.ClickHouseKeeper{}}}, "own", "extra")
	run.Spec.Workload.Image = ""
	built, err := im.Resolve(run, "grafana/k6:1.0.0", "registry.internal/m/dbperf-io/dbperf-runner:v1")
	if err != nil {
		t.Fatal(err)
	}
	if got := built.Spec.Target.ClickHouse.Image; got != "my.registry/clickhouse:1" {
		t.Errorf("the spec's image became %s", got)
	}
	if got, want := built.Spec.Target.ClickHouse.Keeper.Image, "registry.internal/m/clickhouse/clickhouse-keeper:25.8"; got != want {
		t.Errorf("keeper image %s, want %s", got, want)
	}
	if got, want := built.Spec.Workload.Image, "registry.internal/m/grafana/k6:1.0.0"; got != want {
		t.Errorf("workload image %s, want %s", got, want)
	}
	var names []string
	for _, r := range built.Spec.ImagePullSecrets {
		names = append(names, r.Name)
	}
	if want := []string{"mirror", "own", "extra"}; !slices.Equal(names, want) {
		t.Errorf("pull secrets %v, want %v", names, want)
	}
	if run.Spec.Target.ClickHouse.Keeper.Image != "" || run.Spec.Workload.Image != "" || len(run.Spec.ImagePullSecrets) != 2 {
		t.Errorf("Resolve changed the run: %+v", run.Spec)
	}

	// No registry: the defaults as they are.
	built, err = Images{}.Resolve(airgapRun(benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{}}), "", "x.io/runner:1")
	if err != nil {
		t.Fatal(err)
	}
	if built.Spec.Target.MySQL.Image != DefaultMySQLImage || built.Spec.Workload.Image != "" || built.Spec.ImagePullSecrets != nil {
		t.Errorf("without a registry: %+v", built.Spec)
	}
}

// A default image (after the remap) or the runner image outside the
// allow-list is an error naming the image, the field or flag, and the flags.
func TestResolveChecksDefaultsAgainstTheAllowList(t *testing.T) {
	run := airgapRun(benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}})
	im := Images{Allowed: []string{"registry.internal/"}}
	_, err := im.Resolve(run, "", "registry.internal/runner:1")
	var na *ImageNotAllowedError
	if !errors.As(err, &na) || na.Image != DefaultValkeyImage || na.Field != "spec.target.valkey.image" {
		t.Fatalf("err = %v, want the valkey default refused", err)
	}
	for _, w := range []string{DefaultValkeyImage, "spec.target.valkey.image", "--allowed-images", "--image-registry", "registry.internal/"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %s", err, w)
		}
	}
	if _, err := im.Resolve(run, "", "ghcr.io/dbperf-io/dbperf-runner:v1"); !errors.As(err, &na) || na.Field != "--runner-image" {
		t.Errorf("the runner image outside the list: %v", err)
	}
	// Remapped into the list, the same run passes; an image the spec names
	// is admission's to check, not the manager's.
	im.Registry = "registry.internal"
	if _, err := im.Resolve(run, "", "registry.internal/runner:1"); err != nil {
		t.Errorf("remapped: %v", err)
	}
	run.Spec.Target.Valkey.Image = "elsewhere.io/valkey:8"
	if _, err := (Images{Allowed: []string{"registry.internal/"}}).Resolve(run, "", "registry.internal/runner:1"); err != nil {
		t.Errorf("an image written in the spec: %v", err)
	}
}

// Every pod a run creates carries the resolved pull secrets: the workload
// Job's, the servers' StatefulSet's, Valkey's cluster-creating Job's, and
// CloudNativePG's Cluster.
func TestPodsCarryThePullSecrets(t *testing.T) {
	want := []corev1.LocalObjectReference{{Name: "mirror"}, {Name: "own"}}
	check := func(what string, got []corev1.LocalObjectReference) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: imagePullSecrets %v, want %v", what, got, want)
		}
	}
	run, err := Images{Registry: "r.example", PullSecrets: []string{"mirror"}}.Resolve(
		airgapRun(benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{Cluster: &benchv1.ValkeyCluster{Shards: 3}}}, "own"), "redis:7.4", "r.example/runner:1")
	if err != nil {
		t.Fatal(err)
	}
	job := Job(JobParams{Run: run, Name: "j", Role: benchv1.RoleLoadgen, Image: run.Spec.Workload.Image, RunnerImage: "r.example/runner:1"})
	check("workload Job", job.Spec.Template.Spec.ImagePullSecrets)
	if got := job.Spec.Template.Spec.Containers[0].Image; got != "r.example/library/redis:7.4" {
		t.Errorf("workload Job image %s", got)
	}
	s := ValkeyServer(run)
	sts := s.StatefulSet()
	check("server StatefulSet", sts.Spec.Template.Spec.ImagePullSecrets)
	if got := sts.Spec.Template.Spec.Containers[0].Image; got != "r.example/valkey/valkey:8.1" {
		t.Errorf("server image %s", got)
	}
	check("Valkey cluster Job", NewValkeyCluster(run).CreateJob().Spec.Template.Spec.ImagePullSecrets)
	pg := airgapRun(benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{}})
	pg.Spec.ImagePullSecrets = want
	cluster, err := CNPGCluster(pg, false)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "imagePullSecrets")
	if len(got) != 2 || got[0].(map[string]any)["name"] != "mirror" || got[1].(map[string]any)["name"] != "own" {
		t.Errorf("CloudNativePG Cluster imagePullSecrets %v", got)
	}
	if _, ok := cluster.Object["spec"].(map[string]any)["imageName"]; ok {
		t.Error("CloudNativePG Cluster names an image: its default is CloudNativePG's")
	}
}

// Every target kind with an image field of its own registers its default:
// a kind added without one would escape the remap and the allow-list.
func TestEveryTargetImageFieldHasItsDefault(t *testing.T) {
	got := DefaultTargetImages()
	typ := reflect.TypeOf(benchv1.TargetSpec{})
	checked := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			continue
		}
		img, ok := f.Type.Elem().FieldByName("Image")
		if !ok || img.Type.Kind() != reflect.String {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		field := "spec.target." + name + ".image"
		if got[field] == "" {
			t.Errorf("%s has no default image registered (addDefaultImage in its target_<kind>.go)", field)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("checked %d kinds: is the test reading TargetSpec?", checked)
	}
	if got["spec.target.clickhouse.keeper.image"] != DefaultClickHouseKeeperImage {
		t.Errorf("the keeper's default: %v", got)
	}
}
