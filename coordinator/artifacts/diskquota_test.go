package artifacts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// TestDiskQuotaCountsUploadsAndMirrors: with 10,000 bytes a client, alice
// stores an upload of 6,000; a second of 6,000 is refused naming the
// flag, and so is one of 3,000 once a mirror her fetch made holds 2,000
// more; bob (another identity) and an admin are not held by her usage
// (the controls).
func TestDiskQuotaCountsUploadsAndMirrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "")
	f.arts.cfg.MaxDiskBytesPerIdentity = 10_000
	upload := func(id identity.Identity, fill byte, size int) error {
		t.Helper()
		data := []byte(strings.Repeat(string(fill), size))
		sha := hashOf(data)
		if _, _, err := f.arts.BeginUpload(id, begin(sha, len(data))); err != nil {
			return err
		}
		if a, _, err := f.arts.Upload(ctx, id, chunks(sha, data, 0, 4096, -1)); err != nil || a == nil {
			t.Fatalf("upload: %v %v", a, err)
		}
		return nil
	}
	if err := upload(alice, 'a', 6000); err != nil {
		t.Fatalf("within the quota: %v", err)
	}
	err := upload(alice, 'b', 6000)
	if apierr.ReasonOf(err) != apierr.ReasonQuota || !strings.Contains(err.Error(), "--max-disk-bytes-per-identity") {
		t.Fatalf("past the quota: %v", err)
	}
	if err := upload(bob, 'c', 6000); err != nil {
		t.Fatalf("another identity: %v", err)
	}
	// A mirror alice's fetch made counts toward her quota.
	mirror := f.arts.mirrorDir("https://example.org/alice/engine")
	if err := os.MkdirAll(mirror, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := claimMirror(mirror, alice.Name); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mirror, "pack"), make([]byte, 2000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := upload(alice, 'd', 1500); err != nil {
		t.Fatalf("6,000 + 2,0xx + 1,500 is within 10,000: %v", err)
	}
	if err := upload(alice, 'e', 3000); apierr.ReasonOf(err) != apierr.ReasonQuota {
		t.Fatalf("with the mirror, past the quota: %v", err)
	}
	if lim, err := f.arts.fetchLimits(alice); err == nil && lim.MaxBytes > 10_000-6000-1500-2000 {
		t.Fatalf("alice's next fetch may bring %d bytes (%s)", lim.MaxBytes, lim.Which)
	}
	admin := identity.Identity{Name: "root", Role: identity.Admin}
	if err := upload(admin, 'f', 20_000/4); err != nil {
		t.Fatalf("an admin: %v", err)
	}
}
