package worker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarEntry is one entry of a test tarball: a file (body), a directory
// (dir) or a symbolic link (link).
type tarEntry struct {
	name, body, link string
	dir              bool
}

func tarGzEntries(t *testing.T, entries []tarEntry) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		case e.dir:
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	gz.Close()
	p := filepath.Join(t.TempDir(), "src.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// outside lists what is in parent besides the build tree.
func outside(t *testing.T, parent string) []string {
	t.Helper()
	var out []string
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "tree" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestUnpackSymlinkChainRefused: links that each point inside the tree
// when read against their own directory, chained so that a later entry
// lands beside the tree. Nothing is written outside; the tree is refused
// with an error naming the entry. The control, a tree with an honest
// internal link, unpacks with its link.
func TestUnpackSymlinkChainRefused(t *testing.T) {
	chains := map[string][]tarEntry{
		"a→. then a/b→..": {
			{name: "a", link: "."},
			{name: "a/b", link: ".."},
			{name: "a/b/escaped", body: "owned\n"},
		},
		"d/y→.. then x→d/y/..": {
			{name: "d", dir: true},
			{name: "d/y", link: ".."},
			{name: "x", link: "d/y/.."},
			{name: "x/escaped", body: "owned\n"},
		},
		"x→d/y/.. alone (a link out for the build)": {
			{name: "d/y", link: ".."},
			{name: "x", link: "d/y/.."},
			{name: "Makefile", body: "all:\n"},
		},
	}
	for what, entries := range chains {
		t.Run(what, func(t *testing.T) {
			parent := t.TempDir()
			tree := filepath.Join(parent, "tree")
			if err := os.Mkdir(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			err := unpack(tarGzEntries(t, entries), tree)
			if left := outside(t, parent); len(left) != 0 {
				t.Errorf("written outside the build tree: %v", left)
			}
			if err == nil {
				t.Fatal("a tree with a symbolic-link chain out of it was unpacked")
			}
			if msg := err.Error(); !strings.Contains(msg, "symbolic link") || !strings.Contains(msg, `"`) {
				t.Errorf("error %q does not name the entry and the link", msg)
			}
		})
	}

	parent := t.TempDir()
	tree := filepath.Join(parent, "tree")
	os.Mkdir(tree, 0o755)
	if err := unpack(tarGzEntries(t, []tarEntry{
		{name: "src/eval.h", body: "int eval(void);\n"},
		{name: "include/eval.h", link: "../src/eval.h"},
		{name: "build/engine", link: "../bin/engine"}, // made by the build later
	}), tree); err != nil {
		t.Fatalf("honest tree refused: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(tree, "include", "eval.h")); err != nil || string(b) != "int eval(void);\n" {
		t.Fatalf("internal link: %q, %v", b, err)
	}
}
