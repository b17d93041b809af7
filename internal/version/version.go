// Package version holds the operator's build version, set by the linker.
package version

// Version is set with -ldflags "-X .../internal/version.Version=...".
var Version = "dev"
