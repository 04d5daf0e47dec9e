package admission

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

func TestBudgetBoundsPerKeyAndInAll(t *testing.T) {
	b := NewBudget(100, 40)
	a1, err := b.Reserve("alice", false, 30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve("alice", false, 11); apierr.ReasonOf(err) != apierr.ReasonBusy {
		t.Fatalf("alice past her 40: %v, want BUSY", err)
	}
	bob, err := b.Reserve("bob", false, 40)
	if err != nil {
		t.Fatal(err)
	}
	// The admin is not held to a key's share, only to the whole.
	adm, err := b.Reserve("admin", true, 30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve("carol", false, 1); apierr.ReasonOf(err) != apierr.ReasonBusy {
		t.Fatalf("past the whole 100: %v, want BUSY", err)
	}
	a1.Shrink(10) // decoded: alice keeps 10
	if got := b.Used(); got != 80 {
		t.Fatalf("used %d after the shrink, want 80", got)
	}
	if _, err := b.Reserve("alice", false, 20); err != nil {
		t.Fatalf("alice within her share after the shrink: %v", err)
	}
	a1.Release()
	a1.Release() // twice is harmless
	bob.Release()
	adm.Release()
	if got := b.Used(); got != 20 {
		t.Fatalf("used %d, want 20 (alice's second call)", got)
	}
}

func TestPoolBoundsRunningAndQueued(t *testing.T) {
	p := NewPool(2, 3)
	release := make(chan struct{})
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	var busy atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.Do(context.Background(), func() {
				n := running.Add(1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				<-release
				running.Add(-1)
			})
			if IsBusy(err) {
				busy.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for busy.Load() < 15 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if busy.Load() != 15 || peak.Load() > 2 {
		t.Fatalf("20 calls on 2 workers and a queue of 3: %d refused (want 15), %d ran at once (want ≤ 2)", busy.Load(), peak.Load())
	}
	// Control: once free, the pool runs work again.
	if err := p.Do(context.Background(), func() {}); err != nil {
		t.Fatalf("idle pool: %v", err)
	}
}

func TestClientAddrBelievesOnlyTrustedProxies(t *testing.T) {
	p, err := ParseProxies([]string{"10.0.0.0/8", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	none, _ := ParseProxies(nil)
	for _, c := range []struct {
		p          *Proxies
		peer       string
		xff        []string
		want, what string
	}{
		{none, "127.0.0.1:5000", []string{"203.0.113.9"}, "127.0.0.1", "no proxies listed: loopback's header ignored"},
		{p, "198.51.100.7:5000", []string{"203.0.113.9"}, "198.51.100.7", "an untrusted peer's header ignored"},
		{p, "127.0.0.1:5000", []string{"203.0.113.9"}, "203.0.113.9", "a trusted proxy's header believed"},
		{p, "10.1.2.3:5000", []string{"6.6.6.6, 203.0.113.9, 10.9.9.9"}, "203.0.113.9", "trusted hops skipped, a forged left entry not reached"},
		{p, "10.1.2.3:5000", []string{"junk"}, "10.1.2.3", "a malformed entry stops at the proxy"},
		{p, "[::ffff:127.0.0.1]:80", []string{"2001:db8::1"}, "2001:db8::1", "mapped loopback is the listed proxy"},
	} {
		if got := c.p.ClientAddr(c.peer, c.xff); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
	if _, err := ParseProxies([]string{"not-an-address"}); err == nil {
		t.Error("a bad --trusted-proxy accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []Config{{MaxBytesPerIdentity: 1 << 20}, {MaxBytes: 40 << 20, MaxBytesPerIdentity: 48 << 20}, {HashWorkers: -1}, {TrustedProxies: []string{"x"}}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
