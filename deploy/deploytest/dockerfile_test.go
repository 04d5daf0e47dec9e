package deploytest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// parseDockerfile parses deploy/Dockerfile with BuildKit's frontend (what
// `docker build` runs) and fails the test on any build-check warning.
func parseDockerfile(t *testing.T) (stages []instructions.Stage, metaArgs map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := parser.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile parser warning: %s", w.Short)
	}
	lint := linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		line := 0
		if len(loc) > 0 {
			line = loc[0].Start.Line
		}
		t.Errorf("Dockerfile:%d: build check %s: %s", line, rule, msg)
	}})
	stages, args, err := instructions.Parse(res.AST, lint)
	if err != nil {
		t.Fatalf("Dockerfile instructions: %v", err)
	}
	metaArgs = map[string]string{}
	for _, a := range args {
		for _, kv := range a.Args {
			if kv.Value != nil {
				metaArgs[kv.Key] = *kv.Value
			}
		}
	}
	return stages, metaArgs
}

// expandArgs substitutes ${NAME} and $NAME with the global ARG defaults.
func expandArgs(s string, args map[string]string) string {
	for k, v := range args {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
		s = strings.ReplaceAll(s, "$"+k, v)
	}
	return s
}

func TestDockerfile(t *testing.T) {
	stages, args := parseDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stage(s); want a multi-stage build", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	t.Run("build stage", func(t *testing.T) {
		base := expandArgs(build.BaseName, args)
		if !regexp.MustCompile(`^golang:1\.26(\.\d+)?(-[a-z0-9]+)?$`).MatchString(base) {
			t.Errorf("build stage FROM %q (%s): want golang:1.26", base, build.BaseName)
		}
		if build.Name == "" {
			t.Errorf("build stage has no name (FROM ... AS build)")
		}
		env := map[string]string{}
		var (
			copiedModFiles, copiedAll, downloaded, built bool
		)
		for _, c := range build.Commands {
			switch c := c.(type) {
			case *instructions.EnvCommand:
				for _, kv := range c.Env {
					env[kv.Key] = kv.Value
				}
			case *instructions.CopyCommand:
				src := strings.Join(c.SourcePaths, " ")
				switch {
				case src == "go.mod go.sum":
					copiedModFiles = true
				case src == ".":
					if !downloaded {
						t.Errorf("COPY . . comes before `go mod download`: every source change would re-download modules")
					}
					copiedAll = true
				}
			case *instructions.RunCommand:
				line := strings.Join(c.CmdLine, " ")
				// Mount flags are parsed on expansion (as the builder does).
				if err := c.Expand(func(w string) (string, error) { return expandArgs(w, args), nil }); err != nil {
					t.Fatalf("RUN %q: %v", line, err)
				}
				caches := map[string]bool{}
				for _, m := range instructions.GetMounts(c) {
					if m.Type == instructions.MountTypeCache {
						caches[m.Target] = true
					}
				}
				if strings.Contains(line, "go mod download") {
					if !copiedModFiles || copiedAll {
						t.Errorf("`go mod download` must run after COPY go.mod go.sum and before COPY . .")
					}
					if !caches["/go/pkg/mod"] {
						t.Errorf("`go mod download` without a cache mount on /go/pkg/mod")
					}
					downloaded = true
				}
				if strings.Contains(line, "go build") {
					built = true
					checkGoBuild(t, line, env, caches)
				}
			}
		}
		if !copiedModFiles || !downloaded || !built {
			t.Errorf("build stage: COPY go.mod go.sum %v, go mod download %v, go build %v: want all", copiedModFiles, downloaded, built)
		}
	})

	t.Run("final stage", func(t *testing.T) {
		base := expandArgs(final.BaseName, args)
		distroless := strings.HasPrefix(base, "gcr.io/distroless/static")
		if !distroless && base != "scratch" {
			t.Errorf("final stage FROM %q: want gcr.io/distroless/static* or scratch", base)
		}
		var (
			user       string
			entrypoint *instructions.EntrypointCommand
			binary     bool
			caCerts    = distroless // distroless/static ships /etc/ssl/certs
		)
		for _, c := range final.Commands {
			switch c := c.(type) {
			case *instructions.UserCommand:
				user = c.User
			case *instructions.EntrypointCommand:
				entrypoint = c
			case *instructions.RunCommand:
				// Neither distroless/static nor scratch has a shell.
				t.Errorf("final stage RUN %q: the final image has no shell", strings.Join(c.CmdLine, " "))
			case *instructions.CopyCommand:
				if c.From == build.Name && c.DestPath == "/arbiter" {
					binary = true
				}
				if strings.Contains(strings.Join(c.SourcePaths, " "), "ca-certificates") {
					caCerts = true
				}
			}
		}
		if !binary {
			t.Errorf("final stage does not COPY --from=%s the binary to /arbiter", build.Name)
		}
		if !caCerts {
			t.Errorf("final stage has no CA certificates (TLS to a coordinator would fail)")
		}
		checkNonRootUser(t, user)
		if entrypoint == nil {
			t.Fatalf("final stage has no ENTRYPOINT")
		}
		if entrypoint.PrependShell || len(entrypoint.CmdLine) != 1 || entrypoint.CmdLine[0] != "/arbiter" {
			t.Errorf("ENTRYPOINT %q (shell form %v): want exec form [\"/arbiter\"]", entrypoint.CmdLine, entrypoint.PrependShell)
		}
	})
}

// checkGoBuild checks the go build line: static (CGO off), -trimpath,
// stripped (-s -w), building ./cmd/arbiter into the file the final stage
// copies.
func checkGoBuild(t *testing.T, line string, env map[string]string, caches map[string]bool) {
	t.Helper()
	if env["CGO_ENABLED"] != "0" && !strings.Contains(line, "CGO_ENABLED=0") {
		t.Errorf("go build without CGO_ENABLED=0: the binary would not be static")
	}
	if !strings.Contains(line, "-trimpath") {
		t.Errorf("go build without -trimpath")
	}
	m := regexp.MustCompile(`-ldflags[= ]"([^"]*)"`).FindStringSubmatch(line)
	if m == nil {
		t.Errorf("go build without -ldflags \"...\": %s", line)
	} else {
		fl := strings.Fields(m[1])
		if !contains(fl, "-s") || !contains(fl, "-w") {
			t.Errorf("-ldflags %q: want -s -w (stripped)", m[1])
		}
	}
	if !strings.Contains(line, "./cmd/arbiter") {
		t.Errorf("go build does not build ./cmd/arbiter")
	}
	if !caches["/go/pkg/mod"] || !caches["/root/.cache/go-build"] {
		t.Errorf("go build without cache mounts on /go/pkg/mod and /root/.cache/go-build: %v", caches)
	}
}

func checkNonRootUser(t *testing.T, user string) {
	t.Helper()
	if user == "" {
		t.Errorf("final stage has no USER: it would run as root")
		return
	}
	uid, gid, _ := strings.Cut(user, ":")
	for what, id := range map[string]string{"uid": uid, "gid": gid} {
		if id == "" && what == "gid" {
			continue
		}
		n, err := strconv.Atoi(id)
		if err != nil {
			t.Errorf("USER %s: %s %q is not numeric (Kubernetes runAsNonRoot needs a numeric uid)", user, what, id)
		} else if n == 0 {
			t.Errorf("USER %s: %s 0 is root", user, what)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestDockerignore applies .dockerignore the way the Docker CLI does and
// checks what the build context holds: every file the build needs, and
// none of the repository's history, local binaries or the deploy module.
// Then it proves the filtered context is enough: `go list -deps` of
// ./cmd/arbiter in a copy of it finds every package.
func TestDockerignore(t *testing.T) {
	root := repoRoot(t)
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns, err := ignorefile.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	excluded := func(rel string) bool {
		ok, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
		if err != nil {
			t.Fatalf(".dockerignore on %s: %v", rel, err)
		}
		return ok
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/arbiter/main.go", "books/uho-200.epd"} {
		if excluded(p) {
			t.Errorf(".dockerignore excludes %s, which the build needs", p)
		}
	}
	for _, p := range []string{".git/HEAD", "bin/arbiter", "arbiter", "deploy/compose.yaml", "engine/engine.test", "cpu.prof"} {
		if !excluded(p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}

	if testing.Short() {
		t.Skip("-short: skipping go list on the filtered context")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	ctx := t.TempDir()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		if excluded(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(ctx, rel), 0o755)
		}
		// Every file, as COPY . . takes them: packages embed more than Go
		// sources (the web pages' templates and style sheet).
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(ctx, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", "./cmd/arbiter")
	cmd.Dir = ctx
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("go list -deps ./cmd/arbiter in the .dockerignore-filtered context: %v\n%s", err, out)
	}
}
