package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedUpToDate: the committed engine/perft_gen.go is what the
// template gives (run go generate ./engine after changing the template).
func TestGeneratedUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../perft_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("engine/perft_gen.go is stale: run go generate ./engine")
	}
}
