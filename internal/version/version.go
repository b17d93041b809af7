// Package version holds the operator's version: the release this tree
// builds (the VERSION file, which hack/versiongen copies into release.go),
// unless the linker names another.
package version

// Version is the build's version: what the binaries report, what every run
// records in its environment, and the tag of the manager's default runner
// image. The Makefile and hack/release.sh set it from VERSION with
// -ldflags "-X .../internal/version.Version=..."; a plain `go build` keeps
// Release, so that even a build by hand pulls a runner image that exists.
var Version = Release
