package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// platform is one the plugin is released for, with what its binary's
// header says.
type platform struct {
	os, arch string
	elf      elf.Machine
	macho    macho.Cpu
}

var platforms = []platform{
	{os: "linux", arch: "amd64", elf: elf.EM_X86_64},
	{os: "linux", arch: "arm64", elf: elf.EM_AARCH64},
	{os: "darwin", arch: "amd64", macho: macho.CpuAmd64},
	{os: "darwin", arch: "arm64", macho: macho.CpuArm64},
}

// krewPlugin is the part of a krew manifest the test reads.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

// hack/release.sh makes the packaged chart, kubectl-dbperf for the four
// platforms (static, of the right OS and architecture, at VERSION, each
// archive with LICENSE), a krew manifest pointing at the archives under
// the base URL with their SHA-256, and checksums.txt. The plugin is
// cross-compiled with the shared Go build cache: minutes the first time,
// about half a minute once the cache holds the four platforms' packages.
func TestReleaseScriptMakesTheReleaseFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles kubectl-dbperf four times")
	}
	helm := testutil.NeedEnv(t, "HELM")
	v, out := releaseVersion(t), t.TempDir()
	const base = "https://downloads.example.test/dbperf"
	cmd := exec.Command("bash", "hack/release.sh")
	cmd.Dir = testutil.RepoRoot()
	cmd.Env = append(os.Environ(), "OUT="+out, "HELM="+helm, "RELEASE_BASE_URL="+base+"/")
	start := time.Now()
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh: %v\n%s", err, log)
	}
	t.Logf("hack/release.sh took %s", time.Since(start).Round(time.Second))

	sums := map[string]string{}
	chartTgz := "dbperf-operator-" + strings.TrimPrefix(v, "v") + ".tgz"
	checkChart(t, filepath.Join(out, chartTgz), v)
	sums[chartTgz] = sha256File(t, filepath.Join(out, chartTgz))
	for _, p := range platforms {
		name := "kubectl-dbperf_" + v + "_" + p.os + "_" + p.arch + ".tar.gz"
		t.Run(p.os+"/"+p.arch, func(t *testing.T) { checkPluginArchive(t, filepath.Join(out, name), p, v) })
		sums[name] = sha256File(t, filepath.Join(out, name))
	}
	checkKrewManifest(t, filepath.Join(out, "plugins", "dbperf.yaml"), v, base, sums)
	sums["plugins/dbperf.yaml"] = sha256File(t, filepath.Join(out, "plugins", "dbperf.yaml"))
	checkChecksums(t, filepath.Join(out, "checksums.txt"), sums)
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// untar returns a .tar.gz's regular files by name, with their modes.
func untar(t *testing.T, path string) (map[string][]byte, map[string]int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files, modes := map[string][]byte{}, map[string]int64{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, modes
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], modes[h.Name] = raw, h.Mode
	}
}

func checkChart(t *testing.T, path, v string) {
	t.Helper()
	files, _ := untar(t, path)
	var chart struct{ Version, AppVersion string }
	if err := yaml.Unmarshal(files["dbperf-operator/Chart.yaml"], &chart); err != nil {
		t.Fatalf("%s: Chart.yaml: %v", path, err)
	}
	if chart.Version != strings.TrimPrefix(v, "v") || chart.AppVersion != v {
		t.Errorf("packaged chart says version %q appVersion %q, want %q and %q", chart.Version, chart.AppVersion, strings.TrimPrefix(v, "v"), v)
	}
	license, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["dbperf-operator/LICENSE"], license) {
		t.Error("the packaged chart holds no LICENSE, or another one")
	}
	crds := 0
	for name := range files {
		if strings.HasPrefix(name, "dbperf-operator/templates/crds/") {
			crds++
		}
	}
	if crds < 3 || files["dbperf-operator/values.schema.json"] == nil || files["dbperf-operator/templates/deployment.yaml"] == nil {
		t.Errorf("packaged chart holds %d CRDs, values.schema.json %t, templates/deployment.yaml %t", crds,
			files["dbperf-operator/values.schema.json"] != nil, files["dbperf-operator/templates/deployment.yaml"] != nil)
	}
}

// checkPluginArchive: the archive holds the executable and LICENSE alone;
// the executable is static, for the platform, built with -trimpath and
// the release's version.
func checkPluginArchive(t *testing.T, path string, p platform, v string) {
	files, modes := untar(t, path)
	if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, []string{"LICENSE", "kubectl-dbperf"}) {
		t.Fatalf("%s holds %v, want kubectl-dbperf and LICENSE", filepath.Base(path), names)
	}
	license, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["LICENSE"], license) {
		t.Error("the archive's LICENSE is not the repository's")
	}
	if modes["kubectl-dbperf"]&0o111 == 0 {
		t.Errorf("kubectl-dbperf mode %o is not executable", modes["kubectl-dbperf"])
	}
	bin := filepath.Join(t.TempDir(), "kubectl-dbperf")
	if err := os.WriteFile(bin, files["kubectl-dbperf"], 0o755); err != nil {
		t.Fatal(err)
	}
	if p.os == "linux" {
		checkELF(t, bin, p.elf)
	} else {
		checkMachO(t, bin, p.macho)
	}
	checkBuildInfo(t, bin, p, v)
	if p.os == runtime.GOOS && p.arch == runtime.GOARCH {
		got, err := exec.Command(bin, "version").Output()
		if err != nil || strings.TrimSpace(string(got)) != v {
			t.Errorf("kubectl-dbperf version: %q, %v; want %s", got, err, v)
		}
	}
}

func checkELF(t *testing.T, bin string, want elf.Machine) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("not an ELF file: %v", err)
	}
	defer f.Close()
	if f.Machine != want || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
		t.Errorf("ELF machine %s class %s type %s, want %s, 64-bit, an executable", f.Machine, f.Class, f.Type, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Error("the ELF binary names a dynamic loader: it is not static")
		}
	}
}

func checkMachO(t *testing.T, bin string, want macho.Cpu) {
	t.Helper()
	f, err := macho.Open(bin)
	if err != nil {
		t.Fatalf("not a Mach-O file: %v", err)
	}
	defer f.Close()
	if f.Cpu != want || f.Type != macho.TypeExec {
		t.Errorf("Mach-O cpu %s type %v, want %s, an executable", f.Cpu, f.Type, want)
	}
}

// checkBuildInfo reads how the binary was built from the binary itself
// (with -trimpath Go records no -ldflags: the host's binary prints its
// version instead).
func checkBuildInfo(t *testing.T, bin string, p platform, v string) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatalf("build info: %v", err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for key, want := range map[string]string{"GOOS": p.os, "GOARCH": p.arch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[key] != want {
			t.Errorf("built with %s=%q, want %q", key, settings[key], want)
		}
	}
	if info.Path != "github.com/dbperf-io/dbperf-operator/cmd/kubectl-dbperf" {
		t.Errorf("the binary is %s", info.Path)
	}
}

func checkKrewManifest(t *testing.T, path, v, base string, sums map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m krewPlugin
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatalf("krew manifest: %v", err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "dbperf" || m.Spec.Version != v {
		t.Errorf("krew manifest header %s %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	var got []string
	for _, pl := range m.Spec.Platforms {
		goos, arch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		got = append(got, goos+"/"+arch)
		name := "kubectl-dbperf_" + v + "_" + goos + "_" + arch + ".tar.gz"
		if pl.URI != base+"/"+name {
			t.Errorf("%s/%s: uri %s, want %s/%s", goos, arch, pl.URI, base, name)
		}
		if pl.SHA256 != sums[name] {
			t.Errorf("%s/%s: sha256 %s, the archive's is %s", goos, arch, pl.SHA256, sums[name])
		}
		if pl.Bin != "kubectl-dbperf" || len(pl.Files) != 2 || pl.Files[0].From != "kubectl-dbperf" || pl.Files[1].From != "LICENSE" {
			t.Errorf("%s/%s: bin %s files %+v", goos, arch, pl.Bin, pl.Files)
		}
	}
	slices.Sort(got)
	if want := []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}; !slices.Equal(got, want) {
		t.Errorf("krew manifest platforms %v, want %v", got, want)
	}
}

func checkChecksums(t *testing.T, path string, want map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("checksums.txt line %q is not sha256sum's", sc.Text())
		}
		got[name] = sum
	}
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("checksums.txt: %s %q, the file's is %s", name, got[name], sum)
		}
	}
	if len(got) != len(want) {
		t.Errorf("checksums.txt lists %d files, want %d: %v", len(got), len(want), got)
	}
}
