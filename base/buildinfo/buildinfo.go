// Package buildinfo names the build of the running binary: the module
// version and the VCS revision, time and modified flag that the Go
// toolchain stamps into it (runtime/debug.ReadBuildInfo). It is what
// `arbiter --version` prints and what workers report to the coordinator,
// so that a farm's operator can tell which build each machine runs.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Info is what the build carries about itself; empty fields are unknown
// (a `go run`, or a build with -buildvcs=false).
type Info struct {
	Module    string `json:"module"`     // module path, e.g. github.com/arbiter-chess/arbiter
	Version   string `json:"version"`    // module version, "(devel)" for a build from a work tree
	GoVersion string `json:"go_version"` // toolchain that built it
	Revision  string `json:"revision"`   // VCS commit
	Time      string `json:"time"`       // VCS commit time, RFC 3339
	Modified  bool   `json:"modified"`   // the work tree had uncommitted changes
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)"}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts Info from bi (separate from Read for tests).
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Short is one line for logs and worker registration: the version, and
// the revision's first 12 hex digits with "+modified" when the tree was
// dirty, e.g. "(devel) 1af7f55c2d3e+modified".
func (in Info) Short() string {
	s := in.Version
	if in.Revision != "" {
		rev := in.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " " + rev
		if in.Modified {
			s += "+modified"
		}
	}
	return s
}

// String is the multi-line text of `arbiter version`.
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "arbiter %s\n", in.Version)
	if in.Module != "" {
		fmt.Fprintf(&b, "module:   %s\n", in.Module)
	}
	rev := in.Revision
	if rev == "" {
		rev = "unknown (built without VCS information; make build stamps it)"
	}
	fmt.Fprintf(&b, "revision: %s\n", rev)
	if in.Time != "" {
		fmt.Fprintf(&b, "time:     %s\n", in.Time)
	}
	if in.Revision != "" {
		fmt.Fprintf(&b, "modified: %t\n", in.Modified)
	}
	if in.GoVersion != "" {
		fmt.Fprintf(&b, "go:       %s\n", in.GoVersion)
	}
	return b.String()
}
