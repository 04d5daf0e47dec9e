package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// ValidHash reports whether h is a full SHA-256 in lower-case hex.
func ValidHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func checkText(field, v string) error {
	if len(v) > maxTextBytes || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return apierr.Invalid("%s: at most %d bytes of UTF-8 (got %s)", field, maxTextBytes, apierr.Q(v))
	}
	return nil
}

// checkQuota refuses a new upload when id has as many uploads in progress
// or artifacts stored as its limits allow. Called with s.mu held.
func (s *Store) checkQuota(id identity.Identity) error {
	uploads, stored := 0, 0
	for _, p := range s.pending {
		if p.meta.Uploader == id.Name {
			uploads++
		}
	}
	for _, a := range s.byHash {
		if a.Uploader == id.Name {
			stored++
		}
	}
	if err := quota.Check(id, uploads, s.cfg.MaxUploadsPerIdentity, "uploads in progress", quota.FlagUploads); err != nil {
		return err
	}
	return quota.Check(id, stored, s.cfg.MaxArtifactsPerIdentity, "stored artifacts", quota.FlagArtifacts)
}

func mayUpload(id identity.Identity) error {
	if !id.CanSubmit() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s, which may not upload or manage engines", apierr.Q(id.Name), id.Role)
	}
	return nil
}

// BeginUpload checks an announced upload. It returns the stored artifact
// when the content is stored already (nothing to send), or the offset to
// send from: the length of an earlier, broken upload of the same hash.
func (s *Store) BeginUpload(id identity.Identity, req *arbiterv1.BeginUploadRequest) (*store.Artifact, int64, error) {
	if err := mayUpload(id); err != nil {
		return nil, 0, err
	}
	sha := req.GetSha256()
	if !ValidHash(sha) {
		return nil, 0, apierr.Invalid("sha256 %s: want 64 lower-case hex digits", apierr.Q(sha))
	}
	if req.GetSize() == 0 {
		return nil, 0, apierr.Invalid("size: an artifact is not empty")
	}
	if req.GetSize() > uint64(s.cfg.MaxBytes) {
		s.uploads.WithLabelValues("too_large").Inc()
		return nil, 0, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "size %d bytes: this coordinator takes artifacts up to %d bytes",
			req.GetSize(), s.cfg.MaxBytes)
	}
	switch req.GetKind() {
	case arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE:
		if req.GetEngine() != "" {
			return nil, 0, apierr.Invalid("engine %s: an engine upload names no engine (nets do)", apierr.Q(req.GetEngine()))
		}
	case arbiterv1.ArtifactKind_ARTIFACT_KIND_NET:
		if req.GetBuild() != "" || req.GetExe() != "" || req.GetBench() != 0 {
			return nil, 0, apierr.Invalid("a net has no build command, program or bench")
		}
	default:
		return nil, 0, apierr.Invalid("kind %v: want binary, source or net", req.GetKind())
	}
	for _, f := range []struct{ name, v string }{{"name", req.GetName()}, {"build", req.GetBuild()}, {"exe", req.GetExe()},
		{"repository", req.GetRepository()}, {"branch", req.GetBranch()}, {"commit", req.GetCommit()}, {"message", req.GetMessage()},
		{"engine", req.GetEngine()}} {
		if err := checkText(f.name, f.v); err != nil {
			return nil, 0, err
		}
		// The build command and program path reach the worker's shell and
		// exec, the name PGN tags: no control characters (a commit
		// message may have its line breaks).
		if f.name != "message" {
			if err := textcheck.Check(f.name, f.v); err != nil {
				return nil, 0, apierr.Invalid("%v", err)
			}
		}
	}
	if err := CheckExe(req.GetExe()); err != nil {
		return nil, 0, err
	}
	var mirrors int64
	if s.diskLimited(id) {
		mirrors = s.mirrorBytesOf(id.Name) // read before the lock: it walks the mirrors
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.byHash[sha]; ok {
		s.uploads.WithLabelValues("duplicate").Inc()
		return a, 0, nil
	}
	meta := store.Artifact{SHA256: sha, Kind: int32(req.GetKind()), Size: int64(req.GetSize()), Name: req.GetName(),
		Uploader: id.Name, Build: req.GetBuild(), Exe: req.GetExe(), Bench: req.GetBench(), Repository: req.GetRepository(),
		Branch: req.GetBranch(), Commit: req.GetCommit(), Message: req.GetMessage(), Engine: req.GetEngine()}
	p, resumed := s.pending[sha]
	if !resumed || p.meta.Uploader != id.Name {
		if err := s.checkQuota(id); err != nil {
			return nil, 0, err
		}
		if err := s.checkDisk(id, mirrors, meta.Size); err != nil {
			return nil, 0, err
		}
	}
	if resumed && p.meta.Size != meta.Size {
		// Another size for the same hash: one of them is wrong; start over.
		os.Remove(s.partial(sha))
	}
	s.pending[sha] = pendingUpload{meta: meta, touched: s.cfg.Now()}
	var offset int64
	if st, err := os.Stat(s.partial(sha)); err == nil {
		offset = st.Size()
		if offset > meta.Size {
			os.Remove(s.partial(sha))
			offset = 0
		}
	}
	return nil, offset, nil
}

// CheckExe refuses a source artifact's program path that leaves its tree.
func CheckExe(exe string) error {
	if exe == "" {
		return nil
	}
	if filepath.IsAbs(exe) || strings.HasPrefix(filepath.Clean(exe), "..") || strings.ContainsAny(exe, "\\\x00") {
		return apierr.Invalid("exe %s: a path inside the source tree", apierr.Q(exe))
	}
	return nil
}

// Upload appends chunks to an announced upload. next returns the chunks
// (offset, data) until io.EOF. It returns the stored artifact once every
// byte is in and the hash matched, or the offset reached when the stream
// ended early.
func (s *Store) Upload(ctx context.Context, id identity.Identity, next func() (sha string, offset int64, data []byte, err error)) (*store.Artifact, int64, error) {
	if err := mayUpload(id); err != nil {
		return nil, 0, err
	}
	var (
		f    *os.File
		sha  string
		meta store.Artifact
		have int64
	)
	defer func() {
		if f != nil {
			f.Close()
		}
		if sha != "" {
			s.mu.Lock()
			delete(s.writing, sha)
			s.mu.Unlock()
		}
	}()
	for {
		h, off, data, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, have, err
		}
		if sha == "" {
			s.mu.Lock()
			p, ok := s.pending[h]
			busy := s.writing[h]
			if ok && !busy {
				s.writing[h] = true
			}
			s.mu.Unlock()
			if !ok {
				return nil, 0, apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "upload of %s: call BeginUpload first", apierr.Q(h))
			}
			if busy {
				return nil, 0, apierr.New(apierr.FailedPrecondition, apierr.ReasonInUse, "upload of %s: another upload of it is running", apierr.Q(h))
			}
			sha, meta = h, p.meta
			f, err = os.OpenFile(s.partial(sha), os.O_WRONLY|os.O_CREATE, store.FileMode)
			if err != nil {
				return nil, 0, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
			}
			st, err := f.Stat()
			if err != nil {
				return nil, 0, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
			}
			have = st.Size()
			if _, err := f.Seek(have, io.SeekStart); err != nil {
				return nil, 0, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
			}
		}
		if h != sha {
			return nil, have, apierr.Invalid("upload: chunk of %s in the upload of %s", apierr.Q(h), sha)
		}
		if off != have {
			return nil, have, apierr.Invalid("upload of %s: chunk at offset %d, the coordinator has %d bytes", sha, off, have)
		}
		if len(data) > ChunkBytes {
			return nil, have, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "upload of %s: a chunk of %d bytes, at most %d", sha, len(data), ChunkBytes)
		}
		if have+int64(len(data)) > meta.Size {
			f.Close()
			f = nil
			os.Remove(s.partial(sha))
			s.forget(sha)
			s.uploads.WithLabelValues("too_large").Inc()
			return nil, 0, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "upload of %s: more than the announced %d bytes (discarded)", sha, meta.Size)
		}
		if _, err := f.Write(data); err != nil {
			return nil, have, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
		}
		have += int64(len(data))
		s.touch(sha)
	}
	if sha == "" {
		return nil, 0, apierr.Invalid("upload: no chunk")
	}
	if have < meta.Size {
		if err := f.Sync(); err != nil {
			return nil, 0, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
		}
		return nil, have, nil
	}
	if err := f.Sync(); err != nil {
		return nil, have, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
	}
	f.Close()
	f = nil
	return s.finish(ctx, meta)
}

// forget drops a failed upload (it no longer counts against its
// uploader's uploads in progress).
func (s *Store) forget(sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, sha)
}

// touch marks an upload active now (the sweep spares it).
func (s *Store) touch(sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pending[sha]; ok {
		p.touched = s.cfg.Now()
		s.pending[sha] = p
	}
}

// finish checks a complete partial file and stores it.
func (s *Store) finish(ctx context.Context, meta store.Artifact) (*store.Artifact, int64, error) {
	part := s.partial(meta.SHA256)
	got, platform, err := hashFile(part)
	if err != nil {
		return nil, 0, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
	}
	if got != meta.SHA256 {
		os.Remove(part)
		s.forget(meta.SHA256)
		s.uploads.WithLabelValues("hash_mismatch").Inc()
		s.log.Warn("artifact upload discarded: hash mismatch", zap.String("sha256", meta.SHA256), zap.String("got", got), zap.String("uploader", meta.Uploader))
		return nil, 0, apierr.New(apierr.InvalidArgument, apierr.ReasonHashMismatch,
			"upload of %s: the bytes received have SHA-256 %s; discarded (upload again)", meta.SHA256, got)
	}
	if arbiterv1.ArtifactKind(meta.Kind) == arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY {
		meta.Platform = platform
	}
	meta.CreatedAt = s.cfg.Now()
	if err := os.Rename(part, s.object(meta.SHA256)); err != nil {
		return nil, 0, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
	}
	if err := s.cfg.Store.PutArtifact(ctx, &meta); err != nil {
		return nil, 0, apierr.Store(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, meta.SHA256)
	if a, ok := s.byHash[meta.SHA256]; ok {
		return a, meta.Size, nil
	}
	s.byHash[meta.SHA256] = &meta
	s.bytesStored.Add(float64(meta.Size))
	s.uploads.WithLabelValues("stored").Inc()
	s.log.Info("artifact stored", zap.String("sha256", meta.SHA256), zap.Int64("bytes", meta.Size), zap.String("name", meta.Name),
		zap.String("uploader", meta.Uploader), zap.String("platform", meta.Platform))
	return &meta, meta.Size, nil
}

// hashFile returns a file's SHA-256 and, for a program, its platform.
func hashFile(path string) (string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", err
	}
	return hex.EncodeToString(h.Sum(nil)), Platform(f), nil
}

// Platform reads a program's header: its GOOS/GOARCH, or "" for anything
// else (a script runs wherever its interpreter does).
func Platform(r io.ReaderAt) string {
	if f, err := elf.NewFile(r); err == nil {
		arch := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm",
			elf.EM_RISCV: "riscv64", elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x"}[f.Machine]
		if arch == "" {
			arch = strings.ToLower(strings.TrimPrefix(f.Machine.String(), "EM_"))
		}
		return "linux/" + arch
	}
	if f, err := macho.NewFile(r); err == nil {
		return "darwin/" + map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	}
	if f, err := pe.NewFile(r); err == nil {
		return "windows/" + map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64",
			pe.IMAGE_FILE_MACHINE_I386: "386"}[f.Machine]
	}
	var head [2]byte
	if _, err := r.ReadAt(head[:], 0); err == nil && bytes.Equal(head[:], []byte("#!")) {
		return ""
	}
	return ""
}
