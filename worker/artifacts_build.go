package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/srctree"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

func exeOf(a *arbiterv1.EngineArtifact) string {
	return filepath.FromSlash(matchspec.ArtifactExe(a.GetExe()))
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
