package clusterclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// Several coordinators, one serving at a time (the others do not
// listen): the client reaches whichever serves, and when it goes and
// another starts serving the same client moves there.
func TestSeveralAddresses(t *testing.T) {
	a, b, c := proctest.FreeAddr(t), proctest.FreeAddr(t), proctest.FreeAddr(t)
	fb := &scriptedWorkers{}
	srvB, _ := serve(t, b, nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fb) })
	cl := connectT(t, Options{Address: a + "," + b + "," + c})
	if cl.Addr() != a+","+b+","+c {
		t.Fatalf("Addr %q", cl.Addr())
	}
	ctx := context.Background()
	if err := Do(ctx, Interactive, func(ctx context.Context) error {
		_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		return err
	}); err != nil {
		t.Fatalf("with %s refused and %s serving: %v", a, b, err)
	}
	// b goes (as a leader that died or lost the lead), c takes over.
	srvB.Stop()
	fc := &scriptedWorkers{}
	serve(t, c, nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fc) })
	start := time.Now()
	if err := Do(ctx, Persistent.WithAttemptTimeout(2*time.Second), func(ctx context.Context) error {
		if time.Since(start) > 20*time.Second {
			return context.DeadlineExceeded
		}
		_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		return err
	}); err != nil {
		t.Fatalf("after %s stopped and %s started: %v", b, c, err)
	}
	fc.mu.Lock()
	calls := fc.calls
	fc.mu.Unlock()
	if calls == 0 {
		t.Fatal("the call did not reach the new server")
	}
	// None serving: the error names the whole list.
	cl2 := connectT(t, Options{Address: a + "," + proctest.FreeAddr(t)})
	_, err := cl2.Workers.Register(ctx, &arbiterv1.RegisterRequest{}, grpc.WaitForReady(false))
	if e := cl2.Describe("register", err); e == nil || !strings.Contains(e.Error(), a) || e.Kind != Unreachable {
		t.Fatalf("none serving: %v", e)
	}
}

func TestNormalizeAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"a":                 "a:7700",
		"a:1,b":             "a:1,b:7700",
		" a:1 , b:2 ,a:1":   "a:1,b:2",
		"[::1]:5,127.0.0.1": "[::1]:5,127.0.0.1:7700",
	} {
		if got, err := NormalizeAddresses(in); err != nil || got != want {
			t.Errorf("NormalizeAddresses(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"a,,b":                         "empty entry",
		"a,b:99999":                    "port",
		strings.Repeat("h,", 17) + "h": "at most 16",
		"a,http://b":                   "not a host and port",
	} {
		if _, err := NormalizeAddresses(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("NormalizeAddresses(%q): %v, want an error with %q", in, err, why)
		}
	}
}
