package gitsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCanonical: the spellings of one repository give one name; other
// repositories, hosts, ports, users and transports stay apart.
func TestCanonical(t *testing.T) {
	same := [][]string{
		{"https://github.com/me/engine", "https://github.com/me/engine.git", "HTTPS://GitHub.com/me/engine/", "https://github.com:443/me//engine.git",
			"https://github.com/me/engine?x=1"},
		{"git@github.com:me/engine.git", "ssh://git@github.com/me/engine", "ssh://git@GITHUB.com:22/me/engine.git"},
		{"http://127.0.0.1:8080/git/engine", "http://127.0.0.1:8080/git/engine.git", "http://127.0.0.1:8080/git/./engine"},
	}
	seen := map[string]int{}
	for i, group := range same {
		want := Canonical(group[0])
		for _, s := range group {
			if got := Canonical(s); got != want {
				t.Errorf("Canonical(%q) = %q, want %q (as %q)", s, got, want, group[0])
			}
		}
		if j, dup := seen[want]; dup {
			t.Errorf("groups %d and %d share %q", j, i, want)
		}
		seen[want] = i
	}
	for _, pair := range [][2]string{
		{"https://github.com/me/engine", "https://github.com/me/engine2"},
		{"https://github.com/me/engine", "http://github.com/me/engine"},
		{"https://github.com/me/engine", "https://github.com:8443/me/engine"},
		{"ssh://git@github.com/me/engine", "ssh://other@github.com/me/engine"},
		{"https://github.com/me/engine", "https://gitlab.com/me/engine"},
	} {
		if Canonical(pair[0]) == Canonical(pair[1]) {
			t.Errorf("%q and %q share %q", pair[0], pair[1], Canonical(pair[0]))
		}
	}
}

// TestGuard: a directory that grows past the limit stops the context
// while it grows; one where nothing is written stops after Stall; one that
// grows within the limit and ends is not stopped (the control).
func TestGuard(t *testing.T) {
	write := func(dir string, n int, every time.Duration, stop <-chan struct{}) {
		for i := 0; i < n; i++ {
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
			os.WriteFile(filepath.Join(dir, "pack"+string(rune('a'+i%26))+time.Now().Format("150405.000000")), make([]byte, 1<<20), 0o600)
		}
	}
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "before"), make([]byte, 8<<20), 0o600) // what was there does not count
		ctx, stop := Guard(context.Background(), dir, FetchLimits{MaxBytes: 4 << 20, Which: "--git-max-bytes", Stall: time.Minute, Every: 20 * time.Millisecond})
		defer stop()
		quit := make(chan struct{})
		defer close(quit)
		go write(dir, 100, 10*time.Millisecond, quit)
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("not stopped after 30 s")
		}
		var big *ErrTooLarge
		if err := StopCause(ctx); !errors.As(err, &big) || big.Limit != 4<<20 {
			t.Fatalf("cause %v", err)
		}
		if n := DirSize(dir); n > 8<<20+40<<20 {
			t.Errorf("%d bytes written before the stop", n)
		}
	})
	t.Run("stalled", func(t *testing.T) {
		start := time.Now()
		ctx, stop := Guard(context.Background(), t.TempDir(), FetchLimits{Stall: 300 * time.Millisecond, Every: 20 * time.Millisecond})
		defer stop()
		<-ctx.Done()
		var stalled *ErrStalled
		if err := StopCause(ctx); !errors.As(err, &stalled) || time.Since(start) < 300*time.Millisecond {
			t.Fatalf("cause %v after %v", err, time.Since(start))
		}
	})
	t.Run("within", func(t *testing.T) {
		dir := t.TempDir()
		ctx, stop := Guard(context.Background(), dir, FetchLimits{MaxBytes: 64 << 20, Stall: 5 * time.Second, Every: 20 * time.Millisecond})
		write(dir, 5, 20*time.Millisecond, nil)
		time.Sleep(100 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("stopped: %v", context.Cause(ctx))
		}
		stop()
		if err := StopCause(ctx); err != nil {
			t.Fatalf("cause after stop: %v", err)
		}
	})
}
