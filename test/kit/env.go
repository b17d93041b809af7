package kit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Scheme knows Kubernetes' kinds and the API's.
var Scheme = kruntime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(benchv1.AddToScheme(Scheme))
}

// Env is the API server that serves every test of a package; each test
// has its own namespace and its own manager (New), so a test can stop and
// restart the manager.
type Env struct {
	*envtest.Environment
	Config *rest.Config
	Client client.Client
}

// Main starts the package's API server, hands it to use (the suite keeps
// its client and config), runs the tests and stops it.
func Main(m *testing.M, use func(*Env)) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	env, err := Start(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	use(env)
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// Start starts an API server with the CRDs of config/crd/bases and, with
// cnpg, CloudNativePG's.
func Start(cnpg bool) (*Env, error) {
	bin, cnpgDir, err := assets()
	if err != nil {
		return nil, err
	}
	dirs := []string{filepath.Join(testutil.RepoRoot(), "config", "crd", "bases")}
	if cnpg {
		dirs = append(dirs, cnpgDir)
	}
	e := &Env{Environment: &envtest.Environment{BinaryAssetsDirectory: bin, CRDDirectoryPaths: dirs, ErrorIfCRDPathMissing: true}}
	if e.Config, err = e.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: Scheme}); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

// InstallCNPGCRDs installs CloudNativePG's CRDs into a running API server,
// as installing CloudNativePG after the operator would, and waits until
// the API server serves them.
func (e *Env) InstallCNPGCRDs() error {
	_, dir, err := assets()
	if err != nil {
		return err
	}
	_, err = envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true})
	return err
}

// assets returns the control-plane binaries and CloudNativePG's CRDs, from
// the environment (make test sets them) or by running the hack scripts,
// which reuse their caches.
func assets() (bin, cnpg string, err error) {
	bin, cnpg = os.Getenv("KUBEBUILDER_ASSETS"), os.Getenv("CNPG_CRD_DIR")
	lastLine := func(script string) (string, error) {
		out, err := exec.Command("bash", filepath.Join(testutil.RepoRoot(), "hack", script)).Output()
		if err != nil {
			return "", fmt.Errorf("hack/%s: %w", script, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1], nil
	}
	if bin == "" {
		if bin, err = lastLine("build-control-plane.sh"); err != nil {
			return "", "", err
		}
	}
	if cnpg == "" {
		cnpg, err = lastLine("fetch-cnpg-crds.sh")
	}
	return bin, cnpg, err
}

func zapLevel() zapcore.Level {
	if os.Getenv("DBPERF_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
