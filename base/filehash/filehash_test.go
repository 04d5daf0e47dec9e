package filehash

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSHA256: the hash of "abc" (FIPS 180-2's example), and a missing file
// is an error naming it.
func TestSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "abc")
	os.WriteFile(p, []byte("abc"), 0o644)
	got, err := SHA256(p)
	if err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("SHA256(abc) = %s, %v", got, err)
	}
	if _, err := SHA256(p + ".missing"); err == nil {
		t.Fatal("a missing file hashed")
	}
}
