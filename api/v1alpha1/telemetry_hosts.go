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
// the subject host/<name>. It is read one way: nodeExporter or
// prometheusSelector.
// +kubebuilder:validation:XValidation:rule="has(self.nodeExporter) != has(self.prometheusSelector)",message="exactly one of nodeExporter and prometheusSelector"
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

	// NodeExporter reads the host from its node_exporter, scraped directly
	// by the first load generator (no Prometheus needed).
	// +optional
	NodeExporter *NodeExporterEndpoint `json:"nodeExporter,omitempty"`

	// PrometheusSelector reads the host from the install's Prometheus
	// (telemetry.resources: prometheus): the label matchers of its
	// node_exporter's series, such as instance="db-01:9100" or
	// job="appliances",nodename="db-01". The same figures and series, asked
	// after each measurement's window.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	PrometheusSelector string `json:"prometheusSelector,omitempty"`
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

// QuerySummary is how a range query's samples become the figure.
// +kubebuilder:validation:Enum=mean;max
type QuerySummary string

// TelemetryQuery is a run's own PromQL, asked of the install's Prometheus
// (telemetry.resources: prometheus) over every measurement's window,
// beside the install's queries (docs/telemetry.md, "Prometheus"). With
// $window in it the query is evaluated once at the window's end, $window
// being the window's duration, and its value is the figure; without it
// the query is sampled at every step and the figure is the mean (or the
// maximum) of the samples, kept as a series. A query that returns nothing
// is a warning naming it, never a zero; several series are added up with
// a warning (aggregate them in the query to say how).
type TelemetryQuery struct {
	// Name of the figure, lowerCamel with its unit: appRequestsPerSecond.
	// +kubebuilder:validation:Pattern=`^[a-z][A-Za-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Query in PromQL.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query"`
	// Unit of the figure, such as requests/s, cores, bytes.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Unit string `json:"unit,omitempty"`
	// Direction: Neutral (the default) for a level, LowerIsBetter or
	// HigherIsBetter when one is plainly better.
	// +kubebuilder:validation:Enum=HigherIsBetter;LowerIsBetter;Neutral
	// +kubebuilder:default=Neutral
	// +optional
	Direction Direction `json:"direction,omitempty"`
	// Subject the figure is about: server (the default), target,
	// host/<name>, node/<name>, or a name of the user's.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9./]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default=server
	// +optional
	Subject string `json:"subject,omitempty"`
	// Summary of a sampled query: mean (the default) or max.
	// +kubebuilder:default=mean
	// +optional
	Summary QuerySummary `json:"summary,omitempty"`
}
