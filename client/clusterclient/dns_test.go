package clusterclient

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"google.golang.org/grpc"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// serveDNS answers A queries for name with addrs (in that order), and
// every other query with NXDOMAIN, on a loopback UDP port: a DNS server
// of the test's own, so that a name with several records can be tested
// without touching the machine's resolver.
func serveDNS(t *testing.T, name string, addrs ...[4]byte) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			known := q.Name.String() == name
			if !known {
				b = dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RCode: dnsmessage.RCodeNameError})
			}
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if known && q.Type == dnsmessage.TypeA {
				for _, a := range addrs {
					b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}, dnsmessage.AResource{A: a})
				}
			}
			msg, err := b.Finish()
			if err == nil {
				pc.WriteTo(msg, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// One name with two A records stands for two coordinators (issue 31: "a
// DNS name with several records"): the client reaches the first, and when
// it goes, the same client moves to the second without being told.
func TestNameWithSeveralRecords(t *testing.T) {
	// Two servers on one port of two loopback addresses.
	var first *grpc.Server
	f1, f2 := &scriptedWorkers{}, &scriptedWorkers{}
	var port string
	for try := 0; ; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ = net.SplitHostPort(l.Addr().String())
		l2, err := net.Listen("tcp", "127.0.0.2:"+port)
		if err != nil {
			l.Close()
			if try < 10 {
				continue
			}
			t.Skipf("cannot listen on 127.0.0.2: %v", err)
		}
		l.Close()
		l2.Close()
		first, _ = serve(t, "127.0.0.1:"+port, nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, f1) })
		serve(t, "127.0.0.2:"+port, nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, f2) })
		break
	}
	const name = "farm.arbiter.test."
	res := serveDNS(t, name, [4]byte{127, 0, 0, 1}, [4]byte{127, 0, 0, 2})
	if addrs, err := res.LookupHost(context.Background(), name); err != nil || len(addrs) != 2 {
		t.Fatalf("the test's DNS: %v %v", addrs, err)
	}
	cl := connectT(t, Options{Address: "farm.arbiter.test:" + port, Resolver: res})
	ctx := context.Background()
	register := func() error {
		start := time.Now()
		return Do(ctx, Persistent.WithAttemptTimeout(2*time.Second), func(ctx context.Context) error {
			if time.Since(start) > 20*time.Second {
				return context.DeadlineExceeded
			}
			_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
			return err
		})
	}
	if err := register(); err != nil {
		t.Fatalf("both serving: %v", err)
	}
	calls := func(f *scriptedWorkers) int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }
	if calls(f1) != 1 || calls(f2) != 0 {
		t.Fatalf("calls %d and %d: want the first record's server", calls(f1), calls(f2))
	}
	first.Stop()
	if err := register(); err != nil {
		t.Fatalf("after the first record's server stopped: %v", err)
	}
	if calls(f2) != 1 {
		t.Fatalf("the call did not reach the second record's server (calls %d, %d)", calls(f1), calls(f2))
	}
}
