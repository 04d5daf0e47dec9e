package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/engine/nnue"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A worker with a data directory but without --allow-uploads keeps nets
// for the embedded engine: it fetches a test's net, checks it loads, and
// hands the engine its path in EvalFile with UseNNUE on; a file of
// another architecture is refused and reported as the net's step.
func TestNetForTheEmbeddedEngine(t *testing.T) {
	good, err := nnue.NewRandom(3).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeArtifacts{data: good}
	c, err := newArtifactCache(Config{Conn: serveArtifacts(t, f), DataDir: t.TempDir()}, zaptest.NewLogger(t), newArtifactMetrics(nil))
	if err != nil || c == nil {
		t.Fatalf("cache: %v %v", c, err)
	}
	if caps := c.capabilities(); len(caps) != 1 || caps[0] != capability.Nets {
		t.Fatalf("capabilities without --allow-uploads: %v", caps)
	}
	e := &arbiterv1.EngineSpec{Name: "dev", Command: "embedded", Protocol: "builtin",
		Net: &arbiterv1.EngineNet{Sha256: shaOf(good), Size: uint64(len(good))}}
	p, err := c.prepare(context.Background(), "w1", "s1", e)
	if err != nil {
		t.Fatal(err)
	}
	opts := p.spec.GetOptions()
	if p.spec.GetNet() != nil || opts["UseNNUE"] != "true" || filepath.Base(opts["EvalFile"]) != shaOf(good) {
		t.Fatalf("engine as played: %v", p.spec)
	}
	if got, _ := os.ReadFile(opts["EvalFile"]); string(got) != string(good) {
		t.Fatal("the net's file is not the net")
	}
	c.done(p)
	f.mu.Lock()
	if n := len(f.reports); n != 2 || f.reports[0].GetEngine() != "dev net" || f.reports[1].GetDetail() != "the engine loaded it" {
		t.Fatalf("reports: %v", f.reports)
	}
	f.mu.Unlock()

	// Another architecture's size: refused, as the engine's EvalFile would.
	other := append(append([]byte(nil), good...), make([]byte, 64)...)
	f2 := &fakeArtifacts{data: other}
	c2, err := newArtifactCache(Config{Conn: serveArtifacts(t, f2), DataDir: t.TempDir()}, zaptest.NewLogger(t), newArtifactMetrics(nil))
	if err != nil {
		t.Fatal(err)
	}
	e.Net = &arbiterv1.EngineNet{Sha256: shaOf(other), Size: uint64(len(other))}
	_, err = c2.prepare(context.Background(), "w1", "s2", e)
	var r *refusal
	if !errors.As(err, &r) || !r.net || !strings.Contains(r.detail, `engine "dev" rejects net `+shaOf(other)[:12]) {
		t.Fatalf("foreign net: %v", err)
	}
	// An uploaded engine is not run by a worker that keeps nets only.
	e.Artifact = &arbiterv1.EngineArtifact{Sha256: shaOf(good), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY}
	e.Net = &arbiterv1.EngineNet{Sha256: shaOf(good), Size: uint64(len(good))}
	if _, err := c.prepare(context.Background(), "w1", "s3", e); err == nil || !strings.Contains(err.Error(), "runs no uploaded engines") {
		t.Fatalf("uploaded engine on a nets-only worker: %v", err)
	}
}

// An uploaded engine gets its net in a UCI session before the first game:
// an engine that loads it plays (the net's path in EvalFile, after it in
// the session the test's other options); one that prints an error is
// refused with its line.
func TestNetForAnUploadedEngine(t *testing.T) {
	dir := t.TempDir()
	script := func(name, onNet string) []byte {
		return []byte("#!/bin/sh\n# " + name + "\nwhile read -r line; do\n  case \"$line\" in\n" +
			"    uci) echo uciok ;;\n" +
			"    \"setoption name EvalFile value \"*) " + onNet + " ;;\n" +
			"    isready) echo readyok ;;\n" +
			"    quit) exit 0 ;;\n  esac\ndone\n")
	}
	netBytes := []byte("a net in some engine's own format")
	for _, c := range []struct {
		name, onNet, want string
	}{
		{"takes", ": ", ""},
		{"rejects", "echo 'info string ERROR: network file could not be loaded'", "rejects net " + shaOf(netBytes)[:12] + ": info string ERROR: network file could not be loaded"},
	} {
		prog := script(c.name, c.onNet)
		// One coordinator serves the program and the net by hash.
		f := &multiArtifacts{blobs: map[string][]byte{shaOf(prog): prog, shaOf(netBytes): netBytes}}
		cache := newCache(t, serveMulti(t, f), filepath.Join(dir, c.name))
		e := &arbiterv1.EngineSpec{Name: "dev", Options: map[string]string{"Hash": "16"},
			Artifact: &arbiterv1.EngineArtifact{Sha256: shaOf(prog), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Size: uint64(len(prog))},
			Net:      &arbiterv1.EngineNet{Sha256: shaOf(netBytes), Size: uint64(len(netBytes))}}
		p, err := cache.prepare(context.Background(), "w1", "s1", e)
		if c.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if ev := p.spec.GetOptions()["EvalFile"]; filepath.Base(ev) != shaOf(netBytes) || p.spec.GetNet() != nil || p.spec.GetOptions()["UseNNUE"] != "" {
				t.Fatalf("%s: engine as played: %v", c.name, p.spec)
			}
			cache.done(p)
			continue
		}
		var r *refusal
		if !errors.As(err, &r) || !r.net || !strings.Contains(r.detail, c.want) {
			t.Fatalf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// The bench runs in the session, after the net: its count is the
	// engine's with that net (this engine searches 4242 nodes with a net,
	// 1111 without).
	bench := []byte("#!/bin/sh\nn=1111\nwhile read -r line; do\n  case \"$line\" in\n" +
		"    uci) echo uciok ;;\n" +
		"    \"setoption name EvalFile value \"*) n=4242 ;;\n" +
		"    isready) echo readyok ;;\n" +
		"    bench) echo \"Nodes searched  : $n\" ;;\n" +
		"    quit) exit 0 ;;\n  esac\ndone\n")
	for _, c := range []struct {
		sig  uint64
		want string
	}{{4242, ""}, {1111, "bench 4242 nodes, the test's signature is 1111"}} {
		f := &multiArtifacts{blobs: map[string][]byte{shaOf(bench): bench, shaOf(netBytes): netBytes}}
		cache := newCache(t, serveMulti(t, f), filepath.Join(dir, fmt.Sprint("bench", c.sig)))
		e := &arbiterv1.EngineSpec{Name: "dev",
			Artifact: &arbiterv1.EngineArtifact{Sha256: shaOf(bench), Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Size: uint64(len(bench)), Bench: c.sig},
			Net:      &arbiterv1.EngineNet{Sha256: shaOf(netBytes), Size: uint64(len(netBytes))}}
		p, err := cache.prepare(context.Background(), "w1", "s1", e)
		if c.want == "" {
			if err != nil {
				t.Fatalf("bench %d with the net: %v", c.sig, err)
			}
			cache.done(p)
			continue
		}
		var r *refusal
		if !errors.As(err, &r) || r.state != arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH || !strings.Contains(r.detail, c.want) {
			t.Fatalf("bench %d: %v, want %q", c.sig, err, c.want)
		}
	}
}

// multiArtifacts serves several artifacts by hash (an engine and its net).
type multiArtifacts struct {
	arbiterv1.UnimplementedArtifactServiceServer
	blobs map[string][]byte
}

func (m *multiArtifacts) Download(req *arbiterv1.DownloadRequest, stream arbiterv1.ArtifactService_DownloadServer) error {
	data := m.blobs[req.GetSha256()]
	for at := int(req.GetOffset()); at < len(data); at += 1000 {
		if err := stream.Send(&arbiterv1.DownloadResponse{Data: data[at:min(at+1000, len(data))], Size: uint64(len(data))}); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiArtifacts) ReportArtifact(context.Context, *arbiterv1.ReportArtifactRequest) (*arbiterv1.ReportArtifactResponse, error) {
	return &arbiterv1.ReportArtifactResponse{}, nil
}

func serveMulti(t *testing.T, m *multiArtifacts) *grpc.ClientConn {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	arbiterv1.RegisterArtifactServiceServer(srv, m)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
