package main

import (
	"slices"
	"strings"
	"testing"
)

// The image flags: --image-registry remaps --runner-image's default but
// not a --runner-image given, a registry that is none is refused at
// start, and the lists are split on commas.
func TestImageFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		o        imageOptions
		runner   string
		want     string
		errWants string
	}{
		"no flags":                       {runner: DefaultRunnerImage, want: DefaultRunnerImage},
		"registry remaps the default":    {o: imageOptions{registry: "registry.internal:5000/mirror/"}, runner: DefaultRunnerImage, want: "registry.internal:5000/mirror/dbperf-io/dbperf-runner:" + strings.SplitN(DefaultRunnerImage, ":", 2)[1]},
		"a runner image given is kept":   {o: imageOptions{registry: "registry.internal", runnerImageSet: true}, runner: "ghcr.io/x/runner:1", want: "ghcr.io/x/runner:1"},
		"a registry without a host":      {o: imageOptions{registry: "mirror"}, runner: DefaultRunnerImage, errWants: "--image-registry"},
		"a registry with a scheme":       {o: imageOptions{registry: "https://registry.internal"}, runner: DefaultRunnerImage, errWants: "--image-registry"},
		"a pull secret that is no name":  {o: imageOptions{pullSecrets: "ok,Not_A_Name"}, runner: DefaultRunnerImage, errWants: "--image-pull-secrets"},
		"lists split, empty items left":  {o: imageOptions{pullSecrets: " a, ,b ", allowed: "registry.internal/,"}, runner: DefaultRunnerImage, want: DefaultRunnerImage},
		"an empty runner is the default": {runner: "", want: DefaultRunnerImage},
	} {
		t.Run(name, func(t *testing.T) {
			im, runner, err := tc.o.build(tc.runner)
			if tc.errWants != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWants) {
					t.Fatalf("error %v, want one naming %s", err, tc.errWants)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if runner != tc.want {
				t.Errorf("runner image %s, want %s", runner, tc.want)
			}
			if tc.o.pullSecrets != "" && !slices.Equal(im.PullSecrets, []string{"a", "b"}) {
				t.Errorf("pull secrets %v", im.PullSecrets)
			}
			if tc.o.allowed != "" && !slices.Equal(im.Allowed, []string{"registry.internal/"}) {
				t.Errorf("allowed %v", im.Allowed)
			}
			if strings.HasSuffix(im.Registry, "/") {
				t.Errorf("registry %q keeps its trailing slash", im.Registry)
			}
		})
	}
}
