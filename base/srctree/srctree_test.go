package srctree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, body, link string
	typ              byte
}

func tgz(entries ...entry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case e.typ != 0:
			h.Typeflag, h.Size, h.Linkname = e.typ, 0, e.link
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		tw.WriteHeader(h)
		if h.Size > 0 {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// unpackIn unpacks into parent/tree and returns the error and what ended
// up in parent besides the tree.
func unpackIn(t testing.TB, data []byte) (error, []string) {
	parent := t.TempDir()
	tree := filepath.Join(parent, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	err := Unpack(bytes.NewReader(data), tree, 1<<20)
	ents, _ := os.ReadDir(parent)
	var out []string
	for _, e := range ents {
		if e.Name() != "tree" {
			out = append(out, e.Name())
		}
	}
	return err, out
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		what    string
		entries []entry
		want    string
	}{
		{"dot-dot", []entry{{name: "../x", body: "1"}}, `entry "../x" leaves the tree`},
		{"absolute", []entry{{name: "/etc/x", body: "1"}}, "leaves the tree"},
		{"absolute link", []entry{{name: "l", link: "/etc/passwd"}}, "absolute"},
		{"link up", []entry{{name: "a/l", link: "../../x"}}, "points outside the tree"},
		{"through a link", []entry{{name: "a", link: "."}, {name: "a/b", link: ".."}}, `goes through the symbolic link "a"`},
		{"replaces a link", []entry{{name: "src/f", body: "1"}, {name: "l", link: "src/f"}, {name: "l", body: "2"}}, "replaces the symbolic link"},
		{"chain out", []entry{{name: "d/y", link: ".."}, {name: "x", link: "d/y/.."}}, `symbolic link "x" → "d/y/.." does not resolve inside the tree`},
		{"hard link", []entry{{name: "h", link: "/etc/passwd", typ: tar.TypeLink}}, "not a file, directory or symbolic link"},
		{"device", []entry{{name: "dev", typ: tar.TypeChar}}, "not a file"},
		{"too big", []entry{{name: "big", body: strings.Repeat("x", 1<<20+1)}}, "over 1048576 bytes"},
	} {
		err, left := unpackIn(t, tgz(c.entries...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
		if len(left) != 0 {
			t.Errorf("%s: written outside: %v", c.what, left)
		}
	}
	if err, _ := unpackIn(t, []byte("not gzip")); err == nil || !strings.Contains(err.Error(), "not a gzip") {
		t.Errorf("not gzip: %v", err)
	}
}

func TestHonestTree(t *testing.T) {
	err, left := unpackIn(t, tgz(entry{name: "./", typ: tar.TypeDir}, entry{name: "src/a.c", body: "int a;\n"},
		entry{name: "inc/a.h", link: "../src/a.c"}, entry{name: "out", link: "bin/engine"}, entry{name: "src/a.c", body: "int b;\n"}))
	if err != nil || len(left) != 0 {
		t.Fatalf("%v, outside %v", err, left)
	}
}

// FuzzUnpack: whatever the archive, nothing lands outside the tree and
// nothing panics.
func FuzzUnpack(f *testing.F) {
	f.Add(tgz(entry{name: "a", link: "."}, entry{name: "a/b", link: ".."}, entry{name: "a/b/x", body: "1"}))
	f.Add(tgz(entry{name: "d/y", link: ".."}, entry{name: "x", link: "d/y/.."}, entry{name: "x/e", body: "1"}))
	f.Add(tgz(entry{name: "src/a.c", body: "int a;\n"}, entry{name: "inc/a.h", link: "../src/a.c"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, left := unpackIn(t, data); len(left) != 0 {
			t.Fatalf("written outside the tree: %v", left)
		}
	})
}
