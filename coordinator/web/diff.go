package web

import (
	"context"
	"strings"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// DiffSource gives the diff between two commits of a repository the
// coordinator fetched (artifacts.Store.Diff).
type DiffSource interface {
	Diff(ctx context.Context, url, base, head string) (diff string, truncated bool, err error)
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
