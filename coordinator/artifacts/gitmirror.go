package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/gitsource"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
)

// Git mirrors on disk.
//
// Invariants:
//   - A repository has one mirror whatever its spelling: the mirror is
//     named by a hash of gitsource.Canonical(url) (no part of a
//     submitter's URL becomes a path).
//   - A mirror counts toward the disk quota of the identity whose fetch
//     made it (mirrorOwnerFile), as long as it exists.
//   - Nothing is left of a fetch that failed or whose result was refused
//     when the fetch made the mirror; a fetch stopped for its size or its
//     silence removes the mirror even when it existed before (the killed
//     fetch may have left partial packs in it; a mirror is a cache).

// mirrorOwnerFile, in a mirror (beside git's own files, which git
// ignores), names the identity whose fetch made it.
const mirrorOwnerFile = "arbiter-owner"

// mirrorDir is the mirror of repository url. A mirror made before
// mirrors were named by the canonical URL (by a hash of url as given) is
// renamed to its canonical name the first time it is asked for.
func (s *Store) mirrorDir(url string) string {
	dir := s.mirrorPath(gitsource.Canonical(url))
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	if legacy := s.mirrorPath(url); legacy != dir {
		if _, err := os.Stat(filepath.Join(legacy, "HEAD")); err == nil {
			if err := os.Rename(legacy, dir); err != nil {
				s.log.Warn("git mirror not renamed to its canonical name", zap.String("dir", legacy), zap.Error(err))
				return legacy
			}
		}
	}
	return dir
}

func (s *Store) mirrorPath(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(s.gitDir(), hex.EncodeToString(h[:16])+".git")
}

func (s *Store) gitDir() string {
	if s.cfg.Git.Dir != "" {
		return s.cfg.Git.Dir
	}
	return filepath.Join(s.cfg.Dir, "git")
}

// claimMirror records owner as the identity whose fetch made dir.
func claimMirror(dir, owner string) error {
	return os.WriteFile(filepath.Join(dir, mirrorOwnerFile), []byte(owner+"\n"), 0o600)
}

// dropMirror removes a mirror with everything in it.
func (s *Store) dropMirror(dir, why string) {
	if err := os.RemoveAll(dir); err != nil {
		s.log.Warn("git mirror not removed", zap.String("dir", dir), zap.String("why", why), zap.Error(err))
		return
	}
	s.log.Info("git mirror removed", zap.String("dir", filepath.Base(dir)), zap.String("why", why))
}

// mirrorBytesOf is the bytes of the mirrors owner's fetches made.
func (s *Store) mirrorBytesOf(owner string) int64 {
	entries, err := os.ReadDir(s.gitDir())
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		dir := filepath.Join(s.gitDir(), e.Name())
		b, err := os.ReadFile(filepath.Join(dir, mirrorOwnerFile))
		if err == nil && strings.TrimSpace(string(b)) == owner {
			n += gitsource.DirSize(dir)
		}
	}
	return n
}

// diskLimited reports whether id's bytes on disk are bounded.
func (s *Store) diskLimited(id identity.Identity) bool {
	return s.cfg.MaxDiskBytesPerIdentity > 0 && quota.Limited(id)
}

// diskUsed is the bytes id holds on disk: the artifacts it uploaded (and
// the uploads it announced) and the mirrors its fetches made. Caller
// holds s.mu; mirrors is s.mirrorBytesOf(id.Name), measured before (it
// reads the disk).
func (s *Store) diskUsed(id identity.Identity, mirrors int64) int64 {
	n := mirrors
	for _, a := range s.byHash {
		if a.Uploader == id.Name {
			n += a.Size
		}
	}
	for sha, p := range s.pending {
		if _, stored := s.byHash[sha]; !stored && p.meta.Uploader == id.Name {
			n += p.meta.Size
		}
	}
	return n
}

// checkDisk refuses adding bytes more of id's past
// MaxDiskBytesPerIdentity. Caller holds s.mu.
func (s *Store) checkDisk(id identity.Identity, mirrors, adding int64) error {
	if !s.diskLimited(id) {
		return nil
	}
	return quota.CheckBytes(id, s.diskUsed(id, mirrors), adding, s.cfg.MaxDiskBytesPerIdentity,
		"engines and git mirrors on the coordinator's disk", quota.FlagDiskBytes)
}
