package pod

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// HostEndpoint is one host the runner reads from its node_exporter while
// the tool runs (spec.telemetry.hosts), as exec's repeatable --host-exporter
// flag carries it: a JSON object. Its credentials and CA are never flags:
// they come from the variables HostEnv names for its Index.
type HostEndpoint struct {
	Name string `json:"name"`
	Role string `json:"role"`
	URL  string `json:"url"`
	// Index is the host's place in the spec: its variables' names.
	Index int `json:"index"`
	// Target: the host's CPU is the target's (a database host of an
	// external target).
	Target             bool `json:"target,omitempty"`
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// The variables of host i's credentials and CA (HostEnv).
const (
	HostEnvUsername = "USERNAME"
	HostEnvPassword = "PASSWORD"
	HostEnvToken    = "TOKEN"
	HostEnvCA       = "CA"
)

// HostEnv names host i's variable of one kind: DBPERF_HOST_0_PASSWORD.
func HostEnv(i int, kind string) string {
	return EnvPrefix + "HOST_" + strconv.Itoa(i) + "_" + kind
}

// DefaultHostPollInterval is the time between scrapes of a host.
const DefaultHostPollInterval = 5 * time.Second

func formatHost(h HostEndpoint) string {
	b, _ := json.Marshal(h)
	return string(b)
}

func parseHost(v string) (HostEndpoint, error) {
	var h HostEndpoint
	if err := json.Unmarshal([]byte(v), &h); err != nil {
		return h, fmt.Errorf("want a JSON object {name, role, url, index}: %w", err)
	}
	u, err := url.Parse(h.URL)
	switch {
	case h.Name == "":
		return h, fmt.Errorf("no name")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return h, fmt.Errorf("host %s: url %q: want an http:// or https:// URL", h.Name, h.URL)
	case h.Index < 0:
		return h, fmt.Errorf("host %s: index %d below 0", h.Name, h.Index)
	}
	return h, nil
}
