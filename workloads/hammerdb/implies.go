package hammerdb

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = HammerDB{}

// SweptLists: the steps are its virtual-user counts (Steps).
func (HammerDB) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "virtualUsers"}}
}

var _ workloads.TargetKindNamer = HammerDB{}

// TargetKindField: database is the kind of the target HammerDB drives.
func (HammerDB) TargetKindField() string { return "database" }
