package artifacts

import (
	"context"

	"github.com/arbiter-chess/arbiter/base/gitsource"
	"github.com/arbiter-chess/arbiter/base/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// What the web form needs of the coordinator's git fetches before a test
// exists: a ref resolved to its commit (to show the diff of two refs
// before submitting) and the repositories past tests came from (the
// "test this branch against main" shortcut). The fetch is fetchRef, the
// one ImportEngines makes: same URL and ref checks, same destination
// rules, same byte, stall, time and disk limits, charged to the same
// identity. The mirror it fills is kept (a cache): the submission that
// follows a preview fetches only what is new.

// ResolveGitRef fetches repository url on behalf of id and resolves ref
// to a commit; message is its subject and author, as a stored engine
// carries them. what names the input in errors (the form's field).
func (s *Store) ResolveGitRef(ctx context.Context, id identity.Identity, what, url, ref string) (commit, message string, err error) {
	if err := mayUpload(id); err != nil {
		return "", "", err
	}
	if ref == "" {
		ref = "HEAD"
	}
	f, err := s.fetchRef(ctx, id, what, url, ref)
	if err != nil {
		return "", "", err
	}
	message = f.commit.Subject
	if f.commit.Author != "" {
		message += " (" + f.commit.Author + ")"
	}
	return f.commit.Commit, truncate(message, maxTextBytes), nil
}

// KnownRepository is a repository a stored engine was fetched from, with
// the build of its newest engine (what a new test of it most likely
// needs).
type KnownRepository struct {
	URL, Build, Exe string
}

// KnownRepositories lists the repositories of the stored source
// artifacts fetched from git, newest first, each once, at most limit.
func (s *Store) KnownRepositories(limit int) []KnownRepository {
	arts, _ := s.List(0, arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE)
	seen := map[string]bool{}
	var out []KnownRepository
	for _, a := range arts {
		if a.Repository == "" || seen[a.Repository] || gitsource.CheckURL(a.Repository, s.cfg.Git.AllowFile) != nil {
			continue
		}
		seen[a.Repository] = true
		out = append(out, KnownRepository{URL: a.Repository, Build: a.Build, Exe: a.Exe})
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}
