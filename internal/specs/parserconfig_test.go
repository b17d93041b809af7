package specs

import (
	"slices"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// A measurement whose parser needs a configuration file gets the runner's
// --parser-config, before the tool's command; a prepare step, which is
// judged by its exit code, does not.
func TestParserConfigurationReachesTheRunner(t *testing.T) {
	run := sampleRun()
	inv := pod.Invocation{Command: []string{"bench", "--threads", "8"}, ParserConfig: pod.FilesDir + "/parser.json",
		Files: map[string]string{"parser.json": "{}"}}
	for role, want := range map[string]bool{benchv1.RoleLoadgen: true, benchv1.RolePrepare: false} {
		job := Job(JobParams{Run: run, Name: "j", Role: role, Workload: "w", Invocation: inv, Image: "img", RunnerImage: "runner",
			FilesConfigMap: "files", Endpoint: endpoint()})
		args := job.Spec.Template.Spec.Containers[0].Args
		i, dash := slices.Index(args, "--parser-config"), slices.Index(args, "--")
		switch {
		case want && (i < 0 || i > dash || args[i+1] != "/etc/dbperf/workload/parser.json"):
			t.Errorf("%s: args %s", role, strings.Join(args, " "))
		case !want && i >= 0:
			t.Errorf("%s: a parser configuration: %s", role, strings.Join(args, " "))
		}
	}
}
