package v1alpha1

import corev1 "k8s.io/api/core/v1"

// HostRole is a host's part in a measurement.
// +kubebuilder:validation:Enum=database;application;loadgen;other
type HostRole string

const (
	// HostDatabase is the target's own machine (an appliance, the virtual
	// machine behind a managed service): for an external target its CPU is
	// the target's, so efficiencyPerTargetCore and
	// validity.maxTargetCPUPercent are judged from it.
	HostDatabase    HostRole = "database"
	HostApplication HostRole = "application"
	HostLoadgen     HostRole = "loadgen"
	HostOther       HostRole = "other"
)

// HostSpec is one machine whose CPU (by mode, per core), memory, load,
// disks (per device: throughput, IOPS, await, utilisation, queue) and
// network (per interface: bytes, packets, drops, errors) are recorded
// beside every measurement, with series at telemetry.pollInterval, under
// the subject host/<name>.
type HostSpec struct {
	// Name of the host in the results: the subject host/<name>.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Role is the host's part: database (the target's own host), application,
	// loadgen or other.
	// +kubebuilder:default=other
	// +optional
	Role HostRole `json:"role,omitempty"`

	// NodeExporter is how the host is read: its node_exporter, scraped
	// directly by the first load generator (no Prometheus needed).
	NodeExporter NodeExporterEndpoint `json:"nodeExporter"`
}

// NodeExporterEndpoint is a node_exporter's metrics endpoint, over HTTP or
// HTTPS, with basic auth or a bearer token when it asks for one.
type NodeExporterEndpoint struct {
	// URL of the exposition, such as http://db-01.example.internal:9100/metrics.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('http://') || self.startsWith('https://')",message="must be an http:// or https:// URL"
	URL string `json:"url"`

	// SecretRef names a Secret of the run's namespace holding the
	// endpoint's credentials: username and password (basic auth) or token
	// (a bearer token), and ca.crt, the CA of an https endpoint's
	// certificate (else the system's roots). They reach the load generator
	// as environment variables from the Secret and are never printed.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`

	// InsecureSkipVerify accepts any certificate of an https endpoint.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}
