package matchspec

import (
	"fmt"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// ArtifactKindName names what an artifact holds: "source" for a source
// tree, "net" for a net, "binary" otherwise (as workers treat it).
func ArtifactKindName(k arbiterv1.ArtifactKind) string {
	switch k {
	case arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE:
		return "source"
	case arbiterv1.ArtifactKind_ARTIFACT_KIND_NET:
		return "net"
	}
	return "binary"
}

// DefaultNetPrefix starts a net reference that names an engine's default
// net ("default:ENGINE") instead of a hash.
const DefaultNetPrefix = "default:"

// DefaultNetOption is the engine option that takes a net's path when the
// test names none.
const DefaultNetOption = "EvalFile"

// NetOption is the option through which an engine gets its net's path.
func NetOption(n *arbiterv1.EngineNet) string {
	if n.GetOption() == "" {
		return DefaultNetOption
	}
	return n.GetOption()
}

// NetDesc says which net an engine loads, and through which option.
func NetDesc(n *arbiterv1.EngineNet) string {
	sha := n.GetSha256()
	if len(sha) > 12 {
		sha = sha[:12]
	}
	s := sha
	if n.GetName() != "" {
		s += " " + n.GetName()
	}
	if n.GetSize() != 0 {
		s += fmt.Sprintf(" (%d bytes)", n.GetSize())
	}
	return s + " via " + NetOption(n)
}

// ArtifactExe is the program a source tree's build makes: exe, or "engine"
// when the upload named none.
func ArtifactExe(exe string) string {
	if exe == "" {
		return "engine"
	}
	return exe
}

// ArtifactDesc says what an uploaded engine is: its hash, what it holds,
// where it came from, and its bench signature.
func ArtifactDesc(name string, a *arbiterv1.EngineArtifact) string {
	s := name + " " + a.GetSha256()
	switch a.GetKind() {
	case arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE:
		s += fmt.Sprintf(", source tree %q built by %q into %s", a.GetName(), a.GetBuild(), ArtifactExe(a.GetExe()))
	default:
		s += fmt.Sprintf(", binary %q", a.GetName())
		if a.GetPlatform() != "" {
			s += " for " + a.GetPlatform()
		}
	}
	if a.GetCommit() != "" {
		s += fmt.Sprintf(", commit %s %q", a.GetCommit()[:min(len(a.GetCommit()), 12)], a.GetMessage())
	}
	if a.GetBench() != 0 {
		s += fmt.Sprintf(", bench %d", a.GetBench())
	} else {
		s += ", no bench signature"
	}
	return s
}

// ArtifactCheckState names a worker's step with an uploaded engine.
func ArtifactCheckState(s arbiterv1.ArtifactCheckState) string {
	switch s {
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_FETCHED:
		return "fetched"
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILT:
		return "built"
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED:
		return "verified"
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED:
		return "REFUSED"
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILD_FAILED:
		return "REFUSED (build failed)"
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH:
		return "REFUSED (bench mismatch)"
	}
	return "?"
}
