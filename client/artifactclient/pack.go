// Package artifactclient is the client side of the coordinator's engine
// artifacts: it packs an engine the user names (a program, a source tree,
// a commit of a local git repository) and uploads it, resuming a broken
// upload where the coordinator's copy stopped.
package artifactclient

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/gitsource"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// MaxBytes is the largest artifact the client packs (the coordinator may
// take less).
const MaxBytes = 1 << 30

// Packed is an engine ready to upload: a file and what to say of it.
type Packed struct {
	Path    string
	Size    int64
	SHA256  string
	Request *arbiterv1.BeginUploadRequest
	temp    bool
}

// Close removes a temporary pack.
func (p *Packed) Close() {
	if p != nil && p.temp {
		os.Remove(p.Path)
	}
}

// Pack prepares what spec names (upload=, source=) for an upload.
func Pack(spec enginespec.Spec) (*Packed, error) {
	req := &arbiterv1.BeginUploadRequest{Name: spec.Name, Build: spec.Build, Exe: spec.Exe, Bench: spec.Bench}
	var p *Packed
	var err error
	switch {
	case spec.Upload != "":
		req.Kind = arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY
		p, err = packFile(spec.Upload)
	case strings.HasPrefix(spec.Source, "git:"):
		req.Kind = arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE
		p, err = packGit(strings.TrimPrefix(spec.Source, "git:"), req)
	case spec.Source != "":
		req.Kind = arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE
		p, err = packDir(spec.Source)
	default:
		return nil, fmt.Errorf("engine %q: nothing to upload", spec.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("engine %q: %w", spec.Name, err)
	}
	p.Request = req
	req.Sha256, req.Size = p.SHA256, uint64(p.Size)
	return p, nil
}

// NetName is a net's default name: "nn-" and the first 12 hex digits of
// its SHA-256, as Stockfish and OpenBench name nets.
func NetName(sha string) string { return "nn-" + short(sha) + ".nnue" }

// PackNet prepares a net file for an upload (`arbiter net upload`, or a
// test's net=FILE): named name (NetName when empty), for engine.
func PackNet(path, name, engine string) (*Packed, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("net %s: %w", path, err)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return nil, fmt.Errorf("net %s: not a net file (a non-empty regular file)", path)
	}
	if st.Size() > MaxBytes {
		return nil, fmt.Errorf("net %s: %d bytes, over %d", path, st.Size(), MaxBytes)
	}
	sha, n, err := hashOf(path)
	if err != nil {
		return nil, fmt.Errorf("net %s: %w", path, err)
	}
	if name == "" {
		name = NetName(sha)
	}
	req := &arbiterv1.BeginUploadRequest{Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET, Name: name, Engine: engine, Sha256: sha, Size: uint64(n)}
	return &Packed{Path: path, Size: n, SHA256: sha, Request: req}, nil
}

// PackPath packs a program (a file) or a source tree (a directory) for
// `arbiter engine upload`.
func PackPath(path string, spec enginespec.Spec) (*Packed, error) {
	if strings.HasPrefix(path, "git:") {
		spec.Source = path
		return Pack(spec)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		spec.Source = path
	} else {
		spec.Upload = path
	}
	return Pack(spec)
}

func hashOf(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func packFile(path string) (*Packed, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("upload=%s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("upload=%s is a directory: a source tree is source=DIR with build=CMD", path)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return nil, fmt.Errorf("upload=%s: not a program (a non-empty regular file)", path)
	}
	if st.Size() > MaxBytes {
		return nil, fmt.Errorf("upload=%s: %d bytes, over %d", path, st.Size(), MaxBytes)
	}
	sha, n, err := hashOf(path)
	if err != nil {
		return nil, fmt.Errorf("upload=%s: %w", path, err)
	}
	return &Packed{Path: path, Size: n, SHA256: sha}, nil
}

// packDir writes a directory as a gzip-compressed tar with fixed times and
// owners, in name order, so that the same tree gives the same bytes (and
// is stored once). .git and other version-control directories stay out.
func packDir(dir string) (*Packed, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("source=%s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("source=%s: not a directory (a program is upload=PATH)", dir)
	}
	tmp, err := os.CreateTemp("", "arbiter-source-*.tar.gz")
	if err != nil {
		return nil, err
	}
	p := &Packed{Path: tmp.Name(), temp: true}
	err = writeTar(tmp, dir)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("source=%s: %w", dir, err)
	}
	if p.SHA256, p.Size, err = hashOf(p.Path); err != nil {
		p.Close()
		return nil, err
	}
	if p.Size > MaxBytes {
		p.Close()
		return nil, fmt.Errorf("source=%s: %d bytes packed, over %d", dir, p.Size, MaxBytes)
	}
	return p, nil
}

func writeTar(w io.Writer, dir string) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0)
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".hg", ".svn":
				return filepath.SkipDir
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: epoch, Format: tar.FormatPAX})
		case !info.Mode().IsRegular():
			return nil // sockets, devices: not part of a source tree
		}
		total += info.Size()
		if total > MaxBytes {
			return fmt.Errorf("over %d bytes", MaxBytes)
		}
		mode := int64(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: info.Size(), Mode: mode, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, info.Size())
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// packGit packs a commit of a local repository with git archive and
// records the commit's id and subject, the branch (when ref names one) and
// the repository (its origin, else its path).
func packGit(spec string, req *arbiterv1.BeginUploadRequest) (*Packed, error) {
	if repo, _, err := gitsource.Split(spec); err == nil && gitsource.IsRemote(repo) {
		return nil, fmt.Errorf("source=git:%s: a remote repository is fetched by the coordinator when a test or tune submitted to it names it; here name a local one", spec)
	}
	repo, ref, ok := strings.Cut(spec, "@")
	if !ok || repo == "" || ref == "" {
		repo, ref = strings.TrimSuffix(spec, "@"), "HEAD"
	}
	if repo == "" || strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("source=git:%s: want git:PATH@REF (a ref does not start with '-')", spec)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err := git("rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("source=git:%s: %w", spec, err)
	}
	req.Commit = commit
	req.Message, _ = git("log", "-1", "--format=%s", commit)
	if b, err := git("rev-parse", "--abbrev-ref", ref); err == nil && b != "HEAD" && b != "" && !strings.ContainsAny(b, " \n") {
		req.Branch = b
	} else if b, err := git("rev-parse", "--abbrev-ref", "HEAD"); err == nil && ref == "HEAD" && b != "HEAD" {
		req.Branch = b
	}
	if u, err := git("config", "--get", "remote.origin.url"); err == nil && u != "" {
		req.Repository = u
	} else if abs, err := filepath.Abs(repo); err == nil {
		req.Repository = abs
	}
	tmp, err := os.CreateTemp("", "arbiter-git-*.tar.gz")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	p := &Packed{Path: tmp.Name(), temp: true}
	if _, err := git("archive", "--format=tar.gz", "-o", tmp.Name(), commit); err != nil {
		p.Close()
		return nil, fmt.Errorf("source=git:%s: %w", spec, err)
	}
	if p.SHA256, p.Size, err = hashOf(p.Path); err != nil {
		p.Close()
		return nil, err
	}
	if p.Size > MaxBytes {
		p.Close()
		return nil, fmt.Errorf("source=git:%s: %d bytes packed, over %d", spec, p.Size, MaxBytes)
	}
	return p, nil
}
