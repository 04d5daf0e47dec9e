package worker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// fakeArtifacts serves one artifact's bytes; breakAt, when set, ends the
// first download with an error after that many bytes (a broken stream).
type fakeArtifacts struct {
	arbiterv1.UnimplementedArtifactServiceServer
	data    []byte
	breakAt int

	mu      sync.Mutex
	offsets []uint64
	reports []*arbiterv1.ReportArtifactRequest
}

func (f *fakeArtifacts) Download(req *arbiterv1.DownloadRequest, stream arbiterv1.ArtifactService_DownloadServer) error {
	f.mu.Lock()
	f.offsets = append(f.offsets, req.GetOffset())
	first := len(f.offsets) == 1
	f.mu.Unlock()
	end := len(f.data)
	if first && f.breakAt > 0 {
		end = f.breakAt
	}
	for at := int(req.GetOffset()); at < end; at += 1000 {
		if err := stream.Send(&arbiterv1.DownloadResponse{Data: f.data[at:min(at+1000, end)], Size: uint64(len(f.data))}); err != nil {
			return err
		}
	}
	if end < len(f.data) {
		return status.Error(codes.Unavailable, "connection lost")
	}
	return nil
}

func (f *fakeArtifacts) ReportArtifact(_ context.Context, req *arbiterv1.ReportArtifactRequest) (*arbiterv1.ReportArtifactResponse, error) {
	f.mu.Lock()
	f.reports = append(f.reports, req)
	f.mu.Unlock()
	return &arbiterv1.ReportArtifactResponse{}, nil
}

func serveArtifacts(t *testing.T, f *fakeArtifacts) *grpc.ClientConn {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	arbiterv1.RegisterArtifactServiceServer(srv, f)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func shaOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func newCache(t *testing.T, conn *grpc.ClientConn, dir string) *artifactCache {
	t.Helper()
	c, err := newArtifactCache(Config{Conn: conn, DataDir: dir, Unsandboxed: true, AllowUploads: true}, zaptest.NewLogger(t), newArtifactMetrics(nil))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A download that breaks, and one a killed worker left half done, resume
// from the bytes the worker has; the hash is checked before use.
func TestFetchResumes(t *testing.T) {
	data := bytes.Repeat([]byte("engine bytes "), 3000)
	f := &fakeArtifacts{data: data, breakAt: 10000}
	conn := serveArtifacts(t, f)
	dir := t.TempDir()
	c := newCache(t, conn, dir)
	a := &arbiterv1.EngineArtifact{Sha256: shaOf(data), Size: uint64(len(data)), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY}
	obj, cached, err := c.fetch(context.Background(), a.GetSha256(), a.GetSize())
	if err != nil || cached {
		t.Fatalf("fetch: %v (cached %v)", err, cached)
	}
	if got, _ := os.ReadFile(obj); !bytes.Equal(got, data) {
		t.Fatal("fetched bytes differ")
	}
	if len(f.offsets) != 2 || f.offsets[0] != 0 || f.offsets[1] != 10000 {
		t.Fatalf("download offsets %v, want [0 10000]", f.offsets)
	}
	// A worker killed mid-download: the partial file is there at start.
	other := bytes.Repeat([]byte("other engine "), 2000)
	part := filepath.Join(dir, "artifacts", "partial", shaOf(other))
	os.WriteFile(part, other[:7000], 0o644)
	// A build killed half-way is removed at start.
	stale := filepath.Join(dir, "artifacts", "builds", "abc.tmp-1")
	os.MkdirAll(stale, 0o755)
	f2 := &fakeArtifacts{data: other}
	c2 := newCache(t, serveArtifacts(t, f2), dir)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale build left: %v", err)
	}
	if _, _, err := c2.fetch(context.Background(), shaOf(other), uint64(len(other))); err != nil {
		t.Fatal(err)
	}
	if len(f2.offsets) != 1 || f2.offsets[0] != 7000 {
		t.Fatalf("resumed at %v, want 7000", f2.offsets)
	}
	// Bytes that do not hash to the name are refused and discarded.
	f3 := &fakeArtifacts{data: []byte("what the coordinator sends")}
	c3 := newCache(t, serveArtifacts(t, f3), t.TempDir())
	wrong := shaOf([]byte("what the test names"))
	_, _, err = c3.fetch(context.Background(), wrong, uint64(len(f3.data)))
	var r *refusal
	if !errors.As(err, &r) || !strings.Contains(r.detail, "hash mismatch") {
		t.Fatalf("hash mismatch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c3.dir, "objects", wrong)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("mismatched bytes kept")
	}
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// A source tree is built once, then found in the cache; the bench is
// checked against the signature; the cache keeps to its size.
func TestPrepareBuildsOnceAndChecksTheBench(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	src := tarGz(t, map[string]string{
		"Makefile": "engine: e.c\n\tcc -o engine e.c\n",
		"e.c":      "#include <stdio.h>\nint main(int c, char **v) { printf(\"Nodes searched: 4242\\n\"); return 0; }\n",
	})
	f := &fakeArtifacts{data: src}
	c := newCache(t, serveArtifacts(t, f), t.TempDir())
	e := &arbiterv1.EngineSpec{Name: "dev", Artifact: &arbiterv1.EngineArtifact{Sha256: shaOf(src), Size: uint64(len(src)),
		Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE, Build: "make", Bench: 4242}}
	for _, job := range []string{"s1", "s1", "s2"} {
		p, err := c.prepare(context.Background(), "w-1", job, e)
		if err != nil {
			t.Fatalf("%s: %v", job, err)
		}
		if !strings.HasSuffix(p.spec.GetCommand(), "engine") || p.spec.GetArtifact() != nil {
			t.Fatalf("prepared %v", p.spec)
		}
		c.done(p)
	}
	if n := testutil.ToFloat64(c.m.builds.WithLabelValues("ok")); n != 1 {
		t.Fatalf("%v builds", n)
	}
	if n := testutil.ToFloat64(c.m.downloads.WithLabelValues("download")); n != 1 {
		t.Fatalf("%v downloads", n)
	}
	if n := testutil.ToFloat64(c.m.benches.WithLabelValues("match")); n != 1 {
		t.Fatalf("%v bench runs", n)
	}
	// s1 reported fetched, built, verified once; s2 the same from the cache.
	var states []string
	for _, r := range f.reports {
		states = append(states, r.GetJobId()+":"+strings.TrimPrefix(r.GetState().String(), "ARTIFACT_CHECK_STATE_")+":"+r.GetDetail())
	}
	want := "s1:FETCHED:download s1:BUILT:built s1:VERIFIED:bench matches the signature s2:FETCHED:cache s2:BUILT:cache s2:VERIFIED:cache"
	if got := strings.Join(states, " "); got != want {
		t.Fatalf("reports\n%s\nwant\n%s", got, want)
	}
	// Another signature: refused, with the bench's output.
	bad := &arbiterv1.EngineSpec{Name: "dev", Artifact: &arbiterv1.EngineArtifact{Sha256: shaOf(src), Size: uint64(len(src)),
		Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE, Build: "make", Bench: 1}}
	_, err := c.prepare(context.Background(), "w-1", "s3", bad)
	var r *refusal
	if !errors.As(err, &r) || r.state != arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH || !strings.Contains(r.log, "4242") {
		t.Fatalf("wrong signature: %v", err)
	}
	// A cache of one byte keeps nothing that is not in use.
	c.maxBytes = 1
	c.trim()
	if left, _ := os.ReadDir(filepath.Join(c.dir, "builds")); len(left) != 0 {
		t.Fatalf("cache not trimmed: %v", left)
	}
}
