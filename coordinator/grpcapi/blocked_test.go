package grpcapi

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A running job says why no live worker can take it: none connected, none
// with the capabilities its units need, or none that fits its engines (an
// uploaded engine, a per-engine time control), with the first reason. The
// needs are those the game workloads give (gamepair.Set.Needs).
func TestBlockedReason(t *testing.T) {
	cmd := &arbiterv1.EngineSpec{Name: "a", Command: "/usr/games/stockfish"}
	binary := &arbiterv1.EngineSpec{Name: "b", Artifact: &arbiterv1.EngineArtifact{
		Sha256: strings.Repeat("ab", 32), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Platform: "linux/arm64"}}
	source := &arbiterv1.EngineSpec{Name: "s", Artifact: &arbiterv1.EngineArtifact{
		Sha256: strings.Repeat("cd", 32), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE}}
	test := func(a, b *arbiterv1.EngineSpec) core.Need {
		return core.Need{Caps: []string{capability.GamePair}, Fits: func(c core.Caps) string { return gamepair.FitsCaps(a, b, c) }}
	}
	tune := test(binary, binary)
	perft := core.Need{Caps: []string{capability.Perft}}
	games := core.Caps{Tags: []string{"game-pair"}, Platform: "linux/amd64"}
	artifacts := core.Caps{Tags: []string{"game-pair", "artifacts"}, Platform: "linux/amd64"}
	arm := core.Caps{Tags: []string{"game-pair", "artifacts", "source-build"}, Platform: "linux/arm64"}
	cases := []struct {
		name string
		job  core.Need
		live []core.Caps
		want string // "" or a part of the reason
	}{
		{"no worker", perft, nil, "no worker connected"},
		{"no perft worker", perft, []core.Caps{games}, "none of the 1 connected workers offers perft"},
		{"plain test", test(cmd, cmd), []core.Caps{games}, ""},
		{"upload, no artifacts", test(cmd, binary), []core.Caps{games}, "none of the 1 connected workers can run its engines: the worker does not run uploaded engines"},
		{"upload, other platform", test(cmd, binary), []core.Caps{games, artifacts}, "can run its engines: the worker does not run uploaded engines"},
		{"upload, its platform", test(cmd, binary), []core.Caps{games, arm}, ""},
		{"source, no compiler", test(source, cmd), []core.Caps{artifacts}, "the worker has no compiler for source builds"},
		{"tune of an upload", tune, []core.Caps{artifacts}, "the engine is built for linux/arm64, the worker is linux/amd64"},
		{"tune of an upload, fits", tune, []core.Caps{artifacts, arm}, ""},
		{"own time control, old worker", test(&arbiterv1.EngineSpec{Name: "t", Command: "x", TimeControl: &arbiterv1.TimeControl{}}, cmd),
			[]core.Caps{games}, "per-engine time controls"},
	}
	for _, c := range cases {
		got := blockedReason(c.job, c.live)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
