package web

import (
	"context"
	"strings"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// DiffSource is the coordinator's git fetches (artifacts.Store): the diff
// between two commits of a repository it fetched, and for the submit
// form the same fetch a CLI submission of source=git:URL@REF makes
// (ImportEngines), a ref resolved before a test exists (the diff
// preview), the repositories past tests came from (the shortcut), and
// the artifact upload path for engines and nets uploaded on the form.
type DiffSource interface {
	Diff(ctx context.Context, url, base, head string) (diff string, truncated bool, err error)
	ImportEngines(ctx context.Context, id identity.Identity, engines ...*arbiterv1.EngineSpec) error
	ResolveGitRef(ctx context.Context, id identity.Identity, what, url, ref string) (commit, message string, err error)
	KnownRepositories(limit int) []artifacts.KnownRepository
	BeginUpload(id identity.Identity, req *arbiterv1.BeginUploadRequest) (*store.Artifact, int64, error)
	Upload(ctx context.Context, id identity.Identity, next func() (sha string, offset int64, data []byte, err error)) (*store.Artifact, int64, error)
}

// diffView is the diff of a test of two commits of one repository: from
// engine B's commit (the baseline) to engine A's (under test).
type diffView struct {
	Repository, Base, Head   string
	BaseShort, HeadShort     string
	MaxBytes                 int
	BaseName, HeadName       string
	BaseMessage, HeadMessage string
	Lines                    []diffLine
	Files, Added, Removed    int
	Truncated                bool
	Unavailable              string // why there is no diff to show
}

type diffLine struct {
	Class, Text string
}

// testDiff is the diff of a test whose engines are two commits of one
// repository, or nil for any other test.
func (s *Server) testDiff(ctx context.Context, spec *arbiterv1.MatchSpec) *diffView {
	a, b := spec.GetEngineA().GetArtifact(), spec.GetEngineB().GetArtifact()
	if a == nil || b == nil || a.GetRepository() == "" || a.GetRepository() != b.GetRepository() || a.GetCommit() == "" || b.GetCommit() == "" {
		return nil
	}
	d := &diffView{Repository: a.GetRepository(), Base: b.GetCommit(), Head: a.GetCommit(),
		BaseName: spec.GetEngineB().GetName(), HeadName: spec.GetEngineA().GetName(), BaseMessage: b.GetMessage(), HeadMessage: a.GetMessage()}
	return s.fillDiff(ctx, d)
}

// fillDiff fetches d's diff (from d.Base to d.Head of d.Repository) into
// its lines, or says in d.Unavailable why there is none.
func (s *Server) fillDiff(ctx context.Context, d *diffView) *diffView {
	d.BaseShort, d.HeadShort = d.Base[:min(12, len(d.Base))], d.Head[:min(12, len(d.Head))]
	if s.cfg.Diffs == nil {
		d.Unavailable = "this coordinator does not fetch repositories"
		return d
	}
	text, truncated, err := s.cfg.Diffs.Diff(ctx, d.Repository, d.Base, d.Head)
	if err != nil {
		d.Unavailable = err.Error()
		return d
	}
	d.Truncated, d.MaxBytes = truncated, len(text)
	inPatch := false
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		class := ""
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inPatch, class = true, "file"
			d.Files++
		case !inPatch:
			class = "stat"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "index "):
			class = "meta"
		case strings.HasPrefix(l, "+"):
			class = "add"
			d.Added++
		case strings.HasPrefix(l, "-"):
			class = "del"
			d.Removed++
		}
		d.Lines = append(d.Lines, diffLine{Class: class, Text: l})
	}
	return d
}
