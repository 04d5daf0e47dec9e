package worker

// Uploaded engines: a test may name an engine the coordinator stores (a
// binary, or a source tree each worker builds). Before its first game the
// worker fetches it (verifying the SHA-256), builds a source tree once per
// (artifact, build command, platform) with a time limit, runs the engine's
// bench and compares the node count with the test's signature. Anything
// that fails is a refusal of the test, reported to the coordinator with the
// reason and the end of the build's or the bench's output.
//
// The cache lives under the worker's data dir:
//
//	artifacts/objects/SHA       downloaded, hash checked
//	artifacts/partial/SHA       a download under way (resumed from its length)
//	artifacts/builds/KEY/       an unpacked, built tree (KEY: artifact, build, exe, platform)
//	artifacts/builds/KEY.tmp-*  a build under way (removed at start: a killed build starts over)
//	run/                        the engines' working directories
//
// It is an LRU capped in bytes: the least recently used entries go first,
// never one a running batch uses. A file is renamed into place only when it
// is complete, so a worker killed mid-download or mid-build resumes cleanly.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Defaults of the artifact cache.
const (
	DefaultCacheBytes   = 4 << 30
	DefaultBuildTimeout = 10 * time.Minute
	DefaultBenchTimeout = 3 * time.Minute
	maxUnpackedBytes    = 2 << 30
	buildOpenFiles      = 1024
	logTail             = 4 << 10
)

// Platform is the worker's GOOS/GOARCH, as the coordinator reads a
// binary's.
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// refusal is a step that failed: the state reported, why, and a log tail.
type refusal struct {
	state  arbiterv1.ArtifactCheckState
	detail string
	log    string
	net    bool // a step with the engine's net (reported as such)
}

func (r *refusal) Error() string {
	if r.log == "" {
		return r.detail
	}
	return r.detail + "\n" + tailLines(r.log, 20)
}

// reason is the refusal in one line, for the coordinator's record of why
// the worker cannot run the test (the log goes with the report).
func (r *refusal) reason() string {
	last := strings.TrimSpace(tailLines(r.log, 1))
	if last == "" {
		return r.detail
	}
	if len(last) > 200 {
		last = last[:200] + "…"
	}
	return r.detail + " (log ends: " + last + ")"
}

// tailLines is the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// artifactCache fetches, builds and verifies uploaded engines.
type artifactCache struct {
	dir      string // DataDir/artifacts
	runDir   string // DataDir/run
	maxBytes int64
	build    time.Duration
	bench    time.Duration
	limits   sandbox.Limits
	wrapper  string // the sandbox wrapper ("" : unsandboxed)
	compiler bool
	// engines: it runs uploaded engines (--allow-uploads and a working
	// sandbox); without, the cache holds nets only (for the embedded
	// engine): data, never run.
	engines bool
	client  arbiterv1.ArtifactServiceClient
	log     *zap.Logger
	m       *artifactMetrics

	mu       sync.Mutex        // one preparation at a time (downloads and builds are shared)
	verified map[string]uint64 // program and signature → its bench (0: unchecked)
	ready    map[string]bool   // test, engine and artifact prepared and reported already
	pinned   map[string]int    // cache entries running batches use
}

// newArtifactCache prepares the cache under cfg.DataDir (nil without
// one). Without --allow-uploads (or without a working sandbox) it keeps
// nets only. Its metrics m are the worker's, exported whether or not it
// runs uploaded engines.
func newArtifactCache(cfg Config, log *zap.Logger, m *artifactMetrics) (*artifactCache, error) {
	if cfg.DataDir == "" {
		return nil, nil
	}
	// Absolute: the sandbox wrapper and the engines it starts run in other
	// directories.
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("worker: artifact cache: %w", err)
	}
	c := &artifactCache{dir: filepath.Join(dataDir, "artifacts"), runDir: filepath.Join(dataDir, "run"),
		maxBytes: cfg.CacheBytes, build: cfg.BuildTimeout, bench: DefaultBenchTimeout, limits: cfg.Limits,
		client: arbiterv1.NewArtifactServiceClient(cfg.Conn), log: log, m: m,
		verified: map[string]uint64{}, ready: map[string]bool{}, pinned: map[string]int{}}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultCacheBytes
	}
	if c.build <= 0 {
		c.build = DefaultBuildTimeout
	}
	for _, d := range []string{"objects", "partial", "builds"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("worker: artifact cache: %w", err)
		}
	}
	// Engines' directories of batches a killed worker left behind.
	if err := os.RemoveAll(c.runDir); err != nil {
		return nil, fmt.Errorf("worker: artifact cache: %w", err)
	}
	if err := os.MkdirAll(c.runDir, 0o700); err != nil {
		return nil, fmt.Errorf("worker: artifact cache: %w", err)
	}
	// A build killed half-way starts over.
	tmps, _ := filepath.Glob(filepath.Join(c.dir, "builds", "*.tmp-*"))
	for _, t := range tmps {
		os.RemoveAll(t)
	}
	if !cfg.AllowUploads {
		return c, nil // nets only
	}
	switch {
	case cfg.Unsandboxed:
		log.Warn("uploaded engines run WITHOUT the sandbox (--unsandboxed): they can do anything this user can")
	case !sandbox.Supported():
		return nil, errors.New("worker: no sandbox on this platform for uploaded engines; give no data dir, or allow unsandboxed engines explicitly")
	default:
		c.wrapper = cfg.SandboxWrapper
		if c.wrapper == "" {
			self, err := os.Executable()
			if err != nil {
				return nil, fmt.Errorf("worker: sandbox wrapper: %w", err)
			}
			c.wrapper = self
		}
		features, err := sandbox.Probe(c.wrapper)
		if err != nil {
			// Without its sandbox the worker runs no uploaded engine: its
			// capabilities say so, and the coordinator offers it none.
			log.Error("the sandbox for uploaded engines does not work here: this worker runs none (--unsandboxed overrides)", zap.Error(err))
			return c, nil // nets only
		}
		log.Info("sandbox for uploaded engines", zap.String("enforces", features), zap.String("limits", c.limits.String()))
		if strings.Contains(features, sandbox.NoThreadCap) {
			log.Warn("nothing bounds an uploaded engine's threads here: run this worker as an ordinary user (RLIMIT_NPROC in the sandbox's user namespace), or as root with a writable pids cgroup")
		}
	}
	c.engines = true
	_, ccErr := exec.LookPath("cc")
	_, makeErr := exec.LookPath("make")
	c.compiler = ccErr == nil && makeErr == nil
	if !c.compiler {
		log.Info("no cc or make in PATH: this worker takes no source builds")
	}
	return c, nil
}

func (c *artifactCache) capabilities() []string {
	if c == nil {
		return nil
	}
	caps := []string{capability.Nets}
	if !c.engines {
		return caps
	}
	caps = append(caps, capability.Artifacts)
	if c.compiler {
		caps = append(caps, capability.SourceBuild)
	}
	return caps
}

// prepared is an uploaded engine (or an engine with a net) ready to play:
// the spec the match runner starts (the sandbox wrapper and its
// arguments, the net's path in its option), and what to unpin after.
type prepared struct {
	spec    *arbiterv1.EngineSpec
	entries []string // cache entries pinned: the program or tree, the net
	run     string   // its working directory, removed by done ("": none)
}

// prepare makes engine e of test jobID playable: fetched, built, verified.
// Each step is reported to the coordinator; a failure is a *refusal.
func (c *artifactCache) prepare(ctx context.Context, workerID, jobID string, e *arbiterv1.EngineSpec) (*prepared, error) {
	reporter := func(engine, sha string) reportFunc {
		return func(st arbiterv1.ArtifactCheckState, detail, log string, bench uint64) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_, err := c.client.ReportArtifact(rctx, &arbiterv1.ReportArtifactRequest{WorkerId: workerID, JobId: jobID, Engine: engine,
				Sha256: sha, State: st, Detail: detail, Log: log, Bench: bench})
			if err != nil {
				c.log.Warn("artifact report not sent", zap.Error(err))
			}
		}
	}
	// The engine's steps, and its net's under "NAME net" (status shows
	// one line per engine and worker).
	report := reporter(e.GetName(), e.GetArtifact().GetSha256())
	reportNet := reporter(netCheckName(e.GetName()), e.GetNet().GetSha256())
	rkey := jobID + "\x00" + e.GetName() + "\x00" + e.GetArtifact().GetSha256() + "\x00" + e.GetNet().GetSha256()
	c.mu.Lock()
	quiet := c.ready[rkey]
	c.mu.Unlock()
	if quiet {
		// Later batches of a test: its status holds the steps already.
		report = func(arbiterv1.ArtifactCheckState, string, string, uint64) {}
		reportNet = report
	}
	p, err := c.prepareLocked(ctx, jobID, e, report, reportNet)
	if err == nil {
		c.mu.Lock()
		c.ready[rkey] = true
		c.mu.Unlock()
	}
	var r *refusal
	if errors.As(err, &r) {
		if r.net {
			reportNet(r.state, r.detail, r.log, 0)
		} else {
			report(r.state, r.detail, r.log, 0)
		}
	}
	return p, err
}

type reportFunc func(st arbiterv1.ArtifactCheckState, detail, log string, bench uint64)

func (c *artifactCache) prepareLocked(ctx context.Context, jobID string, e *arbiterv1.EngineSpec, report, reportNet reportFunc) (*prepared, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := e.GetArtifact()
	if a != nil && !c.engines {
		return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED,
			detail: "this worker runs no uploaded engines (its operator did not allow them: --allow-uploads, or its sandbox does not work)"}
	}
	var net string // the net's verified file ("": the engine's own)
	if e.GetNet() != nil {
		var err error
		if net, err = c.prepareNet(ctx, e, reportNet); err != nil {
			return nil, err
		}
	}
	if a == nil {
		// The embedded engine with a net: nothing to run or bench here.
		spec := withNet(e, net)
		c.pinned[net]++
		return &prepared{spec: spec, entries: []string{net}}, nil
	}
	entry, exe, err := c.program(ctx, e, report)
	if err != nil {
		return nil, err
	}
	touch(entry)
	// A directory of its own for this batch, removed when it ends (done):
	// what the engine wrote there does not outlive the batch.
	run, err := os.MkdirTemp(c.runDir, safeName(jobID+"-"+e.GetName())+"-")
	if err != nil {
		return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: err.Error()}
	}
	var readOnly []string
	if entry != exe {
		readOnly = []string{entry} // the built tree
	}
	if net != "" {
		readOnly = append(readOnly, net)
	}
	spec := withNet(e, net)
	spec.Artifact = nil
	spec.Command, spec.Args, spec.Dir = c.command(exe, e.GetArgs(), run, readOnly)
	b := &benchCheck{engine: e, exe: exe, run: run, readOnly: readOnly, net: net, options: spec.GetOptions()}
	if err := c.checkBench(ctx, b, report, reportNet); err != nil {
		os.RemoveAll(run)
		return nil, err
	}
	entries := []string{entry}
	if net != "" {
		entries = append(entries, net)
	}
	for _, en := range entries {
		c.pinned[en]++
	}
	return &prepared{spec: spec, entries: entries, run: run}, nil
}

// program fetches engine e's artifact and, for a source tree, builds it:
// the cache entry (the program, or the built tree) and the program.
func (c *artifactCache) program(ctx context.Context, e *arbiterv1.EngineSpec, report reportFunc) (entry, exe string, err error) {
	a := e.GetArtifact()
	if !validHash(a.GetSha256()) {
		return "", "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: fmt.Sprintf("artifact %q: not a SHA-256", a.GetSha256())}
	}
	if a.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY && a.GetPlatform() != "" && a.GetPlatform() != Platform() {
		return "", "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED,
			detail: fmt.Sprintf("engine %q is built for %s, this worker is %s", e.GetName(), a.GetPlatform(), Platform())}
	}
	obj, fromCache, err := c.fetch(ctx, a.GetSha256(), a.GetSize())
	if err != nil {
		return "", "", err
	}
	source := "download"
	if fromCache {
		source = "cache"
	}
	c.m.downloads.WithLabelValues(source).Inc()
	report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_FETCHED, source, "", 0)
	if a.GetKind() != arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE {
		if err := os.Chmod(obj, 0o755); err != nil {
			return "", "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: err.Error()}
		}
		return obj, obj, nil
	}
	if !c.compiler {
		return "", "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: "this worker has no compiler for source builds"}
	}
	dir, cached, err := c.buildTree(ctx, obj, a)
	if err != nil {
		c.m.builds.WithLabelValues("failed").Inc()
		return "", "", err
	}
	if cached {
		c.m.builds.WithLabelValues("cached").Inc()
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILT, "cache", "", 0)
	} else {
		c.m.builds.WithLabelValues("ok").Inc()
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILT, "built", "", 0)
	}
	return dir, filepath.Join(dir, exeOf(a)), nil
}

// done unpins what prepare pinned and trims the cache.
func (c *artifactCache) done(p *prepared) {
	if c == nil || p == nil {
		return
	}
	if p.run != "" {
		if err := os.RemoveAll(p.run); err != nil {
			c.log.Warn("engine directory not removed", zap.String("dir", p.run), zap.Error(err))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, en := range p.entries {
		if c.pinned[en]--; c.pinned[en] <= 0 {
			delete(c.pinned, en)
		}
	}
	c.trim()
}

// command is what the match runner starts for a program: the sandbox
// wrapper around it, or the program itself when unsandboxed. readOnly is
// what the engine may read besides its program (its built tree).
func (c *artifactCache) command(exe string, args []string, dir string, readOnly []string) (string, []string, string) {
	if c.wrapper == "" {
		return exe, args, dir
	}
	path, wargs := sandbox.Command(c.wrapper, sandbox.Spec{Limits: c.limits, Dir: dir, Env: sandbox.CleanEnv(dir), Path: exe, Args: args,
		ReadOnly: readOnly})
	return path, wargs, ""
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}
