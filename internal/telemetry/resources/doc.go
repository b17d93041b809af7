// Package resources measures the pods' and nodes' resources over every
// measurement with the source the operator was started with
// (--telemetry-resources): the kubelet source samples while the load
// generators run and stops when the Job's outcome is known; the Prometheus
// source is asked once the window has settled. Either report is kept by
// measurement until status records it, so a reconcile that recomputes the
// outcome attaches the same report to the fresh result, once. What a
// measurement's pods and nodes are is the run reconciler's to say
// (Subjects): the meter reads no cluster object itself.
package resources
