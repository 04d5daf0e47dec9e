package gamepair

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A test's net, as the API receives it: a hash, a prefix or
// default:ENGINE, for the embedded engine or an uploaded one only, never
// beside the option the worker sets; such a test goes only to workers
// that pass nets, and the net counts as an artifact the test uses.
func TestCheckNet(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	builtin := func(n *arbiterv1.EngineNet, opts map[string]string) *arbiterv1.EngineSpec {
		return &arbiterv1.EngineSpec{Name: "dev", Command: "embedded", Protocol: "builtin", Net: n, Options: opts}
	}
	for _, e := range []*arbiterv1.EngineSpec{
		builtin(&arbiterv1.EngineNet{Sha256: sha}, nil),
		builtin(&arbiterv1.EngineNet{Sha256: sha[:8]}, map[string]string{"UseNNUE": "true"}),
		builtin(&arbiterv1.EngineNet{Sha256: "default:dev"}, nil),
		builtin(nil, map[string]string{"SyzygyProbeLimit": "5", "SyzygyProbeDepth": "2", "Syzygy50MoveRule": "false"}),
		{Name: "dev", Artifact: &arbiterv1.EngineArtifact{Sha256: sha}, Net: &arbiterv1.EngineNet{Sha256: sha, Option: "NNUEFile"},
			Options: map[string]string{"EvalFile": "x"}},
	} {
		if err := CheckEngine("engine_a", e); err != nil {
			t.Errorf("%v: %v", e, err)
		}
	}
	for _, c := range []struct {
		e    *arbiterv1.EngineSpec
		want string
	}{
		{builtin(&arbiterv1.EngineNet{Sha256: "abc"}, nil), "a prefix of at least 8 hex digits"},
		{builtin(&arbiterv1.EngineNet{Sha256: "zzzzzzzzzz"}, nil), "not hex"},
		{builtin(&arbiterv1.EngineNet{Sha256: "default:"}, nil), "name the engine"},
		{builtin(&arbiterv1.EngineNet{Sha256: sha, Option: "Eval\nFile"}, nil), "an engine option's name"},
		{builtin(&arbiterv1.EngineNet{Sha256: sha}, map[string]string{"evalfile": "/etc/passwd"}), "is the net's option"},
		// Without a net, a path is still not the submitter's to name: it
		// would be opened on the coordinator and the workers.
		{builtin(nil, map[string]string{"EvalFile": "/etc/passwd"}), "names a file on the workers"},
		{builtin(nil, map[string]string{"UseNNUE": "true", "evalfile": "/root/x.nnue"}), "names a file on the workers"},
		// Tablebases too: SyzygyPath, in any spelling, even a directory the
		// coordinator has (the control beside it: the other Syzygy options
		// pass, below).
		{builtin(nil, map[string]string{"SyzygyPath": "/etc"}), `option "SyzygyPath" names a file on the workers`},
		{builtin(nil, map[string]string{" syzygypath": "/tmp"}), "names a file on the workers"},
		{&arbiterv1.EngineSpec{Name: "sf", Command: "stockfish", Net: &arbiterv1.EngineNet{Sha256: sha}}, "not one installed on the workers"},
	} {
		if err := CheckEngine("engine_a", c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.e, err, c.want)
		}
	}
	e := builtin(&arbiterv1.EngineNet{Sha256: sha}, nil)
	if why := FitsCaps(e, builtin(nil, nil), core.Caps{Tags: []string{capability.Builtin}}); !strings.Contains(why, "passes no nets") {
		t.Errorf("a worker without nets: %q", why)
	}
	if !Using(sha, e) {
		t.Error("the net is not counted as used by the test")
	}
}
