package store

import (
	"context"
	"testing"
)

// A shared key made by whichever coordinator comes first: the second
// one's value is not written, and both read the first one's.
func TestPutMetaIfAbsent(t *testing.T) { eachBackend(t, testPutMetaIfAbsent) }

func testPutMetaIfAbsent(t *testing.T, open opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.PutMetaIfAbsent(ctx, "k", []byte("first"))
	if err != nil || string(got) != "first" {
		t.Fatalf("first: %q %v", got, err)
	}
	got, err = s.PutMetaIfAbsent(ctx, "k", []byte("second"))
	if err != nil || string(got) != "first" {
		t.Fatalf("second: %q %v, want the first kept", got, err)
	}
	if v, err := s.Meta(ctx, "k"); err != nil || string(v) != "first" {
		t.Fatalf("stored %q %v", v, err)
	}
}
