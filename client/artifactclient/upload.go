package artifactclient

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/gitsource"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// attempts bounds how often a broken upload is resumed.
const attempts = 5

// Upload sends a packed engine to the coordinator: nothing when it stores
// the content already, else the bytes from where an earlier upload of the
// same content stopped; a stream that breaks is resumed. progress, when
// set, gets one line per step.
func Upload(ctx context.Context, conn grpc.ClientConnInterface, p *Packed, progress io.Writer) (*arbiterv1.Artifact, error) {
	cl := arbiterv1.NewArtifactServiceClient(conn)
	say := func(format string, args ...any) {
		if progress != nil {
			fmt.Fprintf(progress, format+"\n", args...)
		}
	}
	what := "engine"
	if p.Request.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
		what = "net"
	}
	var lastErr error
	for range attempts {
		begin, err := cl.BeginUpload(ctx, p.Request)
		if err != nil {
			return nil, err
		}
		if a := begin.GetArtifact(); a != nil {
			say("%s %s: %s already stored (%d bytes), nothing sent", what, p.Request.GetName(), short(a.GetSha256()), a.GetSize())
			return a, nil
		}
		a, err := send(ctx, cl, p, int64(begin.GetOffset()), int(begin.GetChunkBytes()))
		if err == nil && a != nil {
			if begin.GetOffset() > 0 {
				say("%s %s: uploaded %s (%d bytes, resumed at %d)", what, p.Request.GetName(), short(a.GetSha256()), a.GetSize(), begin.GetOffset())
			} else {
				say("%s %s: uploaded %s (%d bytes)", what, p.Request.GetName(), short(a.GetSha256()), a.GetSize())
			}
			return a, nil
		}
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		lastErr = err
		if err != nil && !retryable(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("upload of %s %s broke %d times: %v", what, p.Request.GetName(), attempts, lastErr)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// send streams the pack from offset; it returns the artifact once the
// coordinator has it all.
func send(ctx context.Context, cl arbiterv1.ArtifactServiceClient, p *Packed, offset int64, chunk int) (*arbiterv1.Artifact, error) {
	if chunk <= 0 || chunk > 4<<20 {
		chunk = 1 << 20
	}
	f, err := os.Open(p.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	stream, err := cl.Upload(ctx)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, chunk)
	at := offset
	for at < p.Size {
		n, err := io.ReadFull(f, buf[:min(int64(chunk), p.Size-at)])
		if err != nil {
			stream.CloseSend()
			return nil, fmt.Errorf("%s changed while uploading: %w", p.Path, err)
		}
		if err := stream.Send(&arbiterv1.UploadRequest{Sha256: p.SHA256, Offset: uint64(at), Data: buf[:n]}); err != nil {
			// The answer says why the stream ended.
			_, rerr := stream.CloseAndRecv()
			if rerr != nil {
				return nil, rerr
			}
			return nil, err
		}
		at += int64(n)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return nil, err
	}
	return resp.GetArtifact(), nil
}

// retryable: a stream that broke (the coordinator kept what it got).
func retryable(err error) bool {
	switch statusCode(err) {
	case "Unavailable", "DeadlineExceeded", "Aborted", "Canceled":
		return true
	}
	return false
}

// UploadEngines uploads the engines of a cluster test that name upload= or
// source= and puts their hashes in spec (artifact= ones are the
// coordinator's to check).
func UploadEngines(ctx context.Context, conn grpc.ClientConnInterface, travel [2]enginespec.Spec, spec *arbiterv1.MatchSpec, progress io.Writer) error {
	for i, e := range []*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()} {
		if err := UploadEngine(ctx, conn, travel[i], e, progress); err != nil {
			return err
		}
	}
	return nil
}

// UploadEngine uploads engine e of a cluster job when t names upload= or
// source= and puts its hash in e (an artifact= one is the coordinator's to
// check; any other is left alone).
func UploadEngine(ctx context.Context, conn grpc.ClientConnInterface, t enginespec.Spec, e *arbiterv1.EngineSpec, progress io.Writer) error {
	if err := UploadNet(ctx, conn, t, e, progress); err != nil {
		return err
	}
	if t.Upload == "" && t.Source == "" {
		return nil
	}
	if git, ok := strings.CutPrefix(t.Source, "git:"); ok {
		if repo, ref, err := gitsource.Split(git); err == nil && gitsource.IsRemote(repo) {
			// The coordinator fetches a remote repository itself: send the
			// URL and the ref, no bytes.
			if e.Artifact == nil {
				e.Artifact = &arbiterv1.EngineArtifact{}
			}
			e.Artifact.Kind, e.Artifact.Repository, e.Artifact.Branch = arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE, repo, ref
			fmt.Fprintf(progress, "engine %s: the coordinator fetches %s at %s\n", t.Name, gitsource.Redact(repo), ref)
			return nil
		}
	}
	p, err := Pack(t)
	if err != nil {
		return err
	}
	a, err := Upload(ctx, conn, p, progress)
	p.Close()
	if err != nil {
		return fmt.Errorf("engine %s: upload: %w", t.Name, err)
	}
	if e.Artifact == nil {
		e.Artifact = &arbiterv1.EngineArtifact{}
	}
	e.Artifact.Sha256 = a.GetSha256()
	if e.Artifact.Bench == 0 {
		e.Artifact.Bench = a.GetBench()
	}
	return nil
}

// UploadNet uploads the net file of engine e of a cluster test when t
// names net=FILE and puts its hash in e (a net=SHA is the coordinator's
// to check). The net is filed under the engine's name.
func UploadNet(ctx context.Context, conn grpc.ClientConnInterface, t enginespec.Spec, e *arbiterv1.EngineSpec, progress io.Writer) error {
	if t.NetFile == "" {
		return nil
	}
	p, err := PackNet(t.NetFile, "", t.Name)
	if err != nil {
		return fmt.Errorf("engine %s: %w", t.Name, err)
	}
	a, err := Upload(ctx, conn, p, progress)
	p.Close()
	if err != nil {
		return fmt.Errorf("engine %s: net upload: %w", t.Name, err)
	}
	if e.Net == nil {
		e.Net = &arbiterv1.EngineNet{Option: t.NetOption}
	}
	e.Net.Sha256 = a.GetSha256()
	return nil
}

func statusCode(err error) string { return status.Code(err).String() }

// Uploaded lists the names of a test's engines that travel to the workers
// (or whose nets do).
func Uploaded(spec *arbiterv1.MatchSpec) []string {
	var out []string
	for _, e := range []*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()} {
		if e.GetArtifact() != nil || e.GetNet() != nil {
			out = append(out, e.GetName())
		}
	}
	return out
}
