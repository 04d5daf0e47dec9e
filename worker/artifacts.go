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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/srctree"
	"github.com/arbiter-chess/arbiter/engine/nnue"
	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
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

type artifactMetrics struct {
	downloads *prometheus.CounterVec
	builds    *prometheus.CounterVec
	benches   *prometheus.CounterVec
	evictions prometheus.Counter
}

func newArtifactMetrics(reg prometheus.Registerer) *artifactMetrics {
	m := &artifactMetrics{
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_worker_artifact_fetches_total",
			Help: "Uploaded engines and nets this worker needed, by source: download (from the coordinator), cache."}, []string{"source"}),
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_worker_artifact_builds_total",
			Help: "Source builds on this worker by outcome: ok, cached, failed."}, []string{"outcome"}),
		benches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_worker_bench_checks_total",
			Help: "Bench signature checks of uploaded engines by outcome: match, unchecked, mismatch."}, []string{"outcome"}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_worker_artifact_evictions_total",
			Help: "Cache entries (downloads, builds) removed to stay under the cache size."}),
	}
	for _, s := range []string{"download", "cache"} {
		m.downloads.WithLabelValues(s)
	}
	for _, s := range []string{"ok", "cached", "failed"} {
		m.builds.WithLabelValues(s)
	}
	for _, s := range []string{"match", "unchecked", "mismatch"} {
		m.benches.WithLabelValues(s)
	}
	if reg != nil {
		reg.MustRegister(m.downloads, m.builds, m.benches, m.evictions)
	}
	return m
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

// netCheckName is the engine name under which a worker reports its steps
// with an engine's net.
func netCheckName(engine string) string { return engine + " net" }

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
	if !validHash(a.GetSha256()) {
		return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: fmt.Sprintf("artifact %q: not a SHA-256", a.GetSha256())}
	}
	if a.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY && a.GetPlatform() != "" && a.GetPlatform() != Platform() {
		return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED,
			detail: fmt.Sprintf("engine %q is built for %s, this worker is %s", e.GetName(), a.GetPlatform(), Platform())}
	}
	obj, fromCache, err := c.fetch(ctx, a.GetSha256(), a.GetSize())
	if err != nil {
		return nil, err
	}
	if fromCache {
		c.m.downloads.WithLabelValues("cache").Inc()
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_FETCHED, "cache", "", 0)
	} else {
		c.m.downloads.WithLabelValues("download").Inc()
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_FETCHED, "download", "", 0)
	}
	entry, exe := obj, obj
	if a.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE {
		if !c.compiler {
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: "this worker has no compiler for source builds"}
		}
		dir, cached, err := c.buildTree(ctx, obj, a)
		if err != nil {
			c.m.builds.WithLabelValues("failed").Inc()
			return nil, err
		}
		entry = dir
		exe = filepath.Join(dir, exeOf(a))
		if cached {
			c.m.builds.WithLabelValues("cached").Inc()
			report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILT, "cache", "", 0)
		} else {
			c.m.builds.WithLabelValues("ok").Inc()
			report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILT, "built", "", 0)
		}
	} else if err := os.Chmod(obj, 0o755); err != nil {
		return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: err.Error()}
	}
	touch(entry)
	// A directory of its own for this batch, removed when it ends (done):
	// what the engine wrote there does not outlive the batch.
	run, err := os.MkdirTemp(c.runDir, safeName(jobID+"-"+e.GetName())+"-")
	if err != nil {
		return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: err.Error()}
	}
	keepRun := false
	defer func() {
		if !keepRun {
			os.RemoveAll(run)
		}
	}()
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
	vkey := a.GetSha256() + "\x00" + exe + "\x00" + strconv.FormatUint(a.GetBench(), 10) + "\x00" + net
	bench, benched := c.verified[vkey]
	var session *uciSession // with a net, the bench runs in a UCI session that loads it
	if net != "" {
		session = &uciSession{args: e.GetArgs(), options: spec.GetOptions(), netOption: matchspec.NetOption(e.GetNet()), bench: a.GetBench() != 0}
	}
	if session != nil && benched {
		reportNet(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "cache", "", 0)
	}
	switch {
	case session != nil && !benched:
		// The net is loaded (and the bench run) before the first game: an
		// engine that rejects it is refused here.
		nodes, log, rejected, err := c.runBench(ctx, exe, run, readOnly, session)
		switch {
		case rejected != "":
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
				detail: fmt.Sprintf("engine %q rejects net %s: %s", e.GetName(), e.GetNet().GetSha256()[:12], rejected), log: withoutOptions(log)}
		case err != nil && a.GetBench() != 0:
			c.m.benches.WithLabelValues("mismatch").Inc()
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
				detail: fmt.Sprintf("engine %q with net %s: bench failed: %v", e.GetName(), e.GetNet().GetSha256()[:12], err), log: log}
		case err != nil:
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
				detail: fmt.Sprintf("engine %q with net %s: %v", e.GetName(), e.GetNet().GetSha256()[:12], err), log: log}
		case a.GetBench() != 0 && nodes != a.GetBench():
			c.m.benches.WithLabelValues("mismatch").Inc()
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
				detail: fmt.Sprintf("engine %q with net %s: bench %d nodes, the test's signature is %d", e.GetName(), e.GetNet().GetSha256()[:12],
					nodes, a.GetBench()), log: log}
		}
		reportNet(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "the engine loaded it", "", 0)
		c.verified[vkey] = nodes
		if a.GetBench() == 0 {
			c.m.benches.WithLabelValues("unchecked").Inc()
			report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "no signature given: the engine runs unverified", "", 0)
		} else {
			c.m.benches.WithLabelValues("match").Inc()
			c.log.Info("uploaded engine verified with its net", zap.String("engine", e.GetName()), zap.String("sha256", a.GetSha256()[:12]),
				zap.String("net", e.GetNet().GetSha256()[:12]), zap.Uint64("bench", nodes), zap.Uint64("signature", a.GetBench()))
			report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "bench with the net matches the signature", "", nodes)
		}
	case benched && a.GetBench() == 0:
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "no signature given: the engine runs unverified", "", 0)
	case benched:
		// Benched for an earlier test: "cache", as for downloads and builds.
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "cache", "", bench)
	case a.GetBench() == 0:
		// No signature: nothing to compare; the bench is not run.
		c.m.benches.WithLabelValues("unchecked").Inc()
		c.verified[vkey] = 0
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "no signature given: the engine runs unverified", "", 0)
	default:
		nodes, log, _, err := c.runBench(ctx, exe, run, readOnly, nil)
		switch {
		case err != nil:
			c.m.benches.WithLabelValues("mismatch").Inc()
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
				detail: fmt.Sprintf("engine %q: bench failed: %v", e.GetName(), err), log: log}
		case a.GetBench() != 0 && nodes != a.GetBench():
			c.m.benches.WithLabelValues("mismatch").Inc()
			return nil, &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
				detail: fmt.Sprintf("engine %q: bench %d nodes, the test's signature is %d", e.GetName(), nodes, a.GetBench()), log: log}
		case a.GetBench() == 0:
			c.m.benches.WithLabelValues("unchecked").Inc()
		default:
			c.m.benches.WithLabelValues("match").Inc()
		}
		c.verified[vkey] = nodes
		detail := "bench matches the signature"
		c.log.Info("uploaded engine verified", zap.String("engine", e.GetName()), zap.String("sha256", a.GetSha256()[:12]),
			zap.Uint64("bench", nodes), zap.Uint64("signature", a.GetBench()))
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, detail, "", nodes)
	}
	entries := []string{entry}
	if net != "" {
		entries = append(entries, net)
	}
	for _, en := range entries {
		c.pinned[en]++
	}
	keepRun = true
	return &prepared{spec: spec, entries: entries, run: run}, nil
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

func exeOf(a *arbiterv1.EngineArtifact) string {
	return filepath.FromSlash(matchspec.ArtifactExe(a.GetExe()))
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

func touch(path string) {
	now := time.Now()
	os.Chtimes(path, now, now)
}

// fetch returns the path of the artifact's verified bytes, downloading
// (or resuming a download) when the cache has none.
func (c *artifactCache) fetch(ctx context.Context, sha string, size uint64) (string, bool, error) {
	obj := filepath.Join(c.dir, "objects", sha)
	if _, err := os.Stat(obj); err == nil {
		return obj, true, nil
	}
	part := filepath.Join(c.dir, "partial", sha)
	refuse := func(format string, args ...any) error {
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: fmt.Sprintf(format, args...)}
	}
	c.trimFor(int64(size))
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return "", false, ctx.Err()
			case <-time.After(time.Duration(attempt) * time.Second):
			}
		}
		err := c.download(ctx, sha, part, int64(size))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		lastErr = err
		c.log.Warn("artifact download broke; resuming", zap.String("sha256", sha[:12]), zap.Error(err))
		if attempt == 4 {
			return "", false, refuse("artifact %s: download failed: %v", sha[:12], lastErr)
		}
	}
	got, err := fileHash(part)
	if err != nil {
		return "", false, refuse("artifact %s: %v", sha[:12], err)
	}
	if got != sha {
		os.Remove(part)
		return "", false, refuse("artifact %s: the downloaded bytes have SHA-256 %s: hash mismatch, discarded", sha[:12], got[:12])
	}
	if err := os.Rename(part, obj); err != nil {
		return "", false, refuse("artifact %s: %v", sha[:12], err)
	}
	c.log.Info("artifact downloaded", zap.String("sha256", sha[:12]), zap.Uint64("bytes", size))
	return obj, false, nil
}

// download appends the artifact's bytes to part from its current length.
func (c *artifactCache) download(ctx context.Context, sha, part string, size int64) error {
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	have := st.Size()
	if size > 0 && have > size {
		if err := f.Truncate(0); err != nil {
			return err
		}
		have = 0
	}
	if size > 0 && have == size {
		return nil
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return err
	}
	if have > 0 {
		c.log.Info("artifact download resumed", zap.String("sha256", sha[:12]), zap.Int64("offset", have))
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.client.Download(dctx, &arbiterv1.DownloadRequest{Sha256: sha, Offset: uint64(have)})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if msg.GetSize() > 0 && have+int64(len(msg.GetData())) > int64(msg.GetSize()) {
			return fmt.Errorf("the coordinator sent more than %d bytes", msg.GetSize())
		}
		if _, err := f.Write(msg.GetData()); err != nil {
			return err
		}
		have += int64(len(msg.GetData()))
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if size > 0 && have != size {
		return fmt.Errorf("download ended at %d of %d bytes", have, size)
	}
	return nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buildKey names a build: the artifact, the build command, the program and
// the platform.
func buildKey(a *arbiterv1.EngineArtifact) string {
	h := sha256.Sum256([]byte(a.GetSha256() + "\x00" + a.GetBuild() + "\x00" + exeOf(a) + "\x00" + Platform()))
	return hex.EncodeToString(h[:16])
}

// buildTree unpacks and builds a source artifact once; later calls find
// the build in the cache.
func (c *artifactCache) buildTree(ctx context.Context, obj string, a *arbiterv1.EngineArtifact) (string, bool, error) {
	final := filepath.Join(c.dir, "builds", buildKey(a))
	if _, err := os.Stat(filepath.Join(final, exeOf(a))); err == nil {
		return final, true, nil
	}
	failed := func(detail, log string) error {
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILD_FAILED, detail: detail, log: log}
	}
	tmp, err := os.MkdirTemp(filepath.Join(c.dir, "builds"), buildKey(a)+".tmp-")
	if err != nil {
		return "", false, failed(err.Error(), "")
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	if err := unpack(obj, tmp); err != nil {
		return "", false, failed(fmt.Sprintf("artifact %s: unpacking the source tree: %v", a.GetSha256()[:12], err), "")
	}
	c.trimFor(dirSize(tmp))
	start := time.Now()
	c.log.Info("building uploaded engine", zap.String("sha256", a.GetSha256()[:12]), zap.String("build", a.GetBuild()))
	out, err := c.runBuild(ctx, tmp, a.GetBuild())
	if ctx.Err() != nil {
		return "", false, ctx.Err()
	}
	if err != nil {
		c.log.Warn("build failed", zap.String("sha256", a.GetSha256()[:12]), zap.Error(err), zap.String("log", tailLines(out, 10)))
		return "", false, failed(fmt.Sprintf("build %q failed: %v", a.GetBuild(), err), tail(out))
	}
	exe := filepath.Join(tmp, exeOf(a))
	if st, err := os.Stat(exe); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", false, failed(fmt.Sprintf("build %q made no program %s", a.GetBuild(), exeOf(a)), tail(out))
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", false, failed(err.Error(), "")
	}
	keep = true
	c.log.Info("uploaded engine built", zap.String("sha256", a.GetSha256()[:12]), zap.Duration("elapsed", time.Since(start).Round(time.Millisecond)))
	return final, false, nil
}

func tail(s string) string {
	if len(s) > logTail {
		return "…" + s[len(s)-logTail:]
	}
	return s
}

// runBuild runs the build command in dir with a time limit and a clean
// environment, in the sandbox (sandbox.Spec.Build: it may start
// processes, it reads and writes its tree only, it has no network); the
// end of its output is returned (outputTail: a build that prints more
// than maxBuildOutput is stopped).
func (c *artifactCache) runBuild(ctx context.Context, dir, build string) (string, error) {
	limit := c.build
	bctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(bctx, "sh", "-c", build)
	if c.wrapper != "" {
		l := c.limits
		l.OpenFiles = max(l.OpenFiles, buildOpenFiles)
		l.Disk = maxUnpackedBytes
		path, args := sandbox.Command(c.wrapper, sandbox.Spec{Limits: l, Dir: dir, Env: sandbox.CleanEnv(dir), Path: "/bin/sh",
			Args: []string{"-c", build}, Build: true})
		cmd = exec.CommandContext(bctx, path, args...)
	}
	cmd.Dir = dir
	cmd.Env = sandbox.CleanEnv(dir)
	out := newOutputTail(maxBuildOutput, cancel, nil)
	cmd.Stdout, cmd.Stderr = out, out
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	switch {
	case out.overLimit():
		return out.String(), fmt.Errorf("stopped: it printed more than %d MiB", maxBuildOutput>>20)
	case bctx.Err() == context.DeadlineExceeded:
		return out.String(), fmt.Errorf("over the time limit of %v", limit)
	}
	return out.String(), err
}

// unpack extracts a gzip-compressed tar into dir, refusing entries that
// would land outside it (through links too: base/srctree) and trees
// over maxUnpackedBytes.
func unpack(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return srctree.Unpack(f, dir, maxUnpackedBytes)
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// benchNodes finds the node count in a bench's output: Stockfish's "Nodes
// searched  : N", or the last "nodes N" / "N nodes" line of others.
var benchNodes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)nodes searched\s*:\s*(\d+)`),
	regexp.MustCompile(`(?im)^\s*(?:total\s+)?nodes\s*[:=]?\s*(\d+)\s*$`),
	regexp.MustCompile(`(?im)^\s*(\d+)\s+nodes\b`),
}

// uciSession is a bench that loads a net first: the engine is started as
// it plays (its arguments), given its options with the net's path first,
// asked isready, then bench when a signature is to be checked, then quit.
type uciSession struct {
	args      []string
	options   map[string]string // the options the games set, the net's included
	netOption string
	bench     bool
}

// input is what the session writes to the engine.
func (u *uciSession) input() string {
	var b strings.Builder
	b.WriteString("uci\n")
	// The net first: an option that switches to it (UseNNUE) needs it.
	fmt.Fprintf(&b, "setoption name %s value %s\n", u.netOption, u.options[u.netOption])
	names := make([]string, 0, len(u.options))
	for k := range u.options {
		if k != u.netOption {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "setoption name %s value %s\n", k, u.options[k])
	}
	b.WriteString("isready\n")
	if u.bench {
		b.WriteString("bench\n")
	}
	b.WriteString("quit\n")
	return b.String()
}

// withoutOptions drops the engine's list of options ("option name ...")
// from a session's log: the lines around its complaint are what matter.
func withoutOptions(log string) string {
	lines := strings.Split(log, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "option name ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// engineError finds an engine's complaint in a line of its output: UCI
// engines say "info string ERROR: ..." (Stockfish) or "info string error:
// ..." (Arbiter's) when an option's file does not load.
var engineError = regexp.MustCompile(`(?i)^\s*(?:info\s+string\s+)?error\b`)

// runBench runs "ENGINE bench" (in the sandbox), or with session a UCI
// session that loads a net and benches, and reads its node count from
// its output as it streams (outputTail): a bench that prints more than
// maxBenchOutput is stopped. rejected is the first error line the engine
// printed in a session (it did not take the net, or another option).
func (c *artifactCache) runBench(ctx context.Context, exe, dir string, readOnly []string, session *uciSession) (nodes uint64, log, rejected string, err error) {
	bctx, cancel := context.WithTimeout(ctx, c.bench)
	defer cancel()
	args := []string{"bench"}
	if session != nil {
		args = session.args
	}
	path, args, cdir := c.command(exe, args, dir, readOnly)
	cmd := exec.CommandContext(bctx, path, args...)
	cmd.Dir = cdir
	if c.wrapper == "" {
		cmd.Dir = dir
		cmd.Env = sandbox.CleanEnv(dir)
	}
	if session != nil {
		cmd.Stdin = strings.NewReader(session.input())
	}
	// The last node count each pattern finds, in the patterns' order.
	var counts [3]string
	var verdict string
	ready := false
	out := newOutputTail(maxBenchOutput, cancel, func(line string) {
		for i, re := range benchNodes {
			if m := re.FindStringSubmatch(line); m != nil {
				counts[i] = m[1]
			}
		}
		if v, ok := sandbox.Verdict(line); ok {
			verdict = v
		}
		if session != nil && rejected == "" && engineError.MatchString(line) {
			rejected = strings.TrimSpace(line)
			if len(rejected) > 300 {
				rejected = rejected[:300] + "…"
			}
		}
		if strings.TrimSpace(line) == "readyok" {
			ready = true
		}
	})
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	out.flush()
	text := tail(out.String())
	switch {
	case out.overLimit():
		return 0, text, rejected, fmt.Errorf("stopped: it printed more than %d MiB", maxBenchOutput>>20)
	case bctx.Err() == context.DeadlineExceeded:
		return 0, text, rejected, fmt.Errorf("no end within %v", c.bench)
	case verdict != "":
		return 0, text, rejected, fmt.Errorf("killed by the worker's limits: %s", verdict)
	case rejected != "":
		return 0, text, rejected, nil
	case session != nil && !ready:
		if err == nil {
			err = errors.New("it ended")
		}
		return 0, text, rejected, fmt.Errorf("no readyok after loading the net (%v)", err)
	case session != nil && !session.bench:
		return 0, text, "", nil
	}
	for _, n := range counts {
		if n == "" {
			continue
		}
		if v, perr := strconv.ParseUint(n, 10, 64); perr == nil {
			return v, text, "", nil
		}
	}
	if err != nil {
		return 0, text, "", fmt.Errorf("%v, and no node count in its output", err)
	}
	return 0, text, "", errors.New("no node count in its output")
}

// prepareNet fetches engine e's net into the cache (checking its hash)
// and, for the embedded engine, loads it as the engine would: a file it
// would refuse (truncated, foreign, another architecture) is a refusal
// of the test. It returns the net's file.
func (c *artifactCache) prepareNet(ctx context.Context, e *arbiterv1.EngineSpec, report reportFunc) (string, error) {
	n := e.GetNet()
	if !validHash(n.GetSha256()) {
		return "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
			detail: fmt.Sprintf("net %q: not a SHA-256", n.GetSha256())}
	}
	obj, fromCache, err := c.fetch(ctx, n.GetSha256(), n.GetSize())
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			r.net = true
			r.detail = "net " + strings.TrimPrefix(r.detail, "artifact ")
		}
		return "", err
	}
	source := "download"
	if fromCache {
		source = "cache"
	}
	c.m.downloads.WithLabelValues(source).Inc()
	report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_FETCHED, source, "", 0)
	touch(obj)
	if matchspec.IsBuiltin(e) {
		if err := checkBuiltinNet(obj); err != nil {
			return "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
				detail: fmt.Sprintf("engine %q rejects net %s: %v", e.GetName(), n.GetSha256()[:12], err)}
		}
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "the engine loaded it", "", 0)
	}
	return obj, nil
}

// checkBuiltinNet loads a net as the embedded engine's EvalFile does: the
// size first (a wrong file may be huge), then the layout.
func checkBuiltinNet(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := nnue.CheckSize(st.Size()); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = nnue.Load(data)
	return err
}

// withNet is engine e as the match runner starts it: its net's path in
// the net option (and, for the embedded engine, UseNNUE on unless the
// test sets it), the net reference itself dropped.
func withNet(e *arbiterv1.EngineSpec, net string) *arbiterv1.EngineSpec {
	spec := proto.Clone(e).(*arbiterv1.EngineSpec)
	if net == "" {
		return spec
	}
	if spec.Options == nil {
		spec.Options = map[string]string{}
	}
	spec.Options[matchspec.NetOption(e.GetNet())] = net
	if matchspec.IsBuiltin(e) {
		set := false
		for k := range spec.Options {
			set = set || strings.EqualFold(k, search.OptUseNNUE)
		}
		if !set {
			spec.Options[search.OptUseNNUE] = "true"
		}
	}
	spec.Net = nil
	return spec
}

// trimFor makes room for n more bytes.
func (c *artifactCache) trimFor(n int64) { c.trimTo(c.maxBytes - n) }

// trim keeps the cache under its size.
func (c *artifactCache) trim() { c.trimTo(c.maxBytes) }

// trimTo removes the least recently used entries (downloads and builds)
// not in use until the cache holds at most limit bytes.
func (c *artifactCache) trimTo(limit int64) {
	type entry struct {
		path string
		size int64
		at   time.Time
	}
	var entries []entry
	var total int64
	for _, sub := range []string{"objects", "builds"} {
		list, _ := os.ReadDir(filepath.Join(c.dir, sub))
		for _, d := range list {
			if strings.Contains(d.Name(), ".tmp-") {
				continue
			}
			p := filepath.Join(c.dir, sub, d.Name())
			info, err := os.Stat(p)
			if err != nil {
				continue
			}
			size := info.Size()
			if info.IsDir() {
				size = dirSize(p)
			}
			entries = append(entries, entry{p, size, info.ModTime()})
			total += size
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].at.Before(entries[j].at) })
	for _, e := range entries {
		if total <= limit {
			return
		}
		if c.pinned[e.path] > 0 {
			continue
		}
		os.RemoveAll(e.path)
		total -= e.size
		c.m.evictions.Inc()
		c.log.Info("artifact cache entry evicted", zap.String("path", e.path), zap.Int64("bytes", e.size))
		for k := range c.verified {
			if strings.Contains(k, e.path) || strings.HasPrefix(k, filepath.Base(e.path)) {
				delete(c.verified, k)
			}
		}
	}
}
