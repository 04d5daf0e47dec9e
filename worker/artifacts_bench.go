package worker

// The bench of an uploaded engine: its node count compared with the
// test's signature before its first game. The engine runs in its sandbox
// and speaks through enginehost/protocol: "ENGINE bench" on its command
// line, or, with a net, a UCI session that loads the net first
// (protocol.BenchSession).

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/protocol"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// withoutOptions drops the engine's list of options ("option name ...")
// from a session's log: the lines around its complaint are what matter.
func withoutOptions(log string) string {
	lines := strings.Split(log, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !protocol.IsOptionLine(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// engineError finds an engine's complaint in a line of its output: UCI
// engines say "info string ERROR: ..." (Stockfish) or "info string error:
// ..." (Arbiter's) when an option's file does not load.
var engineError = regexp.MustCompile(`(?i)^\s*(?:info\s+string\s+)?error\b`)

// benchWatch is what the worker keeps of a bench's output, line by line.
type benchWatch struct {
	count    protocol.BenchCount
	verdict  string // the sandbox's, when it killed the engine
	rejected string // the engine's first error line in a session
	session  bool
}

func (w *benchWatch) line(line string) {
	w.count.Line(line)
	if v, ok := sandbox.Verdict(line); ok {
		w.verdict = v
	}
	if w.session && w.rejected == "" && engineError.MatchString(line) {
		w.rejected = strings.TrimSpace(line)
		if len(w.rejected) > 300 {
			w.rejected = w.rejected[:300] + "…"
		}
	}
}

// runBench runs "ENGINE bench" (in the sandbox), or with session a UCI
// session that loads a net and benches (args: the engine's own), and
// reads its node count from its output as it streams (outputTail): a
// bench that prints more than maxBenchOutput is stopped. rejected is the
// first error line the engine printed in a session (it did not take the
// net, or another option).
func (c *artifactCache) runBench(ctx context.Context, exe, dir string, readOnly []string, session *protocol.BenchSession, args []string) (nodes uint64, log, rejected string, err error) {
	bctx, cancel := context.WithTimeout(ctx, c.bench)
	defer cancel()
	if session == nil {
		args = []string{"bench"}
	}
	path, cargs, cdir := c.command(exe, args, dir, readOnly)
	// stdout and stderr go to one outputTail, as they come: Stockfish
	// writes its bench's figures to stderr, the sandbox its verdict, and
	// a flood on either stops the engine.
	w := &benchWatch{session: session != nil}
	var started atomic.Pointer[engineproc.Proc] // set once it runs: a flood may come first
	out := newOutputTail(maxBenchOutput, func() {
		if p := started.Load(); p != nil {
			p.Kill()
		}
	}, w.line)
	cfg := engineproc.Config{Path: path, Args: cargs, Dir: cdir, StderrCopy: out}
	if c.wrapper == "" {
		cfg.Dir, cfg.Env = dir, sandbox.CleanEnv(dir)
	}
	conn, err := protocol.Start(cfg)
	if err != nil {
		return 0, "", "", err
	}
	defer conn.Kill()
	if started.Store(conn.Proc()); out.overLimit() {
		conn.Kill()
	}
	conn.Watch(bctx)
	var lineBuf []byte
	onLine := func(line []byte) {
		lineBuf = append(append(lineBuf[:0], line...), '\n')
		out.Write(lineBuf)
	}
	ready := false
	if session == nil {
		conn.Proc().CloseInput()
		err = protocol.DrainOutput(conn, time.Now().Add(c.bench), onLine)
	} else {
		ready, err = session.Run(conn, c.bench, onLine)
	}
	conn.Kill()                             // an engine that outlived its output
	conn.Proc().WaitStderr(5 * time.Second) // the last of stderr is in out
	out.flush()
	text := tail(out.String())
	switch {
	case out.overLimit():
		return 0, text, w.rejected, fmt.Errorf("stopped: it printed more than %d MiB", maxBenchOutput>>20)
	case bctx.Err() == context.DeadlineExceeded || errors.Is(err, protocol.ErrHang):
		return 0, text, w.rejected, fmt.Errorf("no end within %v", c.bench)
	case w.verdict != "":
		return 0, text, w.rejected, fmt.Errorf("killed by the worker's limits: %s", w.verdict)
	case w.rejected != "":
		return 0, text, w.rejected, nil
	case session != nil && !ready:
		if err == nil {
			err = errors.New("it ended")
		}
		return 0, text, "", fmt.Errorf("no readyok after loading the net (%v)", err)
	case session != nil && !session.Bench:
		return 0, text, "", nil
	}
	nodes, cerr := w.count.Nodes()
	switch {
	case cerr == nil:
		return nodes, text, "", nil
	case err != nil:
		return 0, text, "", fmt.Errorf("%v, and %v", err, cerr)
	}
	return 0, text, "", cerr
}

// benchCheck is an uploaded engine to bench before its first game.
type benchCheck struct {
	engine   *arbiterv1.EngineSpec
	exe, run string
	readOnly []string
	net      string            // the net's file ("": the engine's own)
	options  map[string]string // as the games set them, the net's included
}

// key names a verified bench: the program, the signature, the net.
func (b *benchCheck) key() string {
	a := b.engine.GetArtifact()
	return a.GetSha256() + "\x00" + b.exe + "\x00" + strconv.FormatUint(a.GetBench(), 10) + "\x00" + b.net
}

// checkBench runs the engine's bench once per program, signature and net
// (c.verified remembers it) and compares it with the test's signature; a
// test without a signature runs the engine unverified, and with a net
// still loads the net once. Each outcome is reported and counted.
func (c *artifactCache) checkBench(ctx context.Context, b *benchCheck, report, reportNet reportFunc) error {
	sig := b.engine.GetArtifact().GetBench()
	bench, benched := c.verified[b.key()]
	if b.net != "" && benched {
		reportNet(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "cache", "", 0)
	}
	switch {
	case b.net != "" && !benched:
		// The net is loaded (and the bench run) before the first game: an
		// engine that rejects it is refused here.
		return c.benchWithNet(ctx, b, report, reportNet)
	case benched && sig == 0:
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, unverified, "", 0)
	case benched:
		// Benched for an earlier test: "cache", as for downloads and builds.
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "cache", "", bench)
	case sig == 0:
		// No signature: nothing to compare; the bench is not run.
		c.m.benches.WithLabelValues("unchecked").Inc()
		c.verified[b.key()] = 0
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, unverified, "", 0)
	default:
		return c.benchPlain(ctx, b, report)
	}
	return nil
}

// unverified is the report of an engine whose test gave no signature.
const unverified = "no signature given: the engine runs unverified"

// benchPlain runs "ENGINE bench" and compares its count with the signature.
func (c *artifactCache) benchPlain(ctx context.Context, b *benchCheck, report reportFunc) error {
	e, sig := b.engine, b.engine.GetArtifact().GetBench()
	nodes, log, _, err := c.runBench(ctx, b.exe, b.run, b.readOnly, nil, nil)
	switch {
	case err != nil:
		c.m.benches.WithLabelValues("mismatch").Inc()
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
			detail: fmt.Sprintf("engine %q: bench failed: %v", e.GetName(), err), log: log}
	case nodes != sig:
		c.m.benches.WithLabelValues("mismatch").Inc()
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
			detail: fmt.Sprintf("engine %q: bench %d nodes, the test's signature is %d", e.GetName(), nodes, sig), log: log}
	}
	c.m.benches.WithLabelValues("match").Inc()
	c.verified[b.key()] = nodes
	c.log.Info("uploaded engine verified", zap.String("engine", e.GetName()), zap.String("sha256", e.GetArtifact().GetSha256()[:12]),
		zap.Uint64("bench", nodes), zap.Uint64("signature", sig))
	report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "bench matches the signature", "", nodes)
	return nil
}

// benchWithNet loads the net in a UCI session, benches there when the
// test gives a signature, and compares.
func (c *artifactCache) benchWithNet(ctx context.Context, b *benchCheck, report, reportNet reportFunc) error {
	e, sig := b.engine, b.engine.GetArtifact().GetBench()
	netSha := e.GetNet().GetSha256()[:12]
	session := &protocol.BenchSession{NetOption: matchspec.NetOption(e.GetNet()), Options: b.options, Bench: sig != 0}
	nodes, log, rejected, err := c.runBench(ctx, b.exe, b.run, b.readOnly, session, e.GetArgs())
	switch {
	case rejected != "":
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
			detail: fmt.Sprintf("engine %q rejects net %s: %s", e.GetName(), netSha, rejected), log: withoutOptions(log)}
	case err != nil && sig != 0:
		c.m.benches.WithLabelValues("mismatch").Inc()
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
			detail: fmt.Sprintf("engine %q with net %s: bench failed: %v", e.GetName(), netSha, err), log: log}
	case err != nil:
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
			detail: fmt.Sprintf("engine %q with net %s: %v", e.GetName(), netSha, err), log: log}
	case sig != 0 && nodes != sig:
		c.m.benches.WithLabelValues("mismatch").Inc()
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH,
			detail: fmt.Sprintf("engine %q with net %s: bench %d nodes, the test's signature is %d", e.GetName(), netSha, nodes, sig), log: log}
	}
	reportNet(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "the engine loaded it", "", 0)
	c.verified[b.key()] = nodes
	if sig == 0 {
		c.m.benches.WithLabelValues("unchecked").Inc()
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, unverified, "", 0)
		return nil
	}
	c.m.benches.WithLabelValues("match").Inc()
	c.log.Info("uploaded engine verified with its net", zap.String("engine", e.GetName()), zap.String("sha256", e.GetArtifact().GetSha256()[:12]),
		zap.String("net", netSha), zap.Uint64("bench", nodes), zap.Uint64("signature", sig))
	report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "bench with the net matches the signature", "", nodes)
	return nil
}
