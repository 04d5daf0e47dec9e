package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/gittest"
)

// TestMain lets this test binary serve as the sandbox wrapper that runs
// the workers' uploaded engines, as arbiter's main does.
func TestMain(m *testing.M) {
	sandbox.RunIfWrapper()
	os.Exit(m.Run())
}

// TestBot runs the bot against a real cluster: a repository with a pull
// request's branch served on loopback, workers that build uploaded
// engines, and a stand-in for GitHub's comment API that receives the
// block.
func TestBot(t *testing.T) {
	for _, tool := range []string{"cc", "make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	t.Setenv(auth.EnvToken, "")
	src := "../../coordinator/e2e/testdata/tinyuci"
	code, err := os.ReadFile(filepath.Join(src, "tinyuci.c"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, _ := os.ReadFile(filepath.Join(src, "Makefile"))
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "engine")
	repo.Commit("Depth 2", map[string]string{"Makefile": string(makefile),
		"tinyuci.c": strings.Replace(string(code), "search(&pos, 3, -1000000", "search(&pos, 2, -1000000", 1)})
	repo.Branch("pr-42")
	repo.Commit("Search one ply deeper", map[string]string{"tinyuci.c": string(code)})
	url := gittest.Serve(t, root) + "/engine"

	var hc coordinator.HooksConfig
	hc.Allow, hc.Interval = []string{"127.0.0.1"}, 100*time.Millisecond
	hc.JobJSON = func(j *arbiterv1.Job) any { return jobreport.NewJobJSON(j) }
	cl, err := localcluster.Start(localcluster.Config{Workers: 2, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New, UploadedEngines: true,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "bot-admin", HTTP: "127.0.0.1:0", Hooks: hc,
			Git: artifacts.GitConfig{Allow: []string{"127.0.0.1"}}, API: httpapi.ForCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	tok, err := cl.Server.Coordinator().Credentials.Create(context.Background(), identity.Bootstrap, "prbot", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	comments := make(chan string, 4)
	github := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var c struct{ Body string }
		json.Unmarshal(b, &c)
		if r.Header.Get("Authorization") != "Bearer gh-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		comments <- c.Body
		w.WriteHeader(http.StatusCreated)
	}))
	defer github.Close()
	var out bytes.Buffer
	err = Run(context.Background(), Config{API: "http://" + cl.Server.HTTPAddr(), Token: tok, Repo: url, Branch: "pr-42", Base: "main",
		Build: "make EXE=engine", Book: "../../books/uho-200.epd", Nodes: 1000, Elo0: 0, Elo1: 100, Listen: "127.0.0.1:0",
		Post: github.URL + "/repos/me/engine/issues/42/comments", PostToken: "gh-token", Out: &out, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	select {
	case c := <-comments:
		if !regexp.MustCompile("^Arbiter SPRT of `pr-42` against `main`: (passed|failed)\n```\nElo   \\| .*\nSPRT  \\| nodes=1000 Threads=1\nLLR   \\| .*\nGames \\| N: \\d+ W: \\d+ L: \\d+ D: \\d+\nPenta \\| \\[.*\\]\n```\n$").MatchString(c) {
			t.Errorf("the comment:\n%s", c)
		}
		t.Logf("the comment posted:\n%s", c)
	default:
		t.Fatalf("no comment posted; the bot printed:\n%s", out.String())
	}
	// The bot removed its webhook.
	hooks, _ := cl.Server.Coordinator().Hooks.List(identity.Identity{Name: "admin", Role: identity.Admin})
	if len(hooks) != 0 {
		t.Errorf("the bot's webhook is left: %+v", hooks)
	}
}
