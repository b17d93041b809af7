// Package release checks what a release ships. images_test.go: every
// manifest the project ships (the chart rendered by helm, config/default
// rendered by kustomize, the samples) and every default image compiled into
// the binaries names a pinned tag, never :latest, and the project's own
// images carry the one version of the VERSION file. script_test.go:
// hack/release.sh makes kubectl-dbperf for linux and darwin on amd64 and
// arm64, the packaged chart and a krew manifest whose checksums are the
// archives'.
//
// HELM names helm and KUBECTL kubectl (hack/test.sh sets both; KUBECTL
// defaults to $KUBEBUILDER_ASSETS/kubectl); the tests that need one skip
// without it.
package release
