package protocol

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// speaksProtocol finds, in a line of Go code, what only this package may
// write: a UCI or xboard handshake (waiting for "uciok", sending
// "protover") and an option-line parser (a literal that begins "option
// name", or "option" compared or passed as a token). "setoption name" (a
// command, not a parse), error messages ("option %q: ...") and struct
// tags do not match.
var speaksProtocol = regexp.MustCompile(`"uciok"|protover|"option name|(==|!=|case|\(|,)\s*"option"`)

// mayAnswer are the folders whose code speaks the protocol's other side:
// the embedded engine answers uci with uciok, the test engines too.
var mayAnswer = []string{"engine/uci", "testing/testengines"}

// TestOneProtocolSpeaker fails when a UCI or xboard handshake, or a
// parser of option lines, appears in non-test Go code outside this
// package (and the engines that answer it): the tree speaks to engines
// in one place.
func TestOneProtocolSpeaker(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the tree's root %s: %v", root, err)
	}
	offences := protocolSpeakers(t, root)
	if len(offences) > 0 {
		t.Errorf("the engine protocol is spoken outside enginehost/protocol (move it there):\n%s", strings.Join(offences, "\n"))
	}
}

// The control: the check finds a handshake and an option parser planted
// in a copy of a real file outside the package, and passes over the
// same file without them.
func TestOneProtocolSpeakerFindsAPlantedHandshake(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("enginehost/protocol/uci.go", "package protocol\nconst a = \"uciok\"\n")
	write("engine/uci/uci.go", "package uci\nconst a = \"uciok\"\n")
	write("match/clean.go", "package match\nimport \"fmt\"\nconst cmd = \"setoption name Hash value 1\"\n// waits for \"uciok\"\nvar e = fmt.Errorf(\"option %q: bad\", \"x\")\ntype T struct{ O string `json:\"option\"` }\n")
	write("match/clean_test.go", "package match\nconst a = \"uciok\"\n")
	if got := protocolSpeakers(t, root); len(got) != 0 {
		t.Fatalf("clean tree flagged: %v", got)
	}
	write("verify/handshake.go", "package verify\nfunc f(s string) bool { return s == \"uciok\" }\n")
	write("spsa/options.go", "package spsa\nimport \"strings\"\nfunc g(s string) bool { return strings.HasPrefix(s, \"option name \") }\n")
	write("worker/xb.go", "package worker\nconst hello = \"xboard\\nprotover 2\"\n")
	write("match/tok.go", "package match\nfunc h(f []string) bool {\n\treturn f[0] == \"option\"\n}\n")
	got := strings.Join(protocolSpeakers(t, root), "\n")
	for _, want := range []string{"verify/handshake.go:2", "spsa/options.go:3", "worker/xb.go:2", "match/tok.go:3"} {
		if !strings.Contains(got, want) {
			t.Errorf("planted %s not found in:\n%s", want, got)
		}
	}
}

// protocolSpeakers lists file:line of every line that speaks the
// protocol outside the allowed folders.
func protocolSpeakers(t *testing.T, root string) []string {
	return codeLines(t, root, speaksProtocol, allowedSpeaker)
}

// startsProcess finds a process started by hand: os/exec, os.StartProcess,
// syscall.ForkExec.
var startsProcess = regexp.MustCompile(`exec\.Command(Context)?\(|exec\.Cmd\{|os\.StartProcess\(|syscall\.ForkExec\(`)

// processStarters is the one table of the code that may start a process
// itself, and why none of it is an engine outside engineproc's road.
var processStarters = map[string]string{
	"enginehost/engineproc/":        "every engine process starts here",
	"enginehost/sandbox/":           "the sandbox wrapper (this binary) and its probe: engineproc's road for uploaded engines",
	"worker/artifacts_build.go":     "a source build (sh -c make in the sandbox) is not an engine",
	"coordinator/artifacts/":        "git, to import an engine's source tree",
	"client/artifactclient/pack.go": "git, to pack a local repository",
	"testing/":                      "test servers (PostgreSQL, git)",
	"cmd/arbiter/upprom.go":         "Prometheus, the monitoring server arbiter up --prometheus runs beside the farm (started with engineproc.ChildAttr: it dies with up)",
	"scripts/":                      "measurement tools outside the binary: relayfloor compares process readers, benchperft and datagencheck time or check Stockfish itself",
}

func allowedStarter(rel string) bool {
	for prefix := range processStarters {
		if rel == prefix || strings.HasSuffix(prefix, "/") && strings.HasPrefix(rel, prefix) {
			return true
		}
	}
	return false
}

// TestEveryEngineStartsInEngineproc fails when non-test code outside the
// table processStarters starts a process itself: an engine starts in
// enginehost/engineproc (through the sandbox wrapper when uploaded).
func TestEveryEngineStartsInEngineproc(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if got := codeLines(t, root, startsProcess, allowedStarter); len(got) > 0 {
		t.Errorf("a process started outside enginehost/engineproc (start engines there; any other program goes in processStarters with why):\n%s", strings.Join(got, "\n"))
	}
	// The control: a planted exec in a worker file is found.
	planted := t.TempDir()
	os.MkdirAll(filepath.Join(planted, "worker"), 0o755)
	os.WriteFile(filepath.Join(planted, "worker", "bench.go"), []byte("package worker\nimport \"os/exec\"\nvar c = exec.Command(\"./engine\", \"bench\")\n"), 0o644)
	os.WriteFile(filepath.Join(planted, "worker", "artifacts_build.go"), []byte("package worker\nimport \"os/exec\"\nvar c = exec.Command(\"sh\")\n"), 0o644)
	if got := codeLines(t, planted, startsProcess, allowedStarter); len(got) != 1 || !strings.HasPrefix(got[0], "worker/bench.go:3") {
		t.Errorf("planted exec: %q", got)
	}
}

// codeLines lists file:line of every line of non-test Go code under root
// that matches pattern, in files allowed does not admit.
func codeLines(t *testing.T, root string, pattern *regexp.Regexp, allowed func(rel string) bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || allowed(rel) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			code := strings.TrimSpace(line)
			if !strings.HasPrefix(code, "//") && pattern.MatchString(code) {
				out = append(out, rel+":"+itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func allowedSpeaker(rel string) bool {
	if strings.HasPrefix(rel, "enginehost/protocol/") {
		return true
	}
	for _, dir := range mayAnswer {
		if strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
