// Package status is what the three reconcilers share of writing their
// status: one patch that writes only a change and leaves a conflict to the
// next reconcile (Patch), events said once the status that records them is
// stored (Event), messages and numbers bounded as status holds them
// (Truncate, Round, Finite), the order of creation (CreatedBefore), and
// children that must be their owner's (EnsureControlledBy).
package status
