package status

// EventSource is the component the manager's events name as their source:
// its recorders' (cmd/manager) and the events a schedule creates itself.
const EventSource = "dbperf-operator"
