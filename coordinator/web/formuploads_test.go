//go:build unix

package web

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// tarball writes a gzip-compressed tar of files (name to content, in
// order of names given by names) under dir and returns its path.
func tarball(t *testing.T, dir, name string, names []string, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		body := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tinyTarball is the tiny UCI engine's source tree as a tarball.
func tinyTarball(t *testing.T, dir string) string {
	t.Helper()
	files := map[string]string{}
	for _, n := range []string{"Makefile", "tinyuci.c"} {
		b, err := os.ReadFile(filepath.Join("../e2e/testdata/tinyuci", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = string(b)
	}
	return tarball(t, dir, "tinyuci.tar.gz", []string{"Makefile", "tinyuci.c"}, files)
}

// postMultipart sends the submit form with files, as a browser does.
func (b *browser) postMultipart(path string, fields map[string]string, files map[string]string) response {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for field, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			b.t.Fatal(err)
		}
		w, _ := mw.CreateFormFile(field, filepath.Base(file))
		w.Write(data)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", b.base+withCSRF(path, fields["csrf"]), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.do(req)
}

// TestFormUploads posts the submit form with uploaded files over HTTP: a
// source tarball and a net are stored and named by the test; a tarball
// with an entry that leaves its tree, a program with a build command and
// a net path typed in the engine field are each refused beside their
// field, making no test.
func TestFormUploads(t *testing.T) {
	dir := t.TempDir()
	good := tinyTarball(t, dir)
	evil := tarball(t, dir, "evil.tar.gz", []string{"Makefile", "../outside.c"}, map[string]string{"Makefile": "all:\n", "../outside.c": "x"})
	program := filepath.Join(dir, "engine")
	if err := os.WriteFile(program, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	net := filepath.Join(dir, "small.nnue")
	netBytes := bytes.Repeat([]byte("net!"), 1000)
	if err := os.WriteFile(net, netBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	cl := newCluster(t, clusterOpts{books: bookDir})
	b := cl.browser(t)
	b.signIn(cl.client)
	jobCount := func() int { jobs, _ := cl.c.Core.Jobs(0, nil); return len(jobs) }
	fields := func(engineA string) map[string]string {
		return map[string]string{"csrf": b.csrf(), "kind": "match", "games": "8", "each": "nodes=1000", "book": "uho-200.epd",
			"engine_a": engineA, "engine_b": "name=base,builtin"}
	}
	for _, c := range []struct {
		what, engineA string
		files         map[string]string
		field, want   string
	}{
		{"a tarball leaving its tree", "name=dev,build=make EXE=engine", map[string]string{"engine_a_file": evil}, "engine_a_file", "outside.c"},
		{"a program with a build", "name=dev,build=make", map[string]string{"engine_a_file": program}, "engine_a", "build= and exe= go with source="},
		{"a tarball without a build", "name=dev", map[string]string{"engine_a_file": good}, "engine_a", "source= needs build=CMD"},
		{"a net path typed", "name=dev,builtin,net=/home/me/x.nnue", nil, "engine_a", "choose it in the net field"},
	} {
		r := b.postMultipart("/submit/test", fields(c.engineA), c.files)
		marker := `id="` + c.field + `-error" role="alert">`
		i := strings.Index(r.body, marker)
		if i < 0 || !strings.Contains(r.body[i:min(len(r.body), i+400)], c.want) {
			t.Errorf("%s: no %q beside %s: %d\n%s", c.what, c.want, c.field, r.status, r.body)
		}
	}
	if n := jobCount(); n != 0 {
		t.Fatalf("refused forms made %d jobs", n)
	}
	// Control: the good tarball with a net makes the test, which names
	// both stored artifacts.
	r := b.postMultipart("/submit/test", fields("name=dev,build=make EXE=engine"), map[string]string{"engine_a_file": good, "engine_a_net": net})
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/tests/s") {
		t.Fatalf("a good form: %d %s\n%s", r.status, r.location, r.body)
	}
	j := cl.job(t, cl.dial(t, cl.client), strings.TrimPrefix(r.location, "/tests/"))
	a := j.GetMatch().GetEngineA()
	tgz, _ := os.ReadFile(good)
	sum := sha256.Sum256(tgz)
	netSum := sha256.Sum256(netBytes)
	if a.GetArtifact().GetSha256() != hex.EncodeToString(sum[:]) || a.GetArtifact().GetKind() != arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE ||
		a.GetArtifact().GetBuild() != "make EXE=engine" || a.GetNet().GetSha256() != hex.EncodeToString(netSum[:]) {
		t.Errorf("engine A of the test: %v", a)
	}
}
