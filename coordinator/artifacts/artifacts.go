// Package artifacts is the coordinator's store of engine artifacts: the
// binaries and source trees that travel to the workers, content-addressed
// by SHA-256. Their bytes are files under the data directory (never in
// SQLite); their metadata and the workers' reports are rows of the store.
//
// Invariants:
//   - A file under objects/ is complete and its hash is its name: an
//     upload is written to partial/ and renamed into objects/ only after
//     its size and SHA-256 were checked, and its metadata row is written
//     after the rename. A crash leaves at worst a partial file, which the
//     next BeginUpload of the same hash resumes from, until the upload has
//     been idle for AbandonAfter: then the partial file is swept (at start
//     and every AbandonAfter/4), so abandoned uploads do not fill the disk
//     across restarts.
//   - The same bytes are stored once: an upload of a stored hash sends
//     nothing, whoever uploads it.
//   - An artifact a running test uses is not removed.
package artifacts

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/destpolicy"
	"github.com/arbiter-chess/arbiter/base/gitsource"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Defaults and bounds.
const (
	// DefaultMaxBytes caps one artifact (a statically linked engine with an
	// embedded network is some tens of MiB).
	DefaultMaxBytes = 256 << 20
	// ChunkBytes is the largest chunk of an upload or a download.
	ChunkBytes = 1 << 20
	// DefaultAbandonAfter is how long an upload may sit idle before its
	// partial file is swept: long enough to resume after a dropped link.
	DefaultAbandonAfter = time.Hour
	maxTextBytes        = 1024 // name, build command, repository, message
)

// Config is what an artifact store needs.
type Config struct {
	Store *store.Store
	// Dir holds the files (objects/, partial/); the data dir's artifacts/.
	Dir string
	// MaxBytes caps one artifact (DefaultMaxBytes).
	MaxBytes int64
	// AbandonAfter is how long an upload may sit idle (no BeginUpload or
	// chunk) before its partial file is removed (DefaultAbandonAfter).
	AbandonAfter time.Duration
	// MaxUploadsPerIdentity and MaxArtifactsPerIdentity bound the uploads
	// in progress and the artifacts stored of one non-admin identity (0:
	// no limit).
	MaxUploadsPerIdentity, MaxArtifactsPerIdentity int
	// MaxDiskBytesPerIdentity bounds the bytes of one non-admin identity
	// on disk: the artifacts it uploaded (or fetched from git) and the git
	// mirrors its fetches made (0: no limit).
	MaxDiskBytesPerIdentity int64
	// InUse lists the running tests and tunes that use an artifact (nil: none).
	InUse func(sha string) []string
	// Git is how engines named by a remote git URL are fetched.
	Git        GitConfig
	Logger     *zap.Logger
	Now        func() time.Time
	Registerer prometheus.Registerer
}

// Store keeps the artifacts.
type Store struct {
	cfg Config
	log *zap.Logger

	mu     sync.Mutex
	byHash map[string]*store.Artifact
	// defaults is each engine name's default net (engine → SHA-256).
	defaults map[string]string
	pending  map[string]pendingUpload // hash → what BeginUpload announced
	writing  map[string]bool          // hashes an Upload stream is writing
	gitLocks gitMirrors
	// gitPolicy is where fetches may connect (GitConfig.Allow).
	gitPolicy *destpolicy.Policy

	bytesStored prometheus.Gauge
	uploads     *prometheus.CounterVec
	downloads   *prometheus.CounterVec
	builds      *prometheus.CounterVec
	benches     *prometheus.CounterVec
}

type pendingUpload struct {
	meta store.Artifact
	// touched is when BeginUpload or a chunk last came: the sweep
	// removes uploads idle for AbandonAfter.
	touched time.Time
}

// New opens the artifact store: it loads the metadata and makes the
// directories.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Store == nil || cfg.Dir == "" {
		return nil, errors.New("artifacts: a store and a directory are required")
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AbandonAfter <= 0 {
		cfg.AbandonAfter = DefaultAbandonAfter
	}
	if cfg.Git.Timeout <= 0 {
		cfg.Git.Timeout = DefaultGitTimeout
	}
	if cfg.Git.Stall <= 0 {
		cfg.Git.Stall = DefaultGitStall
	}
	if cfg.Git.MaxBytes <= 0 {
		cfg.Git.MaxBytes = DefaultGitMaxBytes
	}
	gitPolicy, err := destpolicy.Parse("--git-allow", cfg.Git.Allow)
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	for _, d := range []string{"objects", "partial"} {
		if err := store.MkdirPrivate(filepath.Join(cfg.Dir, d)); err != nil {
			return nil, fmt.Errorf("artifacts: %w", err)
		}
	}
	s := &Store{cfg: cfg, log: cfg.Logger, gitPolicy: gitPolicy, byHash: map[string]*store.Artifact{}, pending: map[string]pendingUpload{}, writing: map[string]bool{},
		bytesStored: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arbiter_artifact_bytes_stored",
			Help: "Bytes of the artifacts (engine binaries, source trees, nets) the coordinator stores."}),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_artifact_uploads_total",
			Help: "Artifact uploads by outcome: stored, duplicate (the content was stored already), hash_mismatch, too_large."}, []string{"outcome"}),
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_artifact_downloads_total",
			Help: "Artifact downloads served to workers: new (from the first byte) or resumed."}, []string{"kind"}),
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_artifact_builds_total",
			Help: "Source builds the workers reported, by outcome: ok, cached, failed."}, []string{"outcome"}),
		benches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_artifact_bench_checks_total",
			Help: "Bench signature checks the workers reported, by outcome: match, cached (benched for an earlier test), unchecked (no signature), mismatch."}, []string{"outcome"}),
	}
	for _, o := range []string{"stored", "duplicate", "hash_mismatch", "too_large"} {
		s.uploads.WithLabelValues(o)
	}
	for _, k := range []string{"new", "resumed"} {
		s.downloads.WithLabelValues(k)
	}
	for _, o := range []string{"ok", "cached", "failed"} {
		s.builds.WithLabelValues(o)
	}
	for _, o := range []string{"match", "cached", "unchecked", "mismatch"} {
		s.benches.WithLabelValues(o)
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.bytesStored, s.uploads, s.downloads, s.builds, s.benches)
	}
	list, err := cfg.Store.Artifacts(ctx)
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	var total int64
	for _, a := range list {
		if _, err := os.Stat(s.object(a.SHA256)); err != nil {
			s.log.Error("artifact file missing; not served", zap.String("sha256", a.SHA256), zap.Error(err))
			continue
		}
		s.byHash[a.SHA256] = a
		total += a.Size
	}
	s.bytesStored.Set(float64(total))
	if s.defaults, err = cfg.Store.DefaultNets(ctx); err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	s.Sweep()
	return s, nil
}

// AbandonAfter is how long an upload may sit idle before it is swept.
func (s *Store) AbandonAfter() time.Duration { return s.cfg.AbandonAfter }

// Sweep removes the partial files of uploads idle for AbandonAfter (by
// their last chunk, or the file's modification time for uploads begun
// before a restart) and forgets those uploads. It returns how many it
// removed.
func (s *Store) Sweep() int {
	cutoff := s.cfg.Now().Add(-s.cfg.AbandonAfter)
	dir := filepath.Join(s.cfg.Dir, "partial")
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.log.Warn("artifact upload sweep", zap.Error(err))
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	removed := 0
	for sha, p := range s.pending {
		if !s.writing[sha] && p.touched.Before(cutoff) {
			delete(s.pending, sha)
		}
	}
	for _, e := range entries {
		sha := e.Name()
		if s.writing[sha] {
			continue
		}
		if p, ok := s.pending[sha]; ok && !p.touched.Before(cutoff) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, sha)); err != nil {
			s.log.Warn("abandoned artifact upload not removed", zap.String("file", sha), zap.Error(err))
			continue
		}
		delete(s.pending, sha)
		removed++
		s.log.Info("abandoned artifact upload removed", zap.String("sha256", sha), zap.Int64("bytes", info.Size()),
			zap.Duration("idle_over", s.cfg.AbandonAfter))
	}
	return removed
}

// RunSweeper sweeps abandoned uploads every AbandonAfter/4 until ctx ends.
func (s *Store) RunSweeper(ctx context.Context) {
	t := time.NewTicker(max(s.cfg.AbandonAfter/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sweep()
		}
	}
}

func (s *Store) object(sha string) string  { return filepath.Join(s.cfg.Dir, "objects", sha) }
func (s *Store) partial(sha string) string { return filepath.Join(s.cfg.Dir, "partial", sha) }

// MaxBytes is the largest artifact accepted.
func (s *Store) MaxBytes() int64 { return s.cfg.MaxBytes }

// Resolve finds an artifact by its hash or a unique prefix of at least 8
// hex digits.
func (s *Store) Resolve(ref string) (*store.Artifact, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if len(ref) < 8 || len(ref) > 64 {
		return nil, apierr.Invalid("artifact %s: give its SHA-256 or a prefix of at least 8 hex digits", apierr.Q(ref))
	}
	if _, err := hex.DecodeString(ref[:len(ref)&^1]); err != nil {
		return nil, apierr.Invalid("artifact %s: not hex", apierr.Q(ref))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.byHash[ref]; ok {
		return a, nil
	}
	var found *store.Artifact
	for h, a := range s.byHash {
		if strings.HasPrefix(h, ref) {
			if found != nil {
				return nil, apierr.Invalid("artifact %s: the prefix is not unique", apierr.Q(ref))
			}
			found = a
		}
	}
	if found == nil {
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownArtifact, "artifact %s: not stored on this coordinator (upload it)", apierr.Q(ref))
	}
	return found, nil
}

// List returns up to limit artifacts of kind (any when unspecified),
// newest first, and the bytes of all of that kind.
func (s *Store) List(limit int, kind arbiterv1.ArtifactKind) ([]*store.Artifact, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*store.Artifact, 0, len(s.byHash))
	var total int64
	for _, a := range s.byHash {
		if kind != arbiterv1.ArtifactKind_ARTIFACT_KIND_UNSPECIFIED && arbiterv1.ArtifactKind(a.Kind) != kind {
			continue
		}
		out = append(out, a)
		total += a.Size
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].SHA256 < out[j].SHA256
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total
}

// UsedBy lists the running tests and tunes that use an artifact.
func (s *Store) UsedBy(sha string) []string {
	if s.cfg.InUse == nil {
		return nil
	}
	return s.cfg.InUse(sha)
}

// Delete removes an artifact: its uploader or an admin, and not while a
// running test uses it.
func (s *Store) Delete(ctx context.Context, id identity.Identity, ref string) error {
	if err := mayUpload(id); err != nil {
		return err
	}
	a, err := s.Resolve(ref)
	if err != nil {
		return err
	}
	if !id.IsAdmin() && id.Name != a.Uploader {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "artifact %s: uploaded by %s; only it or an admin may remove it",
			a.SHA256[:12], apierr.Q(a.Uploader))
	}
	if used := s.UsedBy(a.SHA256); len(used) > 0 {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonInUse, "artifact %s is used by running tests or tunes %s: cancel them first",
			a.SHA256[:12], strings.Join(used, ", "))
	}
	if err := s.cfg.Store.DeleteArtifact(ctx, a.SHA256); err != nil && !errors.Is(err, store.ErrNotFound) {
		return apierr.Store(err)
	}
	s.mu.Lock()
	if _, ok := s.byHash[a.SHA256]; ok {
		delete(s.byHash, a.SHA256)
		s.bytesStored.Sub(float64(a.Size))
	}
	for engine, sha := range s.defaults {
		if sha == a.SHA256 {
			delete(s.defaults, engine)
		}
	}
	s.mu.Unlock()
	os.Remove(s.object(a.SHA256))
	s.log.Info("artifact removed", zap.String("sha256", a.SHA256), zap.String("by", id.Name))
	return nil
}

// Open opens a stored artifact's bytes for a download from offset; the
// caller closes the file. Workers and admins download.
func (s *Store) Open(id identity.Identity, sha string, offset int64) (*os.File, *store.Artifact, error) {
	if !id.CanWork() {
		return nil, nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s, which may not download engines", apierr.Q(id.Name), id.Role)
	}
	if !ValidHash(sha) {
		return nil, nil, apierr.Invalid("sha256 %s: want 64 lower-case hex digits", apierr.Q(sha))
	}
	s.mu.Lock()
	a, ok := s.byHash[sha]
	s.mu.Unlock()
	if !ok {
		return nil, nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownArtifact, "artifact %s: not stored on this coordinator", sha)
	}
	if offset < 0 || offset > a.Size {
		return nil, nil, apierr.Invalid("offset %d: the artifact has %d bytes", offset, a.Size)
	}
	f, err := os.Open(s.object(sha))
	if err != nil {
		return nil, nil, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
	}
	if offset == 0 {
		s.downloads.WithLabelValues("new").Inc()
	} else {
		s.downloads.WithLabelValues("resumed").Inc()
	}
	return f, a, nil
}

// Report records a worker's step with an artifact of a test and counts
// builds and bench checks.
func (s *Store) Report(ctx context.Context, c *store.ArtifactCheck) error {
	switch arbiterv1.ArtifactCheckState(c.State) {
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILT:
		if c.Detail == "cache" {
			s.builds.WithLabelValues("cached").Inc()
		} else {
			s.builds.WithLabelValues("ok").Inc()
		}
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILD_FAILED:
		s.builds.WithLabelValues("failed").Inc()
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED:
		switch {
		case c.Detail == "cache":
			s.benches.WithLabelValues("cached").Inc()
		case c.Bench == 0:
			s.benches.WithLabelValues("unchecked").Inc()
		default:
			s.benches.WithLabelValues("match").Inc()
		}
	case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH:
		s.benches.WithLabelValues("mismatch").Inc()
	}
	c.At = s.cfg.Now()
	if err := s.cfg.Store.PutArtifactCheck(ctx, c); err != nil {
		return apierr.Store(err)
	}
	return nil
}

// Checks returns the workers' steps with a test's artifacts.
func (s *Store) Checks(ctx context.Context, jobID string) ([]store.ArtifactCheck, error) {
	return s.cfg.Store.ArtifactChecks(ctx, jobID)
}

// FillEngine completes what engine e of a test takes from the store: its
// artifact (Fill) and its net (FillNet).
func (s *Store) FillEngine(which string, e *arbiterv1.EngineSpec) error {
	if e.GetArtifact() != nil {
		if err := s.Fill(which, e.GetArtifact()); err != nil {
			return err
		}
	}
	if e.GetNet() != nil {
		return s.FillNet(which, e.GetNet())
	}
	return nil
}

// FillNet resolves a test's net (a hash, a prefix, or "default:ENGINE")
// to a stored net and copies its size and name; a hash unknown here, or
// an artifact that is not a net, is refused.
func (s *Store) FillNet(which string, n *arbiterv1.EngineNet) error {
	ref := n.GetSha256()
	if engine, ok := strings.CutPrefix(ref, matchspec.DefaultNetPrefix); ok {
		s.mu.Lock()
		sha, found := s.defaults[engine]
		s.mu.Unlock()
		if !found {
			return apierr.New(apierr.NotFound, apierr.ReasonUnknownArtifact, "%s: net %s: engine %s has no default net (arbiter net default)",
				which, apierr.Q(ref), apierr.Q(engine))
		}
		ref = sha
	}
	a, err := s.Resolve(ref)
	if err != nil {
		return apierr.Invalid("%s: net: %s", which, err.Error())
	}
	if arbiterv1.ArtifactKind(a.Kind) != arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
		return apierr.Invalid("%s: net %s: artifact %s is an engine, not a net (upload nets with arbiter net upload)", which, apierr.Q(n.GetSha256()), a.SHA256[:12])
	}
	n.Sha256, n.Size, n.Name = a.SHA256, uint64(a.Size), a.Name
	return nil
}

// SetDefaultNet makes the net ref the default of engine (ref "": clears
// it). Clients and admins set defaults; it returns the net (nil when
// cleared).
func (s *Store) SetDefaultNet(ctx context.Context, id identity.Identity, engine, ref string) (*store.Artifact, error) {
	if err := mayUpload(id); err != nil {
		return nil, err
	}
	if strings.TrimSpace(engine) == "" {
		return nil, apierr.Invalid("engine: name the engine whose default net this is")
	}
	if err := checkText("engine", engine); err != nil {
		return nil, err
	}
	if err := textcheck.Check("engine", engine); err != nil {
		return nil, apierr.Invalid("%v", err)
	}
	var a *store.Artifact
	sha := ""
	if ref != "" {
		var err error
		if a, err = s.Resolve(ref); err != nil {
			return nil, err
		}
		if arbiterv1.ArtifactKind(a.Kind) != arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
			return nil, apierr.Invalid("artifact %s is an engine, not a net", a.SHA256[:12])
		}
		sha = a.SHA256
	}
	if err := s.cfg.Store.SetDefaultNet(ctx, engine, sha); err != nil {
		return nil, apierr.Store(err)
	}
	s.mu.Lock()
	if sha == "" {
		delete(s.defaults, engine)
	} else {
		s.defaults[engine] = sha
	}
	s.mu.Unlock()
	s.log.Info("default net set", zap.String("engine", engine), zap.String("sha256", sha), zap.String("by", id.Name))
	return a, nil
}

// DefaultOf lists the engines whose default net sha is, in name order.
func (s *Store) DefaultOf(sha string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for engine, h := range s.defaults {
		if h == sha {
			out = append(out, engine)
		}
	}
	sort.Strings(out)
	return out
}

// Fill completes a test's engine artifact from the store: it resolves a
// prefix to the full hash and copies what the upload said (kind, size,
// platform, name, repository, commit), keeping the build command, program
// and bench the test gives (or taking the upload's when it gives none).
func (s *Store) Fill(which string, e *arbiterv1.EngineArtifact) error {
	if e.GetSha256() == "" && e.GetRepository() != "" {
		return apierr.Invalid("%s: source=git:%s@%s was not fetched: submit through the coordinator's API, which fetches it", which,
			gitsource.Redact(e.GetRepository()), e.GetBranch())
	}
	a, err := s.Resolve(e.GetSha256())
	if err != nil {
		return apierr.Invalid("%s: %s", which, err.Error())
	}
	if arbiterv1.ArtifactKind(a.Kind) == arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
		return apierr.Invalid("%s: artifact %s is a net, not an engine (name it with net=)", which, a.SHA256[:12])
	}
	e.Sha256, e.Kind, e.Size, e.Platform = a.SHA256, arbiterv1.ArtifactKind(a.Kind), uint64(a.Size), a.Platform
	e.Name, e.Repository, e.Branch, e.Commit, e.Message = a.Name, a.Repository, a.Branch, a.Commit, a.Message
	if e.Build == "" {
		e.Build = a.Build
	}
	if e.Exe == "" {
		e.Exe = a.Exe
	}
	if e.Bench == 0 {
		e.Bench = a.Bench
	}
	if err := checkText(which+" build", e.Build); err != nil {
		return err
	}
	if err := CheckExe(e.Exe); err != nil {
		return err
	}
	if e.Kind == arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE && strings.TrimSpace(e.Build) == "" {
		return apierr.Invalid("%s: artifact %s is a source tree and no build command is given (build=...)", which, a.SHA256[:12])
	}
	return nil
}

// Proto renders an artifact.
func Proto(a *store.Artifact, usedBy []string) *arbiterv1.Artifact {
	p := &arbiterv1.Artifact{Sha256: a.SHA256, Kind: arbiterv1.ArtifactKind(a.Kind), Size: uint64(a.Size), Name: a.Name, Uploader: a.Uploader,
		Platform: a.Platform, Build: a.Build, Exe: a.Exe, Bench: a.Bench, Repository: a.Repository, Branch: a.Branch,
		Commit: a.Commit, Message: a.Message, UsedBy: usedBy, Engine: a.Engine}
	if !a.CreatedAt.IsZero() {
		p.CreatedAt = timestamp(a.CreatedAt)
	}
	return p
}

func timestamp(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }
