package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// HammerDBWorkload runs HammerDB TPROC-C (`hammerdbcli auto <script>`) against
// PostgreSQL or MySQL. The operator writes the Tcl scripts: the schema build
// is the prepare step, and each virtual-user count is one timed step.
// +kubebuilder:validation:XValidation:rule="!has(self.buildVirtualUsers) || self.buildVirtualUsers <= self.warehouses",message="buildVirtualUsers must not exceed warehouses"
type HammerDBWorkload struct {
	// Database is the kind of database HammerDB drives, spelled as the
	// target kinds are: postgres or mysql.
	Database HammerDBDatabase `json:"database"`

	// Warehouses of the schema (count_ware).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:default=1
	// +optional
	Warehouses int32 `json:"warehouses,omitempty"`

	// BuildVirtualUsers load the schema in parallel (num_vu of the build).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +kubebuilder:default=1
	// +optional
	BuildVirtualUsers int32 `json:"buildVirtualUsers,omitempty"`

	// VirtualUsers is swept: each value is one timed test (vuset vu), a
	// measurement of its own, or with Autopilot a stage of one.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	VirtualUsers []int32 `json:"virtualUsers"`

	// Autopilot runs every VirtualUsers count in one measurement, one
	// timed test after another in the order given (HammerDB's autopilot),
	// instead of one measurement per count: each test is a stage of the
	// measurement (status and results' stages) with its NOPM, TPM,
	// transactions' percentiles and the target's CPU over its measured
	// period, side by side; the headline is the last test's. Each test
	// takes its own ramp-up and duration. Not with spec.capacity, whose
	// levels set the virtual users themselves.
	// +optional
	Autopilot bool `json:"autopilot,omitempty"`

	// RampUp before the measured period (rampup), in whole minutes, as
	// HammerDB takes it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('10h') && duration(self).getSeconds() % 60 == 0 && duration(self).getMilliseconds() % 1000 == 0",message="must be whole minutes between 0m and 10h, such as 2m"
	// +kubebuilder:default="2m"
	// +optional
	RampUp *metav1.Duration `json:"rampUp,omitempty"`

	// Duration of the measured period (duration), in whole minutes, as
	// HammerDB takes it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h') && duration(self).getSeconds() % 60 == 0 && duration(self).getMilliseconds() % 1000 == 0",message="must be whole minutes between 1m and 24h, such as 5m"
	// +kubebuilder:default="5m"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// AllWarehouses makes every virtual user use all warehouses
	// (allwarehouse), spreading I/O over the whole schema.
	// +optional
	AllWarehouses bool `json:"allWarehouses,omitempty"`

	// TimeProfile records per-transaction response times (timeprofile:
	// NEWORD, PAYMENT, DELIVERY, SLEV, OSTAT percentiles).
	// +kubebuilder:default=true
	// +optional
	TimeProfile *bool `json:"timeProfile,omitempty"`

	// KeyAndThink adds TPC-C keying and thinking time (keyandthink).
	// +optional
	KeyAndThink bool `json:"keyAndThink,omitempty"`

	// StoredProcedures uses PostgreSQL stored procedures rather than
	// functions (pg_storedprocs; PostgreSQL 11 and later).
	// +kubebuilder:default=true
	// +optional
	StoredProcedures *bool `json:"storedProcedures,omitempty"`

	// Partition partitions the order line table (partition).
	// +optional
	Partition bool `json:"partition,omitempty"`

	// SchemaDatabase is the database HammerDB builds and drives (dbase).
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +kubebuilder:default=tpcc
	// +optional
	SchemaDatabase string `json:"schemaDatabase,omitempty"`

	// SchemaUser owns the PostgreSQL schema (pg_user); HammerDB creates it
	// with the target's password. MySQL uses the target's user.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +kubebuilder:default=tpcc
	// +optional
	SchemaUser string `json:"schemaUser,omitempty"`

	// Settings are further tpcc dictionary values (diset tpcc KEY VALUE),
	// such as {"pg_vacuum": "true"}; keys carry the database prefix.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// HammerDBDatabase is the kind of database HammerDB drives.
// +kubebuilder:validation:Enum=postgres;mysql
type HammerDBDatabase string

const (
	// HammerDBPostgres drives PostgreSQL (HammerDB's "pg" plugin).
	HammerDBPostgres HammerDBDatabase = "postgres"
	// HammerDBMySQL drives MySQL or MariaDB (HammerDB's "mysql" plugin).
	HammerDBMySQL HammerDBDatabase = "mysql"
)
