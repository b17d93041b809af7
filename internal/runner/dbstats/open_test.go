package dbstats

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// The operator asks for statistics in the protocols the pod contract says
// the runner polls (without linking a poller): this package must read
// exactly those, and record each under the name of its statistics that
// results have always carried (the status API documents postgresql, not
// the protocol's postgres).
func TestPollersAreThoseOfTheContract(t *testing.T) {
	if diff := cmp.Diff(pod.StatisticsProtocols(), Protocols()); diff != "" {
		t.Errorf("protocols (-contract +pollers):\n%s", diff)
	}
	want := map[pod.Protocol]string{pod.ProtocolPostgres: "postgresql", pod.ProtocolMySQL: "mysql", pod.ProtocolRedis: "redis",
		pod.ProtocolMongoDB: "mongodb", pod.ProtocolOpenSearch: "opensearch"}
	for p, source := range want {
		if got := SourceOf(p); got != source {
			t.Errorf("%s: statistics named %q, want %q", p, got, source)
		}
	}
	if got := SourceOf(pod.ProtocolClickHouse); got != "" {
		t.Errorf("no poller reads ClickHouse, yet it names %q", got)
	}
}
