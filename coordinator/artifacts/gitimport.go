package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/gitsource"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Git is how the coordinator fetches engines named by a remote
// source=git:URL@REF. It keeps one bare mirror per repository under Dir
// (a cache: removing it costs a fetch), so that a second test of the
// same repository fetches only what is new and two refs of one
// repository can be compared (Diff).
//
// Credentials are the operator's, never the submitter's: a
// git-credential-store file (CredentialsFile) for https, a private key
// (SSHKey) for ssh, or whatever the coordinator's environment gives git
// (a credential helper, SSH_AUTH_SOCK). A URL with a password is refused
// before anything runs (gitsource.CheckURL), so no secret is stored with
// a test or logged.
type GitConfig struct {
	// Dir holds the mirrors (the data directory's git/).
	Dir string
	// CredentialsFile is a git-credential-store file
	// (https://user:token@host per line), read by git at each fetch.
	CredentialsFile string
	// SSHKey is a private key for ssh URLs.
	SSHKey string
	// SSHKnownHosts is the known_hosts file ssh checks hosts against and
	// adds new ones to ("": ssh's own, ~/.ssh/known_hosts of the
	// coordinator's user).
	SSHKnownHosts string
	// AllowFile lets file:// URLs be fetched (they read the coordinator's
	// own disk).
	AllowFile bool
	// Allow lists the destinations outside the public internet that
	// fetches may reach anyway (--git-allow): CIDRs, addresses, host
	// names, or "*" for everything. Loopback, private, link-local and
	// unspecified addresses are refused otherwise, as for webhooks: a
	// submitter's URL makes the coordinator connect where it says.
	Allow []string
	// Timeout bounds one fetch (DefaultGitTimeout).
	Timeout time.Duration
	// Stall stops a fetch that has received nothing for this long
	// (DefaultGitStall): a server that accepts and never answers.
	Stall time.Duration
	// MaxBytes is how much one fetch may bring (DefaultGitMaxBytes); past
	// it the fetch is stopped while it streams.
	MaxBytes int64
}

const (
	// DefaultGitTimeout bounds one fetch: an unreachable host fails well
	// before it, a large engine repository fetches in seconds.
	DefaultGitTimeout = 2 * time.Minute
	// DefaultGitStall stops a fetch that receives nothing for this long:
	// a forge answers within seconds, even while it packs.
	DefaultGitStall = 30 * time.Second
	// DefaultGitMaxBytes bounds one fetch: engine repositories, history
	// included, are tens of MiB (nets are downloaded, not committed).
	DefaultGitMaxBytes = 512 << 20
)

// MaxDiffBytes caps a diff shown on a test page: past it the diff is cut
// and says so (a page is not the place to read a rewrite).
const MaxDiffBytes = 256 << 10

// gitMirrors serializes the fetches of one mirror.
type gitMirrors struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (m *gitMirrors) lock(dir string) func() {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[string]*sync.Mutex{}
	}
	l, ok := m.locks[dir]
	if !ok {
		l = &sync.Mutex{}
		m.locks[dir] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// git runs git with the environment a fetch on the coordinator's behalf
// needs: only the allowed protocols (no ext::), never a prompt, the
// operator's credentials, and stderr kept for the error.
func (s *Store) git(ctx context.Context, dir string, args ...string) (string, error) {
	return s.gitPinned(ctx, dir, nil, args...)
}

// gitPinned is git with the connection pinned to the address pin
// checked (nil: no network, or every destination allowed).
func (s *Store) gitPinned(ctx context.Context, dir string, pin *gitPin, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	protocols := "https:http:ssh:git"
	if s.cfg.Git.AllowFile {
		protocols += ":file"
	}
	cmd.Env = append(os.Environ(), "GIT_ALLOW_PROTOCOL="+protocols, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true",
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	ssh := "ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new"
	if s.cfg.Git.SSHKey != "" {
		ssh += " -o IdentitiesOnly=yes -i " + shellQuote(s.cfg.Git.SSHKey)
	}
	if s.cfg.Git.SSHKnownHosts != "" {
		ssh += " -o UserKnownHostsFile=" + shellQuote(s.cfg.Git.SSHKnownHosts)
	}
	var config []string
	if pin != nil {
		// A proxy would make the connection the check did not see: none
		// from the environment, git's config or ssh's.
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			switch strings.ToLower(k) {
			case "http_proxy", "https_proxy", "all_proxy", "git_proxy_command":
				return true
			}
			return false
		})
		config = append(config, "-c", "http.proxy=", "-c", "core.gitProxy=", "-c", "http.followRedirects=false")
		if pin.resolve != "" {
			config = append(config, "-c", "http.curloptResolve="+pin.resolve)
		}
		if pin.sshHost != "" {
			ssh += " -o ProxyCommand=none -o ProxyJump=none -o HostName=" + shellQuote(pin.sshHost) + " -o HostKeyAlias=" + shellQuote(pin.host)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND="+ssh)
	if s.cfg.Git.CredentialsFile != "" {
		config = append(config, "-c", "credential.helper=", "-c", "credential.helper=store --file="+shellQuote(s.cfg.Git.CredentialsFile))
	}
	if len(config) > 0 {
		cmd.Args = append(append([]string{"git"}, config...), args...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	stopWholeGit(cmd)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 600 {
			msg = msg[len(msg)-600:]
		}
		if ctx.Err() != nil {
			msg = "timed out; " + msg
		}
		return "", errors.New(msg)
	}
	return stdout.String(), nil
}

// credentialsHint says, after git's refusal of the coordinator's
// credentials, where they come from: the operator's settings, never the
// URL.
func credentialsHint(msg string) string {
	for _, m := range []string{"Authentication failed", "could not read Username", "could not read Password", "Permission denied (publickey"} {
		if strings.Contains(msg, m) {
			return " (the coordinator's credentials for it are the operator's: --git-credentials for https, --git-ssh-key for ssh)"
		}
	}
	return ""
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// GitCommit is what a fetched ref resolved to.
type GitCommit struct {
	Commit, Subject, Author string
}

// fetched is a ref resolved in its mirror; fresh: this fetch made the
// mirror (a refusal after it removes it).
type fetched struct {
	dir    string
	commit GitCommit
	fresh  bool
}

// fetchRef brings repository url's branches and tags into its mirror, on
// behalf of id, and resolves ref to a commit. The fetch is stopped while
// it streams once it brings more than GitConfig.MaxBytes (or what is left
// of id's disk quota), or when it receives nothing for GitConfig.Stall,
// and in any case after GitConfig.Timeout. A mirror made for a fetch that
// failed is removed, and so is any mirror a stopped fetch wrote into:
// nothing is left of a repository that could not be read.
func (s *Store) fetchRef(ctx context.Context, id identity.Identity, what, url, ref string) (fetched, error) {
	if err := gitsource.CheckURL(url, s.cfg.Git.AllowFile); err != nil {
		return fetched{}, apierr.Invalid("%s: %v", what, err)
	}
	if err := gitsource.CheckRef(ref); err != nil {
		return fetched{}, apierr.Invalid("%s: %v", what, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Git.Timeout)
	defer cancel()
	// Where the fetch connects is checked first (and the connection
	// pinned to the address checked): nothing is made for a repository
	// the coordinator may not reach.
	pin, fetchURL, err := s.pinDestination(ctx, url)
	if err != nil {
		return fetched{}, apierr.Invalid("%s: %v", what, err)
	}
	f := fetched{dir: s.mirrorDir(url)}
	defer s.gitLocks.lock(f.dir)()
	lim, err := s.fetchLimits(id)
	if err != nil {
		return fetched{}, err
	}
	if _, err := os.Stat(filepath.Join(f.dir, "HEAD")); err != nil {
		if err := s.initMirror(ctx, f.dir, id.Name); err != nil {
			return fetched{}, apierr.New(apierr.Internal, apierr.ReasonStore, "%s: git mirror: %v", what, err)
		}
		f.fresh = true
	}
	guarded, stopGuard := gitsource.Guard(ctx, f.dir, lim)
	// unpackLimit=1: git keeps what it receives as a pack, which
	// index-pack writes as it streams (the guard sees it grow); below the
	// limit, unpack-objects would hold each object whole in memory first.
	_, err = s.gitPinned(guarded, f.dir, pin, "-c", "fetch.unpackLimit=1", "-c", "transfer.unpackLimit=1", "fetch", "--quiet", "--no-tags", "--prune", "--force", "--", fetchURL,
		"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "+HEAD:refs/remotes/origin/HEAD")
	stopGuard()
	if stopped := gitsource.StopCause(guarded); err != nil || stopped != nil {
		if f.fresh || stopped != nil {
			s.dropMirror(f.dir, "fetch failed")
		}
		return fetched{}, s.fetchError(ctx, what, err, stopped)
	}
	lookup := ref
	if ref == "HEAD" {
		lookup = "refs/remotes/origin/HEAD"
	}
	out, err := s.git(ctx, f.dir, "rev-parse", "--verify", "--quiet", "--end-of-options", lookup+"^{commit}")
	if err != nil || strings.TrimSpace(out) == "" {
		if f.fresh {
			s.dropMirror(f.dir, "no such ref")
		}
		return fetched{}, apierr.New(apierr.NotFound, apierr.ReasonBadInput, "%s: the repository has no branch, tag or commit %s",
			what, apierr.Q(ref))
	}
	f.commit = GitCommit{Commit: strings.TrimSpace(out)}
	if out, err := s.git(ctx, f.dir, "log", "-1", "--format=%s%x00%an", f.commit.Commit); err == nil {
		f.commit.Subject, f.commit.Author, _ = strings.Cut(strings.TrimRight(out, "\n"), "\x00")
	}
	return f, nil
}

// initMirror makes an empty bare mirror at dir, owned by owner.
func (s *Store) initMirror(ctx context.Context, dir, owner string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := s.git(ctx, dir, "init", "--quiet", "--bare"); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("git init: %v", err)
	}
	if err := claimMirror(dir, owner); err != nil {
		os.RemoveAll(dir)
		return err
	}
	return nil
}

// fetchLimits are the bounds of one fetch of id's: GitConfig.MaxBytes, or
// what is left of id's disk quota when that is less.
func (s *Store) fetchLimits(id identity.Identity) (gitsource.FetchLimits, error) {
	lim := gitsource.FetchLimits{MaxBytes: s.cfg.Git.MaxBytes, Which: "--git-max-bytes", Stall: s.cfg.Git.Stall}
	if !s.diskLimited(id) {
		return lim, nil
	}
	mirrors := s.mirrorBytesOf(id.Name)
	s.mu.Lock()
	used := s.diskUsed(id, mirrors)
	s.mu.Unlock()
	limit := s.cfg.MaxDiskBytesPerIdentity
	if used >= limit {
		return lim, quota.CheckBytes(id, used, 1, limit, "engines and git mirrors on the coordinator's disk", quota.FlagDiskBytes)
	}
	if room := limit - used; room < lim.MaxBytes {
		lim.MaxBytes = room
		lim.Which = fmt.Sprintf("what is left of identity %s's %d bytes on the coordinator's disk, %s", apierr.Q(id.Name), limit, quota.FlagDiskBytes)
	}
	return lim, nil
}

// fetchError is the refusal of a fetch that failed (err) or that the
// guard stopped (stopped), naming the limit that stopped it.
func (s *Store) fetchError(ctx context.Context, what string, err, stopped error) error {
	var big *gitsource.ErrTooLarge
	var stalled *gitsource.ErrStalled
	switch {
	case errors.As(stopped, &big):
		return apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "%s: the repository is too large: the fetch %v; nothing of it is kept", what, big)
	case errors.As(stopped, &stalled):
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "%s: the repository does not answer: the fetch %v (--git-stall); nothing of it is kept", what, stalled)
	case ctx.Err() != nil:
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "%s: the fetch did not end within %v (--git-timeout); nothing of it is kept", what, s.cfg.Git.Timeout)
	}
	return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "%s: cannot fetch the repository: %v%s", what, err, credentialsHint(err.Error()))
}

// ImportEngines fetches every engine of a job that names a remote
// source=git:URL@REF (an artifact with a repository and no hash), stores
// its tree as a source artifact uploaded by id, and puts the hash, the
// commit and its subject and author in the engine: from then on it is
// an uploaded engine like any other, and workers fetch it from the
// coordinator, never from the repository. Called before the job is
// created; an engine that cannot be fetched refuses the job with nothing
// stored.
func (s *Store) ImportEngines(ctx context.Context, id identity.Identity, engines ...*arbiterv1.EngineSpec) error {
	for _, e := range engines {
		a := e.GetArtifact()
		if a == nil || a.GetSha256() != "" || a.GetRepository() == "" {
			continue
		}
		if err := mayUpload(id); err != nil {
			return err
		}
		if err := s.importEngine(ctx, id, e.GetName(), a); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) importEngine(ctx context.Context, id identity.Identity, name string, a *arbiterv1.EngineArtifact) error {
	url, ref := a.GetRepository(), a.GetBranch()
	if ref == "" {
		ref = "HEAD"
	}
	what := fmt.Sprintf("engine %s: source=git:%s@%s", apierr.Q(name), gitsource.Redact(url), ref)
	f, err := s.fetchRef(ctx, id, what, url, ref)
	if err != nil {
		return err
	}
	if err := s.storeTree(ctx, id, name, what, a, f); err != nil {
		if f.fresh {
			s.dropMirror(f.dir, "engine refused")
		}
		return err
	}
	return nil
}

// storeTree stores the tree of the commit f resolved as a source artifact
// of id's, and puts its hash in a.
func (s *Store) storeTree(ctx context.Context, id identity.Identity, name, what string, a *arbiterv1.EngineArtifact, f fetched) error {
	url, ref, c := a.GetRepository(), a.GetBranch(), f.commit
	if ref == "" {
		ref = "HEAD"
	}
	tmp, err := os.CreateTemp(filepath.Join(s.cfg.Dir, "partial"), "git-*.tmp")
	if err != nil {
		return apierr.New(apierr.Internal, apierr.ReasonStore, "%s: %v", what, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	actx, cancel := context.WithTimeout(ctx, DefaultGitTimeout)
	defer cancel()
	if _, err := s.git(actx, f.dir, "archive", "--format=tar.gz", "-o", tmp.Name(), c.Commit); err != nil {
		return apierr.New(apierr.Internal, apierr.ReasonStore, "%s: git archive: %v", what, err)
	}
	sha, size, err := hashAndSize(tmp.Name())
	if err != nil {
		return apierr.New(apierr.Internal, apierr.ReasonStore, "%s: %v", what, err)
	}
	if size > s.cfg.MaxBytes {
		return apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "%s: the tree at %s packs to %d bytes; this coordinator takes artifacts up to %d",
			what, c.Commit[:12], size, s.cfg.MaxBytes)
	}
	message := c.Subject
	if c.Author != "" {
		message += " (" + c.Author + ")"
	}
	meta := store.Artifact{SHA256: sha, Kind: int32(arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE), Size: size, Name: name + "@" + ref,
		Uploader: id.Name, Build: a.GetBuild(), Exe: a.GetExe(), Bench: a.GetBench(), Repository: url, Branch: ref,
		Commit: c.Commit, Message: truncate(message, maxTextBytes)}
	for _, f := range []struct{ name, v string }{{"name", meta.Name}, {"build", meta.Build}, {"exe", meta.Exe}, {"repository", meta.Repository}} {
		if err := checkText(f.name, f.v); err != nil {
			return err
		}
	}
	var mirrors int64
	if s.diskLimited(id) {
		mirrors = s.mirrorBytesOf(id.Name)
	}
	s.mu.Lock()
	_, stored := s.byHash[sha]
	if !stored {
		if err := s.checkQuota(id); err != nil {
			s.mu.Unlock()
			return err
		}
		if err := s.checkDisk(id, mirrors, size); err != nil {
			s.mu.Unlock()
			return err
		}
		s.pending[sha] = pendingUpload{meta: meta, touched: s.cfg.Now()}
		s.writing[sha] = true
	}
	s.mu.Unlock()
	if !stored {
		defer func() {
			s.mu.Lock()
			delete(s.writing, sha)
			s.mu.Unlock()
		}()
		if err := os.Rename(tmp.Name(), s.partial(sha)); err != nil {
			s.forget(sha)
			return apierr.New(apierr.Internal, apierr.ReasonStore, "%s: %v", what, err)
		}
		if _, _, err := s.finish(ctx, meta); err != nil {
			return err
		}
	}
	a.Sha256 = sha
	s.log.Info("engine fetched from git", zap.String("engine", name), zap.String("repository", gitsource.Redact(url)),
		zap.String("ref", ref), zap.String("commit", c.Commit), zap.String("sha256", sha), zap.Bool("stored_already", stored),
		zap.String("by", id.Name))
	return nil
}

func hashAndSize(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Diff is the diff from commit base to commit head of repository url, as
// git prints it with a summary of the files changed first, from the
// mirror the fetch made; cut at MaxDiffBytes (truncated says so). It
// fails when the mirror is gone (another coordinator fetched, or the cache
// was removed): the page then says the diff is not at hand.
func (s *Store) Diff(ctx context.Context, url, base, head string) (diff string, truncated bool, err error) {
	for _, c := range []string{base, head} {
		if len(c) < 7 || len(c) > 64 || strings.Trim(strings.ToLower(c), "0123456789abcdef") != "" {
			return "", false, fmt.Errorf("commit %q: not a commit id", c)
		}
	}
	dir := s.mirrorDir(url)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return "", false, errors.New("the repository's mirror is not on this coordinator")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "diff", "--no-color", "--no-ext-diff", "--stat=120", "--patch", base, head, "--")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", false, err
	}
	if err := cmd.Start(); err != nil {
		return "", false, err
	}
	buf, _ := io.ReadAll(io.LimitReader(out, MaxDiffBytes+1))
	truncated = len(buf) > MaxDiffBytes
	if truncated {
		buf = buf[:MaxDiffBytes]
		cmd.Process.Kill()
	}
	if err := cmd.Wait(); err != nil && !truncated {
		return "", false, fmt.Errorf("git diff: %v", err)
	}
	return string(buf), truncated, nil
}
