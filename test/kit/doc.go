// Package kit is the reconcilers' test kit: one API server per test
// package (envtest: kube-apiserver and etcd built by
// hack/build-control-plane.sh, the CRDs and CloudNativePG's), a namespace
// and a manager per test (H) wired by the package under test as
// cmd/manager wires it, one replay kubelet for the pods of workload Jobs
// (the real runner on a tool's recorded output), waits on signs rather
// than sleeps (WaitReconciled), refused writes through controller-runtime's
// interceptor (Intercept), and builders of the objects the tests make
// (MakeRun, MakeComparison).
//
// It imports no reconciler: each package's suite_test.go wires its
// manager, so that the reconcilers' own tests stay inside their packages.
package kit
