package web

import (
	"errors"
	"mime/multipart"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/gitsource"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Where a submit form's engines come from, beyond the CLI grammar typed
// in the engine field (builtin, cmd=): a branch, tag or commit of a git
// repository the coordinator fetches. The form adds source=git:URL@REF to
// the engine's spec text and reads it with enginespec.Parse, the CLI's
// parser; the coordinator then fetches it with ImportEngines, the call a
// CLI submission of the same source goes through (same URL, ref and
// destination checks, same limits and quota). Workers never see the
// repository: they get the stored source artifact.
//
// Every error names the field it is about (fieldError) and the page shows
// it beside that field.

// fieldError is an input error about one field of the form: its id.
type fieldError struct {
	Field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// onField puts err beside field (nil stays nil; an error already on a
// field stays there).
func onField(field string, err error) error {
	var fe *fieldError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return &fieldError{Field: field, err: err}
}

// formFieldOf is the submit form's field an error is about ("" for the
// form as a whole).
func formFieldOf(err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// EngineFields are one engine's inputs on a form: the spec text, the
// git repository and ref it may be fetched from, an uploaded program or
// source tarball and an uploaded net. A kind's form reads them (the test
// kind's engines A and B) and gives them to the kit: EngineSpec,
// FormRequest.StoreUploads, ImportEngines and PreviewDiff, which put an
// error beside the field it is about.
type EngineFields struct {
	Which     string // "engine A" or "engine B"
	ID        string // the spec field's id: "engine_a" or "engine_b"
	Spec      string
	Repo, Ref string
	File, Net *multipart.FileHeader // an uploaded program or source tarball, a net
}

// fileField and netField are the ids of the engine's file inputs.
func (e EngineFields) fileField() string { return e.ID + "_file" }
func (e EngineFields) netField() string  { return e.ID + "_net" }

// gitField is the id of the engine's git fields (its error's place).
func (e EngineFields) gitField() string { return e.ID + "_git" }

// specText is the engine's spec in the CLI grammar: the typed text, with
// source=git:URL@REF when a repository is given.
func (e EngineFields) specText() (string, error) {
	text := e.Spec
	if e.Net != nil {
		text += ",net=" + quoteValue(filepath.Base(e.Net.Filename))
	}
	if e.File != nil {
		if e.Repo != "" || e.Ref != "" {
			return "", onField(e.fileField(), bad("%s: give a git repository or a file, not both", e.Which))
		}
		// The grammar's keys for a program and a source tree: Parse
		// applies the CLI's rules (build= with a source tree only).
		key := ",upload="
		if isSourceTarball(e.File.Filename) {
			key = ",source="
		}
		return text + key + quoteValue(filepath.Base(e.File.Filename)), nil
	}
	if e.Repo == "" {
		if e.Ref != "" {
			return "", onField(e.gitField(), bad("%s: branch or commit %s given without a repository", e.Which, clipQ(e.Ref)))
		}
		return text, nil
	}
	if err := gitsource.CheckURL(e.Repo, true); err != nil || !gitsource.IsRemote(e.Repo) {
		why := "a URL the coordinator fetches (https://, ssh://, git:// or user@host:path)"
		if err != nil {
			why = err.Error()
		}
		return "", onField(e.gitField(), bad("%s: repository %s: %s", e.Which, clipQ(e.Repo), why))
	}
	ref := e.Ref
	if ref == "" {
		ref = "HEAD"
	}
	if err := gitsource.CheckRef(ref); err != nil {
		return "", onField(e.gitField(), bad("%s: %v", e.Which, err))
	}
	return text + ",source=" + quoteValue("git:"+e.Repo+"@"+ref), nil
}

// EngineSpec reads one engine of the form with the CLI's parser into the
// spec a test carries. A git source is left for the coordinator to fetch
// (importEngines); a source or program on the submitter's disk
// (upload=PATH, source=DIR, a local git repository) is refused: the
// coordinator cannot read it.
func EngineSpec(e EngineFields, each enginespec.Spec) (*arbiterv1.EngineSpec, error) {
	if e.Spec == "" {
		return nil, onField(e.ID, bad("%s: missing (name=NAME,builtin or name=NAME,cmd=PATH; with a repository: name=NAME,build=CMD)", e.Which))
	}
	text, err := e.specText()
	if err != nil {
		return nil, err
	}
	es, err := enginespec.Parse(text, enginespec.Match)
	if err != nil {
		return nil, onField(e.ID, bad("%s: %v", e.Which, err))
	}
	if len(es.Limits) > 0 {
		return nil, onField(e.ID, bad("%s: this form takes one time control for both engines, in the time control field (per-engine limits: arbiter submit match)", e.Which))
	}
	if e.Repo == "" && e.File == nil && (es.Upload != "" || es.Source != "") {
		return nil, onField(e.ID, bad("%s: upload= and source= name files on your machine, which the coordinator cannot read: "+
			"give a repository URL in the git fields or choose the file to upload", e.Which))
	}
	if e.Net == nil && es.NetFile != "" {
		return nil, onField(e.ID, bad("%s: net=%s names a file on your machine: choose it in the net field (or net=default, net=HASH)", e.Which, clipQ(es.NetFile)))
	}
	me, err := es.MatchEngine(each)
	if err != nil {
		return nil, onField(e.ID, bad("%s: %v", e.Which, err))
	}
	spec := matchspec.EngineToProto(me)
	if es.Travels() {
		// As the CLI sends a traveling engine (matchplan, artifactclient):
		// no command, the artifact's build, and for a remote repository
		// its URL and ref with no hash, for the coordinator to fetch.
		spec.Command, spec.Dir = "", ""
		spec.Artifact = &arbiterv1.EngineArtifact{Sha256: es.Artifact, Build: es.Build, Exe: es.Exe, Bench: es.Bench}
		if es.Upload != "" {
			spec.Artifact.Kind = arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY
		} else if es.Source != "" {
			spec.Artifact.Kind = arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE
		}
	}
	spec.Net = es.NetProto()
	if e.Repo != "" {
		ref := e.Ref
		if ref == "" {
			ref = "HEAD"
		}
		spec.Artifact.Kind, spec.Artifact.Repository, spec.Artifact.Branch = arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE, e.Repo, ref
	}
	return spec, nil
}

// ImportEngines has the coordinator fetch the engines named by a
// repository, one at a time so that an error goes beside its engine's
// git fields. Nothing is fetched when the coordinator has no git
// fetches configured: a test naming a repository is refused then.
func (f *FormRequest) ImportEngines(es []EngineFields, specs []*arbiterv1.EngineSpec) error {
	s, ctx, vw := f.s, f.R.Context(), f.vw
	for i, e := range es {
		if specs[i].GetArtifact().GetRepository() == "" {
			continue
		}
		if s.cfg.Diffs == nil {
			return onField(e.gitField(), apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "%s: this coordinator does not fetch git repositories", e.Which))
		}
		if err := s.cfg.Diffs.ImportEngines(ctx, vw.identity(), specs[i]); err != nil {
			return onField(e.gitField(), err)
		}
	}
	return nil
}

// PreviewDiff resolves both engines' refs of one repository and builds
// the diff from engine B's commit to engine A's: what the test's page
// will show, before the test exists. It creates nothing but the mirror
// the fetch fills (kept as a cache for the submission).
func (f *FormRequest) PreviewDiff(es [2]EngineFields) (*DiffPreview, error) {
	s, ctx, vw := f.s, f.R.Context(), f.vw
	if es[0].Repo == "" || es[0].Repo != es[1].Repo {
		return nil, onField(es[0].gitField(), bad("diff preview: give both engines the same repository in their git fields (a branch or commit each)"))
	}
	if s.cfg.Diffs == nil {
		return nil, onField(es[0].gitField(), apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "diff preview: this coordinator does not fetch git repositories"))
	}
	var commits, messages [2]string
	for i, e := range es {
		if _, err := e.specText(); err != nil {
			return nil, err
		}
		ref := e.Ref
		if ref == "" {
			ref = "HEAD"
		}
		what := e.Which + ": " + gitsource.Redact(e.Repo) + "@" + ref
		c, m, err := s.cfg.Diffs.ResolveGitRef(ctx, vw.identity(), what, e.Repo, ref)
		if err != nil {
			return nil, onField(e.gitField(), err)
		}
		commits[i], messages[i] = c, m
	}
	name := func(e EngineFields) string {
		text, _ := e.specText()
		if es, err := enginespec.Parse(text, enginespec.Match); err == nil && es.Name != "" {
			return es.Name
		}
		return e.Which
	}
	s.log.Info("diff previewed on the web", zap.String("repository", gitsource.Redact(es[0].Repo)), zap.String("identity", vw.Name))
	d := &diffView{Repository: es[0].Repo, Base: commits[1], Head: commits[0], BaseName: name(es[1]), HeadName: name(es[0]),
		BaseMessage: messages[1], HeadMessage: messages[0]}
	return s.fillDiff(ctx, d), nil
}

// maxKnownRepositories bounds the shortcut's list.
const maxKnownRepositories = 50

func (s *Server) knownRepositories() []string {
	if s.cfg.Diffs == nil {
		return nil
	}
	var out []string
	for _, k := range s.cfg.Diffs.KnownRepositories(maxKnownRepositories) {
		out = append(out, k.URL)
	}
	return out
}

// KnownRepository is how the newest engine of repository url a test used
// was built (its build command and program path), for the test form's
// shortcut; ok is false for a repository no test used, or without git
// fetches.
func (f *FormRequest) KnownRepository(url string) (build, exe string, ok bool) {
	if f.s.cfg.Diffs == nil {
		return "", "", false
	}
	for _, k := range f.s.cfg.Diffs.KnownRepositories(maxKnownRepositories) {
		if k.URL == url {
			build, exe, ok = k.Build, k.Exe, true
		}
	}
	return build, exe, ok
}

// QuoteValue is v as a value of the engine grammar (quoted).
func QuoteValue(v string) string { return quoteValue(v) }

// quoteValue is v as a value of the engine grammar (quoted).
func quoteValue(v string) string { return `"` + strings.ReplaceAll(v, `"`, `""`) + `"` }
