// Command manager runs the dbperf-operator controllers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/kubelet"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/prometheus"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/resources"
	"github.com/dbperf-io/dbperf-operator/internal/version"
)

func main() {
	var (
		metricsAddr, probeAddr, runnerImage, leaderNamespace string
		leaderElect                                          bool
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, so that only one manager reconciles at a time")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease; default: the manager's own (needed when running outside the cluster)")
	var lease leaseOptions
	flag.DurationVar(&lease.duration, "leader-election-lease-duration", 15*time.Second, "how long a Lease not renewed holds off the other managers: after a crash, the next leader waits this long")
	flag.DurationVar(&lease.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew its Lease before it gives up leading")
	flag.DurationVar(&lease.retryPeriod, "leader-election-retry-period", 2*time.Second, "how often the managers try to acquire or renew the Lease")
	flag.BoolVar(&lease.releaseOnCancel, "leader-election-release-on-cancel", true, "release the Lease on a clean shutdown (SIGTERM), so that the next manager leads at once instead of after the lease duration")
	var workers int
	flag.IntVar(&workers, "max-concurrent-reconciles", 4, "how many runs (and comparisons, schedules) are reconciled side by side; each phase is idempotent and one run is never reconciled twice at once. With one, a thousand runs wait in the work queue for the API server's answers to each other's writes")
	flag.StringVar(&runnerImage, "runner-image", DefaultRunnerImage, "image holding the static dbperf-runner binary; left at its default, --image-registry remaps it")
	var img imageOptions
	flag.StringVar(&img.registry, "image-registry", "", "registry that replaces the registry of every default image the operator chooses (the tools', the targets', the runner's unless --runner-image is given), keeping the repository's path, tag and digest: with registry.internal:5000/mirror, postgres:17 becomes registry.internal:5000/mirror/library/postgres:17 (docs/install.md, \"Air-gapped installs\"). Images written in a spec are never remapped")
	flag.StringVar(&img.pullSecrets, "image-pull-secrets", "", "comma-separated names of Secrets every pod of every run pulls its images with (load generators, the target's servers, CloudNativePG's instances); they must exist in each run's namespace")
	flag.StringVar(&img.allowed, "allowed-images", "", "comma-separated image prefixes the default images (after --image-registry) and the runner image must start with, as written or with their registry spelled out (docker.io/library/postgres:17); a run that would use another fails, reason ImageNotAllowed. Empty: any. The chart passes admission.allowedImages")
	var tele telemetryOptions
	flag.StringVar(&tele.resources, "telemetry-resources", "none", "source of the pods' and nodes' CPU, memory and network over each measurement: none, kubelet (the kubelets' /stats/summary through the API server's node proxy: needs RBAC get on nodes/proxy), prometheus (--prometheus-url)")
	flag.DurationVar(&tele.interval, "telemetry-sampling-interval", kubelet.DefaultInterval, "how often the kubelet source polls each node while a measurement runs")
	flag.StringVar(&tele.prometheusURL, "prometheus-url", "", "address of the Prometheus HTTP API for --telemetry-resources=prometheus, e.g. http://prometheus.monitoring:9090")
	flag.DurationVar(&tele.settle, "prometheus-settle-time", 45*time.Second, "how long after a measurement ends Prometheus is asked about it: at least one scrape interval")
	flag.StringVar(&tele.prometheusConfig, "prometheus-config", "", "a file of the Prometheus source's settings (step, rate range, label names, selectors, metric names, queries: the chart's telemetry.prometheus values, docs/telemetry.md); validated at start")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	flag.Visit(func(f *flag.Flag) { img.runnerImageSet = img.runnerImageSet || f.Name == "runner-image" })
	o := options{metricsAddr: metricsAddr, probeAddr: probeAddr, runnerImage: runnerImage, leaderElect: leaderElect, leaderNamespace: leaderNamespace, lease: lease, telemetry: tele, workers: workers, images: img}
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), o); err != nil {
		ctrl.Log.Error(err, "Manager stopped")
		os.Exit(1)
	}
}

// Scheme knows every kind the manager uses.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(benchv1.AddToScheme(s))
	return s
}

type options struct {
	metricsAddr, probeAddr, runnerImage, leaderNamespace string
	leaderElect                                          bool
	lease                                                leaseOptions
	telemetry                                            telemetryOptions
	// secondManager lets a process start a manager after another one
	// stopped (tests): controller names are unique per process otherwise.
	secondManager bool
	// workers is MaxConcurrentReconciles of every controller; 0 is 1.
	workers int
	images  imageOptions
}

// DefaultRunnerImage is --runner-image's default.
var DefaultRunnerImage = "ghcr.io/dbperf-io/dbperf-runner:" + version.Version

// imageOptions are the flags of the images the operator chooses itself.
type imageOptions struct {
	registry, pullSecrets, allowed string
	// runnerImageSet: --runner-image was given, and is used as written.
	runnerImageSet bool
}

// build checks the flags and resolves the runner image: its default is
// remapped like every other default image.
func (o imageOptions) build(runnerImage string) (specs.Images, string, error) {
	im := specs.Images{Registry: strings.TrimSuffix(o.registry, "/"), PullSecrets: commaList(o.pullSecrets), Allowed: commaList(o.allowed)}
	if im.Registry != "" {
		if err := specs.ValidateRegistry(im.Registry); err != nil {
			return im, "", fmt.Errorf("--image-registry: %w", err)
		}
	}
	for _, s := range im.PullSecrets {
		if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
			return im, "", fmt.Errorf("--image-pull-secrets: %q is not a Secret's name: %s", s, strings.Join(errs, "; "))
		}
	}
	if runnerImage == "" {
		runnerImage = DefaultRunnerImage
	}
	if !o.runnerImageSet {
		runnerImage = im.Default(runnerImage)
	}
	return im, runnerImage, nil
}

// commaList splits a comma-separated flag, leaving out empty items.
func commaList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// leaseOptions are leader election's timings (zero: controller-runtime's
// defaults) and whether a clean shutdown releases the Lease. Releasing is
// safe because the process ends right after the manager stops (main).
type leaseOptions struct {
	duration, renewDeadline, retryPeriod time.Duration
	releaseOnCancel                      bool
}

// durationOrNil is a timing for ctrl.Options: nil leaves its default.
func durationOrNil(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return &d
}

// telemetryOptions choose the source of the resource figures.
type telemetryOptions struct {
	resources, prometheusURL, prometheusConfig string
	interval, settle                           time.Duration
}

// build makes the chosen source; nil for none. The database's own
// statistics need none of this: the runner polls them on any cluster.
func (t telemetryOptions) build(cs kubernetes.Interface) (*resources.Meter, error) {
	switch t.resources {
	case "", "none":
		if t.prometheusURL != "" || t.prometheusConfig != "" {
			return nil, errors.New("--prometheus-url or --prometheus-config is set but --telemetry-resources is none: say --telemetry-resources=prometheus")
		}
		return nil, nil
	case "kubelet":
		if t.interval < time.Second {
			return nil, fmt.Errorf("--telemetry-sampling-interval %s: at least 1s", t.interval)
		}
		return resources.NewMeter(kubelet.NewAPIServer(cs), t.interval, nil, 0), nil
	case "prometheus":
		if t.prometheusURL == "" {
			return nil, errors.New("--telemetry-resources=prometheus needs --prometheus-url")
		}
		cfg := prometheus.Config{Address: t.prometheusURL}
		if t.prometheusConfig != "" {
			b, err := os.ReadFile(t.prometheusConfig)
			if err != nil {
				return nil, fmt.Errorf("--prometheus-config: %w", err)
			}
			if cfg, err = prometheus.LoadFile(b, t.prometheusURL); err != nil {
				return nil, fmt.Errorf("--prometheus-config %s: %w", t.prometheusConfig, err)
			}
		}
		if _, err := prometheus.New(cfg); err != nil {
			return nil, err
		}
		src := func(namespace string) (telemetry.Source, error) {
			c := cfg
			c.Namespace = namespace
			return prometheus.New(c)
		}
		return resources.NewMeter(nil, 0, src, t.settle), nil
	}
	return nil, fmt.Errorf("--telemetry-resources %q: want none, kubelet or prometheus", t.resources)
}

func run(ctx context.Context, cfg *rest.Config, o options) error {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "dbperf-operator.bench.dbperf.io",
		LeaderElectionNamespace: o.leaderNamespace,
		LeaseDuration:           durationOrNil(o.lease.duration),
		RenewDeadline:           durationOrNil(o.lease.renewDeadline),
		RetryPeriod:             durationOrNil(o.lease.retryPeriod),
		// The manager's process ends when run returns (main).
		LeaderElectionReleaseOnCancel: o.lease.releaseOnCancel,
		Controller:                    config.Controller{SkipNameValidation: ptr.To(o.secondManager), MaxConcurrentReconciles: o.workers},
		Cache:                         controllers.CacheOptions(),
		Client:                        controllers.ClientOptions(),
	})
	if err != nil {
		return fmt.Errorf("while creating the manager: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	meter, err := o.telemetry.build(cs)
	if err != nil {
		return err
	}
	images, runnerImage, err := o.images.build(o.runnerImage)
	if err != nil {
		return err
	}
	kubeVersion := ""
	if info, err := cs.Discovery().ServerVersion(); err == nil {
		kubeVersion = info.GitVersion
	}
	owned, missing, err := targets.ServedOwnedKinds(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	for _, gvk := range missing {
		ctrl.Log.Info("A target kind's CRD is not installed: its runs wait with TargetReady=False, reason CRDNotInstalled, until it is; the manager watches for it and needs no restart", "kind", gvk.String())
	}
	rec := &controllers.BenchmarkRunReconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorderFor(controllers.EventSource),
		Clock:             clock.RealClock{},
		Logs:              controllers.ClientsetLogReader{Clientset: cs},
		RunnerImage:       runnerImage,
		Images:            images,
		KubernetesVersion: kubeVersion,
		OperatorVersion:   version.Version,
		Owned:             owned,
	}
	if meter != nil { // a nil *Meter would be a ResourceMeter that is not nil
		rec.Resources = meter
	}
	if err := rec.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("while setting up the BenchmarkRun controller: %w", err)
	}
	cmp := &comparison.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor(controllers.EventSource)}
	if err := cmp.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("while setting up the BenchmarkComparison controller: %w", err)
	}
	sched := &schedule.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor(controllers.EventSource), Clock: clock.RealClock{}}
	if err := sched.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("while setting up the BenchmarkSchedule controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.Info("Starting manager", "version", version.Version, "kubernetes", kubeVersion, "runnerImage", runnerImage,
		"imageRegistry", orNone(images.Registry), "imagePullSecrets", images.PullSecrets, "allowedImages", images.Allowed,
		"telemetryResources", orNone(o.telemetry.resources))
	return mgr.Start(ctx)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
