package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// TestAPIDocEngineBodies posts every body of docs/api.md's "Engines in a
// test's body" to a real coordinator's JSON API and wants each accepted
// (201), after putting in what the reader would: the SHA-256 that
// `arbiter engine upload` and `arbiter net upload` print, and a local
// repository (file://) for the git one. The control: the body a newcomer
// guessed ("builtin": true) is refused naming the field.
func TestAPIDocEngineBodies(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	t.Setenv(envAPI, "")
	bodies := apiDocBodies(t, "### Engines in a test's body")
	if len(bodies) != 5 {
		t.Fatalf("%d bodies in the section, want 5 (builtin, command, upload, net, git)", len(bodies))
	}

	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: the git source's body cannot be fetched")
	}
	repo := filepath.Join(t.TempDir(), "engine")
	for _, args := range [][]string{{"init", "-q", "-b", "pr-42", repo}, {"-C", repo, "add", "Makefile"},
		{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "engine"}} {
		if args[0] == "-C" && args[2] == "add" {
			if err := os.WriteFile(filepath.Join(repo, "Makefile"), []byte("engine:\n\tcp /bin/true engine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}

	cl, err := localcluster.Start(localcluster.Config{Workers: 0, HashMB: 1, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "doc-admin", HTTP: "127.0.0.1:0", API: httpapi.ForCoordinator,
			Git: artifacts.GitConfig{AllowFile: true, Timeout: time.Minute, Stall: 30 * time.Second, MaxBytes: 1 << 26}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	out, stderr, err := runArbiter(t, "", append([]string{"engine", "upload", os.Args[0], "--name", "doc-engine"}, client...)...)
	if err != nil {
		t.Fatalf("engine upload: %v\n%s", err, stderr)
	}
	engineSHA := between(out, "sha256:     ", "\n")
	net := filepath.Join(t.TempDir(), "doc.nnue")
	if err := os.WriteFile(net, []byte(strings.Repeat("net!", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err = runArbiter(t, "", append([]string{"net", "upload", net, "--json"}, client...)...)
	if err != nil {
		t.Fatalf("net upload: %v\n%s", err, stderr)
	}
	netSHA := between(out, `"sha256":"`, `"`)
	if len(engineSHA) != 64 || len(netSHA) != 64 {
		t.Fatalf("uploads printed no SHA-256: %q %q", engineSHA, netSHA)
	}
	fill := strings.NewReplacer("SHA256_OF_THE_UPLOAD", engineSHA, "SHA256_OF_THE_NET", netSHA,
		"https://github.com/me/engine.git", "file://"+repo)

	post := func(body string) (int, string) { return postAPI(t, cl, "/tests", body) }
	for n, m := range bodies {
		body := fill.Replace(m[1])
		if code, answer := post(body); code != http.StatusCreated {
			t.Errorf("body %d of the section: %d %s\n%s", n+1, code, answer, body)
		}
	}
	guessed := strings.Replace(bodies[0][1], `"protocol": "builtin"`, `"builtin": true`, 1)
	if code, answer := post(guessed); code != http.StatusBadRequest || !strings.Contains(answer, `builtin`) {
		t.Errorf(`"builtin": true: %d %s; want 400 naming the field`, code, answer)
	}
}

// TestAPIDocSubmitJobBody posts the body of docs/api.md's "One route for
// every kind" to a real coordinator's POST /api/v1/jobs and wants the job
// it names (201, its kind, its detail object). The control: the same body
// with a kind nobody registered is refused (400) naming the kind and the
// kinds there are.
func TestAPIDocSubmitJobBody(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	bodies := apiDocBodies(t, "### One route for every kind")
	if len(bodies) != 1 {
		t.Fatal("no body in the section")
	}
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, HashMB: 1, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "doc-admin", HTTP: "127.0.0.1:0", API: httpapi.ForCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	post := func(body string) (int, string) { return postAPI(t, cl, "/jobs", body) }
	body := bodies[0][1]
	if code, answer := post(body); code != http.StatusCreated || !strings.Contains(answer, `"kind":"datagen"`) || !strings.Contains(answer, `"positions_wanted":100000`) {
		t.Errorf("the section's body: %d %s\n%s", code, answer, body)
	}
	unknown := strings.Replace(body, `"kind": "datagen"`, `"kind": "datagenx"`, 1)
	if code, answer := post(unknown); code != http.StatusBadRequest || !strings.Contains(answer, `datagenx`) || !strings.Contains(answer, `(datagen, `) || !strings.Contains(answer, `, perft, `) {
		t.Errorf("an unknown kind: %d %s; want 400 naming it and the kinds", code, answer)
	}
}

// postAPI posts body to the API route path of cl with its admin token and
// returns the status and the answer.
func postAPI(t *testing.T, cl *localcluster.Cluster, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+cl.Server.HTTPAddr()+httpapi.Prefix+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+cl.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// apiDocBodies are the JSON bodies (```json blocks) of docs/api.md's
// section under heading, each as FindAllStringSubmatch gives it.
func apiDocBodies(t *testing.T, heading string) [][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	i := strings.Index(section, heading)
	if i < 0 {
		t.Fatalf("docs/api.md has no %q section", heading)
	}
	section = section[i:]
	if j := strings.Index(section[4:], "\n#"); j >= 0 {
		section = section[:j+4]
	}
	return regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1)
}
