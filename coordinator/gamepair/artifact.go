package gamepair

import (
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// checkArtifact refuses an engine artifact reference that cannot be one.
func checkArtifact(which string, a *arbiterv1.EngineArtifact) error {
	sha := a.GetSha256()
	if len(sha) < 8 || len(sha) > 64 {
		return apierr.Invalid("%s: artifact %s: its SHA-256, or a prefix of at least 8 hex digits", which, apierr.Q(sha))
	}
	if _, err := hex.DecodeString(sha[:len(sha)&^1]); err != nil {
		return apierr.Invalid("%s: artifact %s: not hex", which, apierr.Q(sha))
	}
	if len(a.GetBuild()) > maxPathBytes || len(a.GetExe()) > maxPathBytes {
		return apierr.Invalid("%s: artifact build command or exe over %d bytes", which, maxPathBytes)
	}
	if exe := a.GetExe(); exe != "" && (filepath.IsAbs(exe) || strings.HasPrefix(filepath.Clean(exe), "..")) {
		return apierr.Invalid("%s: exe %s: a path inside the source tree", which, apierr.Q(exe))
	}
	return nil
}

// Fits says why worker wk cannot be offered a test of these engines
// ("" when it can): an engine with its own time control needs a worker
// that plays it, an uploaded engine needs a worker that takes
// artifacts, a source tree one that builds, and a binary one of its
// platform.
func Fits(a, b *arbiterv1.EngineSpec, wk *core.Worker) string { return FitsCaps(a, b, wk.Caps) }

// FitsCaps is Fits for a worker known by its capabilities (status pages
// ask it of the live workers).
func FitsCaps(a, b *arbiterv1.EngineSpec, caps core.Caps) string {
	for _, e := range []*arbiterv1.EngineSpec{a, b} {
		if e.GetTimeControl() != nil && !caps.Has(capability.EngineLimits) {
			return "the worker plays no per-engine time controls (an older version)"
		}
		if e.GetNet() != nil && !caps.Has(capability.Nets) {
			return "the worker passes no nets to engines (an older version, or no --data)"
		}
		if e.GetMovegenGate() != "" && !caps.Has(capability.MovegenGate) {
			return "the worker runs no movegen gate (an older version)"
		}
		if why := fitsEngineSyzygy(e, caps); why != "" {
			return why
		}
		art := e.GetArtifact()
		if art == nil {
			continue
		}
		if !caps.Has(capability.Artifacts) {
			return "the worker does not run uploaded engines"
		}
		switch art.GetKind() {
		case arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE:
			if !caps.Has(capability.SourceBuild) {
				return "the worker has no compiler for source builds"
			}
		case arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY:
			if p := art.GetPlatform(); p != "" && caps.Platform != "" && p != caps.Platform {
				return "the engine is built for " + p + ", the worker is " + caps.Platform
			}
		}
	}
	return ""
}

// ArtifactsOf lists the hashes of a test's uploaded engines and nets.
func ArtifactsOf(engines ...*arbiterv1.EngineSpec) []string {
	var out []string
	for _, e := range engines {
		if h := e.GetArtifact().GetSha256(); h != "" {
			out = append(out, h)
		}
		if h := e.GetNet().GetSha256(); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// checkNet refuses a net reference that cannot be one, a net for an
// engine installed on the workers (its options that name files are the
// worker operator's choice), and a net option the test also sets.
func checkNet(which string, e *arbiterv1.EngineSpec) error {
	n := e.GetNet()
	if n == nil {
		return nil
	}
	q := apierr.Q(e.GetName())
	sha := n.GetSha256()
	if engine, ok := strings.CutPrefix(sha, matchspec.DefaultNetPrefix); ok {
		if strings.TrimSpace(engine) == "" || len(engine) > MaxNameBytes {
			return apierr.Invalid("%s %s: net %s: name the engine whose default net it is", which, q, apierr.Q(sha))
		}
	} else {
		if len(sha) < 8 || len(sha) > 64 {
			return apierr.Invalid("%s %s: net %s: its SHA-256, a prefix of at least 8 hex digits, or default:ENGINE", which, q, apierr.Q(sha))
		}
		if _, err := hex.DecodeString(sha[:len(sha)&^1]); err != nil {
			return apierr.Invalid("%s %s: net %s: not hex", which, q, apierr.Q(sha))
		}
	}
	opt := matchspec.NetOption(n)
	if len(opt) > MaxNameBytes || strings.TrimSpace(opt) != opt || strings.ContainsAny(opt, "\x00\n\r") {
		return apierr.Invalid("%s %s: net option %s: an engine option's name", which, q, apierr.Q(opt))
	}
	if e.GetArtifact() == nil && !matchspec.IsBuiltin(e) {
		return apierr.Invalid("%s %s: a net goes with the embedded engine (builtin) or an uploaded engine, not one installed on the workers", which, q)
	}
	for k := range e.GetOptions() {
		if strings.EqualFold(k, opt) {
			return apierr.Invalid("%s %s: option %s is the net's option: the worker sets it to the net's path", which, q, apierr.Q(k))
		}
	}
	return nil
}

// ResolveFunc completes an engine's uploaded parts from the artifact
// store: its artifact (full hash, kind, size, platform, what the upload
// said of the engine) and its net (full hash, size, name), or refuses
// them naming which.
type ResolveFunc func(which string, e *arbiterv1.EngineSpec) error

// ResolveArtifacts completes the uploaded engines of a submitted job;
// which names each engine in errors (engine_a, engine). resolve is nil on
// a coordinator that keeps no uploaded engines.
func ResolveArtifacts(resolve ResolveFunc, which []string, engines ...*arbiterv1.EngineSpec) error {
	for i, e := range engines {
		if e.GetArtifact() == nil && e.GetNet() == nil {
			continue
		}
		if resolve == nil {
			return apierr.Invalid("%s: this coordinator keeps no uploaded engines or nets", which[i])
		}
		if err := CheckEngine(which[i], e); err != nil {
			return err
		}
		if err := resolve(which[i], e); err != nil {
			return err
		}
	}
	return nil
}

// Using says whether any of engines is the uploaded engine sha.
func Using(sha string, engines ...*arbiterv1.EngineSpec) bool {
	for _, h := range ArtifactsOf(engines...) {
		if h == sha {
			return true
		}
	}
	return false
}
