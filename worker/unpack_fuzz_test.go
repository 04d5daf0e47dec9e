package worker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// tarOf is a tar of entries (name, link target or contents, type).
func tarOf(t testing.TB, entries ...tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		body := []byte(h.Linkname)
		if h.Typeflag == tar.TypeReg {
			h.Size, h.Linkname = int64(len(body)), ""
		}
		h.Mode = 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	return b.Bytes()
}

// FuzzUnpack: any tar (gzip-compressed here, as uploads are) unpacks or
// is refused without a panic, and nothing is created outside the tree:
// the tree's parent holds the tree alone afterwards.
func FuzzUnpack(f *testing.F) {
	f.Add(tarOf(f,
		tar.Header{Name: "src/", Typeflag: tar.TypeDir},
		tar.Header{Name: "src/main.c", Typeflag: tar.TypeReg, Linkname: "int main(){}"},
		tar.Header{Name: "Makefile", Typeflag: tar.TypeReg, Linkname: "all:\n"},
		tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "src/main.c"}))
	f.Add(tarOf(f, tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Linkname: "x"}))
	f.Add(tarOf(f, tar.Header{Name: "/abs", Typeflag: tar.TypeReg, Linkname: "x"}))
	f.Add(tarOf(f, tar.Header{Name: "up", Typeflag: tar.TypeSymlink, Linkname: "../.."}))
	f.Add(tarOf(f, tar.Header{Name: "fifo", Typeflag: tar.TypeFifo}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(raw)
		zw.Close()
		archive := filepath.Join(t.TempDir(), "src.tar.gz")
		if err := os.WriteFile(archive, gz.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		tree := filepath.Join(root, "tree")
		if err := os.Mkdir(tree, 0o755); err != nil {
			t.Fatal(err)
		}
		unpack(archive, tree) // an error is a refusal: fine
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "tree" {
			var names []string
			filepath.WalkDir(root, func(p string, _ fs.DirEntry, _ error) error { names = append(names, p); return nil })
			t.Fatalf("unpack created outside the tree: %v", names)
		}
	})
}
