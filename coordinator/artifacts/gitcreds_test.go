package artifacts

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/gittest"
)

// syncBuffer is a log sink a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Sync() error { return nil }

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestGitCredentials fetches a repository served over HTTP with basic
// authentication (git http-backend behind a server that answers 401
// without the user's password): without --git-credentials the fetch is
// refused with an error saying so, and nothing is stored; with a
// credential-store file it is fetched. The password is nowhere the
// coordinator writes: not in an error, the stored artifact, the logs,
// the store's files or the mirror.
func TestGitCredentials(t *testing.T) {
	const password = "hunter2-Zq9x"
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "private")
	commit := repo.Commit("Private engine", map[string]string{"Makefile": "all:\n\tcc -o engine engine.c\n", "engine.c": "int secret_depth = 4;\n"})
	base, refused := gittest.ServeWithBasicAuth(t, root, "ada", password)
	url := base + "/private"

	open := func(git GitConfig) (*Store, *syncBuffer, string) {
		dir := t.TempDir()
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		logs := &syncBuffer{}
		log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), logs, zapcore.DebugLevel))
		git.Allow = []string{"127.0.0.1"}
		s, err := New(context.Background(), Config{Store: st, Dir: filepath.Join(dir, "artifacts"), MaxBytes: 1 << 20, Git: git, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return s, logs, dir
	}
	// leaks lists the files under dir that hold the password.
	leaks := func(dir string) []string {
		var out []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(password)) {
					out = append(out, p)
				}
			}
			return nil
		})
		return out
	}
	ctx := context.Background()

	// No credentials: refused, saying why, nothing stored.
	bare, bareLogs, bareDir := open(GitConfig{})
	e := remoteEngine("dev", url, "main")
	err := bare.ImportEngines(ctx, alice, e)
	ae, _ := apierr.As(err)
	if err == nil || ae == nil || ae.Code != apierr.FailedPrecondition || !strings.Contains(err.Error(), "cannot fetch the repository") ||
		!strings.Contains(err.Error(), "Authentication failed") || !strings.Contains(err.Error(), "--git-credentials") {
		t.Errorf("fetch without credentials: %v", err)
	}
	if refused() == 0 {
		t.Error("the server refused no request: the fetch did not reach it")
	}
	if e.GetArtifact().GetSha256() != "" {
		t.Error("a hash was set")
	}
	if list, _ := bare.List(0, 0); len(list) != 0 {
		t.Errorf("stored %d artifacts", len(list))
	}

	// A credential-store file: fetched.
	creds := filepath.Join(t.TempDir(), "git-credentials")
	if err := os.WriteFile(creds, []byte(strings.Replace(base, "http://", "http://ada:"+password+"@", 1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withCreds, logs, dir := open(GitConfig{CredentialsFile: creds})
	e = remoteEngine("dev", url, "main")
	if err := withCreds.ImportEngines(ctx, alice, e); err != nil {
		t.Fatalf("fetch with credentials: %v", err)
	}
	a, err := withCreds.Resolve(e.GetArtifact().GetSha256())
	if err != nil || a.Commit != commit || a.Repository != url {
		t.Fatalf("artifact: %v %+v", err, a)
	}
	if strings.Contains(a.Repository+a.Name+a.Message+a.Branch, password) {
		t.Errorf("the password is in the artifact: %+v", a)
	}
	// A wrong password in the file: refused, the password not shown.
	wrong := filepath.Join(t.TempDir(), "git-credentials")
	os.WriteFile(wrong, []byte(strings.Replace(base, "http://", "http://ada:not-"+password+"@", 1)+"\n"), 0o600)
	bad, badLogs, badDir := open(GitConfig{CredentialsFile: wrong})
	err = bad.ImportEngines(ctx, alice, remoteEngine("dev", url, "main"))
	if err == nil || !strings.Contains(err.Error(), "Authentication failed") || strings.Contains(err.Error(), password) {
		t.Errorf("fetch with a wrong password: %v", err)
	}

	for what, text := range map[string]string{"logs": logs.String(), "logs without credentials": bareLogs.String(), "logs of a wrong password": badLogs.String()} {
		if strings.Contains(text, password) {
			t.Errorf("the password is in the %s:\n%s", what, text)
		}
	}
	if !strings.Contains(logs.String(), "engine fetched from git") {
		t.Errorf("no fetch logged:\n%s", logs.String())
	}
	for _, d := range []string{dir, bareDir, badDir} {
		if files := leaks(d); len(files) > 0 {
			t.Errorf("the password is in the coordinator's files: %v", files)
		}
	}
}
