// Package gittest makes git repositories and serves them on loopback for
// tests: a real git (the binary) behind a real HTTP server
// (git http-backend through net/http/cgi), as a forge serves them.
package gittest

import (
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Git runs git in dir with a fixed author and date (so commits are
// reproducible) and returns its trimmed output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada Tester", "GIT_AUTHOR_EMAIL=ada@example.org",
		"GIT_COMMITTER_NAME=Ada Tester", "GIT_COMMITTER_EMAIL=ada@example.org",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Repo is a work tree whose commits a test makes.
type Repo struct {
	t   testing.TB
	Dir string
}

// NewRepo makes an empty repository named name under root (its branch
// main), ready to be served by Serve(root).
func NewRepo(t testing.TB, root, name string) *Repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "--quiet", "--initial-branch=main")
	return &Repo{t: t, Dir: dir}
}

// Commit writes files (name → content; "" removes it) and commits them
// with subject on the current branch; it returns the commit id.
func (r *Repo) Commit(subject string, files map[string]string) string {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.Dir, name)
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	Git(r.t, r.Dir, "add", "-A")
	Git(r.t, r.Dir, "commit", "--quiet", "--allow-empty", "-m", subject)
	return Git(r.t, r.Dir, "rev-parse", "HEAD")
}

// CommitRandom commits a file of size random (incompressible) bytes with
// subject: a repository that large to fetch. The repository stores it
// uncompressed (core.compression 0) and packed, as a forge keeps what it
// serves, so that a fetch streams the stored pack from its first second
// (a loose object is read whole and packed anew on each fetch first: on
// a loaded machine that took more than a --git-stall of 5 s before the
// first byte of the pack).
func (r *Repo) CommitRandom(subject, name string, size int64) string {
	r.t.Helper()
	Git(r.t, r.Dir, "config", "core.compression", "0")
	f, err := os.Create(filepath.Join(r.Dir, name))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		r.t.Fatal(err)
	}
	Git(r.t, r.Dir, "add", "-A")
	Git(r.t, r.Dir, "commit", "--quiet", "-m", subject)
	os.Remove(filepath.Join(r.Dir, name)) // the object keeps it; the work tree's copy is not served
	Git(r.t, r.Dir, "repack", "-a", "-d", "-q")
	return Git(r.t, r.Dir, "rev-parse", "HEAD")
}

// Branch makes branch name at the current commit and checks it out.
func (r *Repo) Branch(name string) { r.t.Helper(); Git(r.t, r.Dir, "checkout", "--quiet", "-b", name) }

// Checkout checks out an existing branch.
func (r *Repo) Checkout(name string) { r.t.Helper(); Git(r.t, r.Dir, "checkout", "--quiet", name) }

// Serve serves the repositories under root over smart HTTP at the
// returned base URL (base + "/" + name is a repository's URL), until the
// test ends.
func Serve(t testing.TB, root string) string {
	t.Helper()
	url, _ := ServeStoppable(t, root)
	return url
}

// ServeStoppable is Serve with a function that stops the server before
// the test ends (a repository that goes away).
func ServeStoppable(t testing.TB, root string) (string, func()) {
	t.Helper()
	srv := httptest.NewServer(http.StripPrefix("/git", httpBackend(t, root)))
	t.Cleanup(srv.Close)
	return srv.URL + "/git", srv.Close
}

// ServeCounting is Serve at about bytesPerSecond (a fast link, not
// loopback's gigabytes a second, so that a fetch has a while to be
// stopped in) with a count of the bytes the server has sent (response
// bodies), to tell how much of a repository a fetch took.
func ServeCounting(t testing.TB, root string, bytesPerSecond int64) (url string, sent func() int64) {
	t.Helper()
	h := http.StripPrefix("/git", httpBackend(t, root))
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(countingWriter{ResponseWriter: w, n: &n, rate: bytesPerSecond}, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/git", n.Load
}

type countingWriter struct {
	http.ResponseWriter
	n    *atomic.Int64
	rate int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	total := int64(0)
	for len(b) > 0 {
		chunk := b[:min(len(b), 64<<10)]
		n, err := c.ResponseWriter.Write(chunk)
		c.n.Add(int64(n))
		total += int64(n)
		if err != nil {
			return int(total), err
		}
		b = b[n:]
		time.Sleep(time.Duration(int64(n) * int64(time.Second) / c.rate))
	}
	return int(total), nil
}

func (c countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ServeSilent is a server that accepts connections and never answers (a
// git server that hangs); its base URL is returned. The connections
// stay open until the test ends.
func ServeSilent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return "http://" + l.Addr().String() + "/git"
}

// ServeWithBasicAuth is Serve behind HTTP basic authentication: a
// request without user and password (or with others) gets 401 with a
// WWW-Authenticate challenge, as a forge answers for a private
// repository. refused counts the requests it refused.
func ServeWithBasicAuth(t testing.TB, root, user, password string) (url string, refused func() int) {
	t.Helper()
	h := http.StripPrefix("/git", httpBackend(t, root))
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != password {
			mu.Lock()
			n++
			mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Basic realm="engines"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/git", func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// httpBackend is git's smart HTTP server (git http-backend, as CGI) for
// the repositories under root; it skips t without git or the backend.
func httpBackend(t testing.TB, root string) *cgi.Handler {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("no git")
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend")
	}
	return &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"}}
}
