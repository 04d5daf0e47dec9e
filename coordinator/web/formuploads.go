package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/srctree"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Engines and nets uploaded on the submit form. A file rides in the
// form's body (at most maxFormBytes with everything else: a larger
// engine goes through arbiter engine upload, then artifact=SHA) and is
// stored through the artifact store's upload path, the one the CLI's
// upload reaches over gRPC (BeginUpload, Upload): its size limit, the
// uploader's artifact quota and disk quota, the text checks of name,
// build and program path. A source tarball is first unpacked into a
// temporary directory with srctree.Unpack, the workers' extraction, so a
// tree every worker would refuse is refused on the form, beside its field.

// maxFormTreeBytes bounds a source tarball unpacked by the form's check:
// engine trees are a few MiB; a compressed bomb stops here, not on the
// coordinator's disk.
const maxFormTreeBytes = 256 << 20

// FormFile is the file uploaded in field, or nil.
func FormFile(r *http.Request, field string) *multipart.FileHeader {
	if r.MultipartForm == nil {
		return nil
	}
	if fs := r.MultipartForm.File[field]; len(fs) > 0 && fs[0].Size > 0 {
		return fs[0]
	}
	return nil
}

// isSourceTarball tells a source tree (a gzip-compressed tar, by its
// name) from a program.
func isSourceTarball(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tgz")
}

// storeUpload stores file fh as an artifact of vw's described by req
// (kind, build, exe, bench, engine of a net) and returns its hash.
func (s *Server) storeUpload(ctx context.Context, vw viewer, fh *multipart.FileHeader, req *arbiterv1.BeginUploadRequest) (string, error) {
	if s.cfg.Diffs == nil {
		return "", apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "this coordinator stores no uploaded engines")
	}
	name := filepath.Base(fh.Filename)
	f, err := fh.Open()
	if err != nil {
		return "", bad("file %s: %v", clipQ(name), err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return "", bad("file %s: %v", clipQ(name), err)
	}
	if req.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE {
		if err := checkTarball(f, name); err != nil {
			return "", err
		}
	}
	req.Name, req.Sha256, req.Size = name, hex.EncodeToString(h.Sum(nil)), uint64(size)
	id := vw.identity()
	stored, offset, err := s.cfg.Diffs.BeginUpload(id, req)
	if err != nil {
		return "", err
	}
	if stored == nil {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return "", err
		}
		buf := make([]byte, artifacts.ChunkBytes)
		at := offset
		next := func() (string, int64, []byte, error) {
			n, err := io.ReadFull(f, buf)
			if n == 0 {
				if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
					err = io.EOF
				}
				return "", 0, nil, err
			}
			chunkAt := at
			at += int64(n)
			return req.Sha256, chunkAt, buf[:n], nil
		}
		if stored, _, err = s.cfg.Diffs.Upload(ctx, id, next); err != nil {
			return "", err
		}
		if stored == nil {
			return "", apierr.New(apierr.Internal, apierr.ReasonStore, "file %s: the upload ended before its last byte", clipQ(name))
		}
	}
	s.log.Info("engine file uploaded on the web", zap.String("name", name), zap.String("sha256", stored.SHA256), zap.String("identity", vw.Name))
	return stored.SHA256, nil
}

// checkTarball unpacks a source tarball into a temporary directory as a
// worker does, and removes it.
func checkTarball(f multipart.File, name string) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "arbiter-form-tree-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := srctree.Unpack(f, dir, maxFormTreeBytes); err != nil {
		return bad("source tarball %s: %v", clipQ(name), err)
	}
	return nil
}

// StoreUploads stores the files of the form's engines (a program or
// source tarball, a net) and puts their hashes in the specs; an error
// goes beside the file's field.
func (f *FormRequest) StoreUploads(es []EngineFields, specs []*arbiterv1.EngineSpec) error {
	s, ctx, vw := f.s, f.R.Context(), f.vw
	for i, e := range es {
		spec := specs[i]
		if e.File != nil {
			a := spec.GetArtifact()
			req := &arbiterv1.BeginUploadRequest{Kind: a.GetKind(), Build: a.GetBuild(), Exe: a.GetExe(), Bench: a.GetBench()}
			sha, err := s.storeUpload(ctx, vw, e.File, req)
			if err != nil {
				return onField(e.fileField(), err)
			}
			a.Sha256 = sha
		}
		if e.Net != nil {
			req := &arbiterv1.BeginUploadRequest{Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET, Engine: spec.GetName()}
			sha, err := s.storeUpload(ctx, vw, e.Net, req)
			if err != nil {
				return onField(e.netField(), err)
			}
			spec.Net.Sha256 = sha
		}
	}
	return nil
}
