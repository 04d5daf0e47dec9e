package spsa

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

const storedSHA = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// resolveStored is an artifact store holding one binary for linux/amd64.
func resolveStored(which string, e *arbiterv1.EngineSpec) error {
	a := e.GetArtifact()
	if !strings.HasPrefix(storedSHA, a.GetSha256()) {
		return apierr.Invalid("%s: artifact %s: not stored on this coordinator (upload it)", which, apierr.Q(a.GetSha256()))
	}
	a.Sha256, a.Kind, a.Platform, a.Name = storedSHA, arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, "linux/amd64", "dev"
	return nil
}

func uploadedSpec(sha string) *arbiterv1.SpsaSpec {
	spec := tuneSpec(8, 2)
	spec.Engine = &arbiterv1.EngineSpec{Name: "dev", Args: []string{"uci"}, Artifact: &arbiterv1.EngineArtifact{Sha256: sha}}
	return spec
}

func (e *env) register(name, platform string, tags ...string) *core.Worker {
	e.T.Helper()
	w, err := e.C.Register(context.Background(), alice, name, core.Caps{Cores: 1, Tags: tags, BenchNPS: 1_000_000, Platform: platform})
	if err != nil {
		e.T.Fatal(err)
	}
	return w
}

// A tune of an uploaded engine is completed from the artifact store, its
// batches go only to workers that run uploaded engines of its platform,
// and the store is told it is in use until it ends.
func TestUploadedEngineTune(t *testing.T) {
	e := newEnv(t, Config{ResolveArtifact: resolveStored})
	id := e.create(uploadedSpec(storedSHA[:12]))
	art := e.Job(id).GetSpsa().GetEngine().GetArtifact()
	if art.GetSha256() != storedSHA || art.GetPlatform() != "linux/amd64" {
		t.Fatalf("stored artifact %v, want the store's", art)
	}
	for _, w := range []*core.Worker{
		e.register("plain", "linux/amd64", capability.GamePair),
		e.register("arm", "linux/arm64", capability.GamePair, capability.Artifacts),
	} {
		if g, ok := e.Lease(w); ok {
			t.Fatalf("worker %s got %s of a tune it cannot run", w.Name, g.Lease.UnitID)
		}
	}
	fit := e.register("fit", "linux/amd64", capability.GamePair, capability.Artifacts)
	b := gamepairtest.BatchOf(e.MustLease(fit))
	for _, side := range []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()} {
		if side.GetArtifact().GetSha256() != storedSHA || !slices.Equal(side.GetArgs(), []string{"uci"}) ||
			side.GetOptions()["RFPMargin"] == "" || side.GetOptions()["FutMargin"] == "" {
			t.Fatalf("batch engine %v: want the artifact with args uci and both parameters set", side)
		}
	}
	if got := e.WL.UsingArtifact(storedSHA); !slices.Equal(got, []string{id}) {
		t.Fatalf("UsingArtifact while running: %v", got)
	}
	if got := e.WL.UsingArtifact(strings.Repeat("f", 64)); len(got) != 0 {
		t.Fatalf("UsingArtifact of another engine: %v", got)
	}
	// A stored tune loads complete (the store is not asked again) and
	// keeps both rules.
	e.Cfg.ResolveArtifact = nil
	e.Restart()
	if got := e.WL.UsingArtifact(storedSHA); !slices.Equal(got, []string{id}) {
		t.Fatalf("UsingArtifact after a restart: %v", got)
	}
	if g, ok := e.Lease(e.register("plain2", "linux/amd64", capability.GamePair)); ok {
		t.Fatalf("after a restart, a worker without artifacts got %s", g.Lease.UnitID)
	}
	if b := gamepairtest.BatchOf(e.MustLease(e.register("fit2", "linux/amd64", capability.GamePair, capability.Artifacts))); b.GetEngineA().GetArtifact().GetSha256() != storedSHA {
		t.Fatalf("after a restart: batch engine %v", b.GetEngineA())
	}
	if err := e.C.Cancel(context.Background(), carol, id, "test over"); err != nil {
		t.Fatal(err)
	}
	if got := e.WL.UsingArtifact(storedSHA); len(got) != 0 {
		t.Fatalf("UsingArtifact after the tune ended: %v", got)
	}
}

// An artifact the store lacks, or a coordinator that keeps none, refuses
// the tune naming the engine, and nothing is stored.
func TestUploadedEngineTuneRefused(t *testing.T) {
	for _, c := range []struct {
		resolve gamepair.ResolveFunc
		want    string
	}{
		{resolveStored, `engine: artifact "deadbeefdeadbeef": not stored`},
		{nil, "engine: this coordinator keeps no uploaded engines"},
	} {
		e := newEnv(t, Config{ResolveArtifact: c.resolve})
		_, err := e.C.Create(context.Background(), carol, Kind, uploadedSpec("deadbeefdeadbeef"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
		if n := len(e.WL.Jobs); n != 0 {
			t.Errorf("%d tunes kept after a refusal", n)
		}
	}
}
