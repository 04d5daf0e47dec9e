package artifacts

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// storeNet uploads data as a net of engine by id and returns its hash.
func (f *fixture) storeNet(t *testing.T, data []byte, engine string) string {
	t.Helper()
	sha := hashOf(data)
	req := &arbiterv1.BeginUploadRequest{Sha256: sha, Size: uint64(len(data)), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET,
		Name: "nn-" + sha[:12] + ".nnue", Engine: engine}
	a, _, err := f.arts.BeginUpload(alice, req)
	if err != nil {
		t.Fatal(err)
	}
	if a == nil {
		if a, _, err = f.arts.Upload(context.Background(), alice, chunks(sha, data, 0, 1000, -1)); err != nil || a == nil {
			t.Fatalf("upload: %v %v", a, err)
		}
	}
	return sha
}

// A net is an artifact of kind net: stored once, attributed, kept with its
// engine across a restart; a test's net resolves by hash, prefix or its
// engine's default, and an engine artifact is not a net (nor a net an
// engine).
func TestNetsStoreResolveAndDefaults(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture(t, dir)
	net := []byte(strings.Repeat("net-bytes", 300))
	sha := f.storeNet(t, net, "dev")
	// Again, by someone else: nothing sent, the first upload's record.
	again, _, err := f.arts.BeginUpload(bob, &arbiterv1.BeginUploadRequest{Sha256: sha, Size: uint64(len(net)),
		Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET, Name: "other", Engine: "x"})
	if err != nil || again == nil || again.Uploader != "alice" || again.Engine != "dev" {
		t.Fatalf("second upload of the same net: %+v %v", again, err)
	}
	if list, total := f.arts.List(0, arbiterv1.ArtifactKind_ARTIFACT_KIND_NET); len(list) != 1 || total != int64(len(net)) {
		t.Fatalf("nets listed: %d, %d bytes", len(list), total)
	}
	eng := []byte("#!/bin/sh\necho engine\n")
	engSHA := hashOf(eng)
	if _, _, err := f.arts.BeginUpload(alice, begin(engSHA, len(eng))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.arts.Upload(ctx, alice, chunks(engSHA, eng, 0, 1000, -1)); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.arts.List(0, arbiterv1.ArtifactKind_ARTIFACT_KIND_NET); len(list) != 1 {
		t.Fatalf("an engine listed among the nets: %d", len(list))
	}

	n := &arbiterv1.EngineNet{Sha256: sha[:10]}
	if err := f.arts.FillNet("engine_a", n); err != nil || n.GetSha256() != sha || n.GetSize() != uint64(len(net)) || n.GetName() != "nn-"+sha[:12]+".nnue" {
		t.Fatalf("fill by prefix: %v %v", n, err)
	}
	for _, c := range []struct{ ref, want string }{
		{"0123456789abcdef", "not stored on this coordinator"},
		{engSHA, "is an engine, not a net"},
		{"default:dev", "has no default net"},
	} {
		if err := f.arts.FillNet("engine_a", &arbiterv1.EngineNet{Sha256: c.ref}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("net %s: %v, want %q", c.ref, err, c.want)
		}
	}
	if err := f.arts.Fill("engine_a", &arbiterv1.EngineArtifact{Sha256: sha}); err == nil || !strings.Contains(err.Error(), "is a net, not an engine") {
		t.Errorf("a net as an engine: %v", err)
	}
	if _, err := f.arts.SetDefaultNet(ctx, alice, "dev", engSHA); err == nil {
		t.Error("an engine made a default net")
	}
	if _, err := f.arts.SetDefaultNet(ctx, worker, "dev", sha); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Errorf("a worker set a default net: %v", err)
	}
	if a, err := f.arts.SetDefaultNet(ctx, alice, "dev", sha[:8]); err != nil || a.SHA256 != sha {
		t.Fatalf("set default: %v %v", a, err)
	}
	n = &arbiterv1.EngineNet{Sha256: "default:dev"}
	if err := f.arts.FillNet("engine_a", n); err != nil || n.GetSha256() != sha {
		t.Fatalf("default net: %v %v", n, err)
	}

	// A restart keeps the net's engine and the default.
	f.st.Close()
	f2 := newFixture(t, dir)
	if a, err := f2.arts.Resolve(sha); err != nil || a.Engine != "dev" || arbiterv1.ArtifactKind(a.Kind) != arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
		t.Fatalf("after a restart: %+v %v", a, err)
	}
	if got := f2.arts.DefaultOf(sha); len(got) != 1 || got[0] != "dev" {
		t.Fatalf("defaults after a restart: %v", got)
	}
	// In use: not removed; then removed, and no default any more.
	f2.inUse[sha] = []string{"s123"}
	if err := f2.arts.Delete(ctx, alice, sha); apierr.ReasonOf(err) != apierr.ReasonInUse {
		t.Fatalf("removed while in use: %v", err)
	}
	delete(f2.inUse, sha)
	if err := f2.arts.Delete(ctx, alice, sha); err != nil {
		t.Fatal(err)
	}
	if err := f2.arts.FillNet("engine_a", &arbiterv1.EngineNet{Sha256: "default:dev"}); err == nil {
		t.Fatal("a removed net is still a default")
	}
	if d, err := f2.st.DefaultNets(ctx); err != nil || len(d) != 0 {
		t.Fatalf("defaults stored after the net's removal: %v %v", d, err)
	}
}

// A net upload that says it is an engine (a build command, a bench) is
// refused, and so is an engine upload that names an engine for a net.
func TestNetUploadRefusals(t *testing.T) {
	f := newFixture(t, "")
	sha := hashOf([]byte("x"))
	for _, req := range []*arbiterv1.BeginUploadRequest{
		{Sha256: sha, Size: 1, Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET, Build: "make"},
		{Sha256: sha, Size: 1, Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET, Bench: 5},
		{Sha256: sha, Size: 1, Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Engine: "dev"},
		{Sha256: sha, Size: 1, Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET, Engine: "dev\n"},
	} {
		if _, _, err := f.arts.BeginUpload(alice, req); apierr.ReasonOf(err) != apierr.ReasonBadInput {
			t.Errorf("%v: %v", req, err)
		}
	}
}
