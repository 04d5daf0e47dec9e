package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
)

// repoRoot is the repository, seen from this package's directory.
const repoRoot = "../.."

// allCommands is every command of the command table, depth first.
func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() || sub.Name() == "help" {
			out = append(out, allCommands(sub)...)
		}
	}
	return out
}

// helpText is what `arbiter ... --help` prints for c.
func helpText(t *testing.T, c *cobra.Command) string {
	t.Helper()
	args := append(strings.Fields(c.CommandPath())[1:], "--help")
	out, _, err := runArbiter(t, "", args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out
}

var (
	flagRE = regexp.MustCompile(`(^|[\s(\[|"'` + "`" + `,])--([a-z][a-z0-9-]*)`)
	// A command named in the text: "arbiter submit perft", "arbiter worker".
	commandRE = regexp.MustCompile(`\barbiter((?: [a-z][a-z0-9-]*)+)`)
	pathRE    = regexp.MustCompile(`[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+`)
	fileExtRE = regexp.MustCompile(`\.(md|json|pgn|epd|sh|ya?ml|go|csv|txt|zip)$`)
)

// findCommand resolves "submit perft --depth" to the deepest command it
// names, or nil.
func findCommand(root *cobra.Command, words []string) *cobra.Command {
	c, _, err := root.Find(words)
	if err != nil || c == root {
		return nil
	}
	return c
}

// hasFlag reports whether c takes --name (its own, inherited or help),
// not counting deprecated aliases: documentation shows the current name.
func hasFlag(c *cobra.Command, name string) bool {
	f := c.Flags().Lookup(name)
	if f == nil {
		f = c.InheritedFlags().Lookup(name)
	}
	return name == "help" || f != nil && f.Deprecated == ""
}

// TestHelpIsTrue walks every command's --help: every flag it mentions
// exists on that command (or on one the text names, as in "as arbiter
// submit perft --wait"), and every path into this repository
// it mentions (one whose first directory is a top-level directory here,
// e.g. books/8moves-200.pgn or docs/match.md) exists.
func TestHelpIsTrue(t *testing.T) {
	root := newRootCommand()
	root.InitDefaultVersionFlag()
	top := map[string]bool{}
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	walked := 0
	for _, c := range allCommands(root) {
		help := helpText(t, c)
		walked++
		// A flag may belong to this command, to the root (--version)
		// or to a command the text names ("see arbiter submit perft
		// --wait", "arbiter certs worker ... --key").
		owners := []*cobra.Command{c, root}
		for _, m := range commandRE.FindAllStringSubmatch(help, -1) {
			words := strings.Fields(m[1])
			for n := len(words); n > 0; n-- {
				if named := findCommand(root, words[:n]); named != nil {
					owners = append(owners, named)
					break
				}
			}
		}
		for _, line := range strings.Split(help, "\n") {
			for _, m := range flagRE.FindAllStringSubmatch(line, -1) {
				name, ok := m[2], false
				for _, o := range owners {
					ok = ok || hasFlag(o, name)
				}
				if !ok {
					t.Errorf("%s --help mentions --%s, which neither it nor a command it names takes:\n  %s", c.CommandPath(), name, strings.TrimSpace(line))
				}
			}
			for _, p := range pathRE.FindAllString(line, -1) {
				p = strings.TrimRight(p, ".,")
				if !top[strings.SplitN(p, "/", 2)[0]] {
					continue // not a path into the repository (./sf, host:7700/..., a placeholder)
				}
				if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
					t.Errorf("%s --help mentions %s, which is not in the repository:\n  %s", c.CommandPath(), p, strings.TrimSpace(line))
				}
			}
		}
	}
	if walked < 20 {
		t.Errorf("walked %d commands; the command table has more", walked)
	}
}

// The walk sees what it is meant to see: a flag the command lacks and a
// repository path that does not exist are both reported.
func TestHelpCheckSeesMistakes(t *testing.T) {
	root := newRootCommand()
	perft := findCommand(root, []string{"perft"})
	if hasFlag(perft, "no-such-flag") || !hasFlag(perft, "depth") || !hasFlag(perft, "help") {
		t.Error("hasFlag")
	}
	line := "  arbiter perft --depth 8 --coordinator HOST      run it on a cluster (as arbiter submit perft --wait)"
	var names []string
	for _, m := range flagRE.FindAllStringSubmatchIndex(line, -1) {
		names = append(names, line[m[4]:m[5]])
	}
	if strings.Join(names, ",") != "depth,coordinator,wait" {
		t.Errorf("flags found: %v", names)
	}
	if got := pathRE.FindAllString("play books/arbiter-8moves-200.pgn, see docs/match.md.", -1); len(got) != 2 || got[0] != "books/arbiter-8moves-200.pgn" {
		t.Errorf("paths found: %v", got)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "books/arbiter-8moves-200.pgn")); err == nil {
		t.Error("the example of a wrong path exists")
	}
}

// TestReadmeIsTrue holds README.md to what the binary and the repository
// are: every path into the repository it mentions exists, every flag on a
// line that runs arbiter (continuation lines included) exists on a
// command the line names, and every port it mentions is the default
// coordinator port or one the shipped deployment (deploy/compose.yaml)
// serves.
func TestReadmeIsTrue(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	compose, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	root.InitDefaultVersionFlag()
	top := map[string]bool{}
	entries, _ := os.ReadDir(repoRoot)
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	_, defaultPort, _ := strings.Cut(clicmd.DefaultCoordinator, ":")
	portRE := regexp.MustCompile(`\b(7[0-9]{3})\b`)
	var owners []*cobra.Command // commands named by the line and the lines it continues
	continued := false          // the previous line ended in a backslash
	for n, line := range strings.Split(string(readme), "\n") {
		where := fmt.Sprintf("README.md:%d", n+1)
		for _, m := range commandRE.FindAllStringSubmatch(line, -1) {
			words := strings.Fields(m[1])
			for k := len(words); k > 0; k-- {
				if named := findCommand(root, words[:k]); named != nil {
					owners = append(owners, named)
					break
				}
			}
		}
		// Flags before the line's first arbiter are another program's
		// (valgrind --tool=callgrind bin/arbiter ...), unless the line
		// continues an arbiter command.
		from := 0
		if !continued {
			if loc := commandRE.FindStringIndex(line); loc != nil {
				from = loc[0]
			}
		}
		if len(owners) > 0 {
			for _, m := range flagRE.FindAllStringSubmatchIndex(line, -1) {
				if m[4] < from {
					continue
				}
				name := line[m[4]:m[5]]
				ok := hasFlag(root, name)
				for _, o := range owners {
					ok = ok || hasFlag(o, name)
				}
				if !ok {
					t.Errorf("%s: --%s is a flag of no command the line runs: %s", where, name, strings.TrimSpace(line))
				}
			}
		}
		continued = strings.HasSuffix(strings.TrimSpace(line), `\`)
		if !continued {
			owners = nil
		}
		for _, m := range pathRE.FindAllStringIndex(line, -1) {
			p := strings.TrimRight(line[m[0]:m[1]], ".,)`")
			first := strings.SplitN(p, "/", 2)[0]
			if m[0] > 0 && strings.ContainsRune("/.:=", rune(line[m[0]-1])) {
				continue // absolute, ./relative to the reader, a URL or a flag's value
			}
			// Paths into the repository: under one of its top-level
			// directories, or any file path with a known extension; and
			// the workplace's shared/ beside a checkout is not in it.
			if first != "shared" && (!top[first] && !fileExtRE.MatchString(p) || first == "bin" || strings.Contains(p, "*")) {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
				t.Errorf("%s: %s is not in the repository", where, p)
			}
		}
		for _, m := range portRE.FindAllStringSubmatch(line, -1) {
			if port := m[1]; port != defaultPort && !strings.Contains(string(compose), ":"+port) {
				t.Errorf("%s: port %s is neither the default coordinator port nor served by deploy/compose.yaml", where, port)
			}
		}
	}
}
