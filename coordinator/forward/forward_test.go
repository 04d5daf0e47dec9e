package forward

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/coordinator/admission"
)

// fakeLeader is a real gRPC server on loopback standing in for the
// leader: it answers with its name and what it saw of the call.
type fakeLeader struct {
	testgrpc.UnimplementedTestServiceServer
	name   string
	signer *Signer
	addr   string

	mu      sync.Mutex
	origins []string      // the verified origin of each call ("forged" when not valid)
	blocked chan struct{} // closed when a StreamingOutputCall that blocks sees its context end
	started chan struct{} // a blocking stream has begun
}

func (l *fakeLeader) seen(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	o, ok := l.signer.Verify(first(md.Get(Header)))
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		l.origins = append(l.origins, o.Addr)
	} else {
		l.origins = append(l.origins, "forged")
	}
	dl, hasDL := ctx.Deadline()
	return l.name + " auth=" + first(md.Get("authorization")) + " deadline=" + boolStr(hasDL && time.Until(dl) > 20*time.Second && time.Until(dl) < 31*time.Second)
}

func boolStr(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (l *fakeLeader) UnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	what := l.seen(ctx)
	grpc.SetHeader(ctx, metadata.Pairs("x-leader", l.name))
	grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", l.name+"-done"))
	if s := req.GetResponseStatus(); s != nil {
		return nil, status.Error(codes.Code(s.GetCode()), s.GetMessage())
	}
	return &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: append([]byte(what+" body="), req.GetPayload().GetBody()...)}}, nil
}

func (l *fakeLeader) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
	what := l.seen(ss.Context())
	if string(req.GetPayload().GetBody()) == "block" {
		ss.SendHeader(metadata.Pairs("x-leader", l.name))
		close(l.started)
		<-ss.Context().Done()
		close(l.blocked)
		return ss.Context().Err()
	}
	for i, p := range req.GetResponseParameters() {
		body := bytes.Repeat([]byte{byte('a' + i)}, int(p.GetSize()))
		if i == 0 {
			body = []byte(what)
		}
		if err := ss.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: body}}); err != nil {
			return err
		}
	}
	return nil
}

func (l *fakeLeader) StreamingInputCall(ss grpc.ClientStreamingServer[testgrpc.StreamingInputCallRequest, testgrpc.StreamingInputCallResponse]) error {
	total := 0
	for {
		req, err := ss.Recv()
		if errors.Is(err, io.EOF) {
			return ss.SendAndClose(&testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: int32(total)})
		}
		if err != nil {
			return err
		}
		total += len(req.GetPayload().GetBody())
	}
}

func startLeader(t *testing.T, name string, signer *Signer) *fakeLeader {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLeader{name: name, signer: signer, addr: lis.Addr().String(), blocked: make(chan struct{}), started: make(chan struct{})}
	srv := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(srv, l)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return l
}

func testSigner(t testing.TB, b byte) *Signer {
	t.Helper()
	s, err := NewSigner(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startForwarder serves a Forwarder on loopback, relaying to whatever
// *to names, and returns a client of it and the client's own address as
// the forwarder sees it.
func startForwarder(t *testing.T, signer *Signer, to *atomic.Pointer[Leader], maxCalls int, adm *admission.Admission) (testgrpc.TestServiceClient, *Forwarder, func() string) {
	t.Helper()
	f := New(Config{Leader: func() Leader { return *to.Load() }, Signer: signer, MaxCalls: maxCalls, MaxWait: time.Second,
		MaxRecvMsgBytes: 1 << 20, MaxSendMsgBytes: 1 << 20, MaxConcurrentStreams: 4, Admission: adm})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := f.NewServer(nil)
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Stop(); f.Close() })
	var local atomic.Value
	local.Store("")
	cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err == nil {
				local.Store(c.LocalAddr().String())
			}
			return c, err
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return testgrpc.NewTestServiceClient(cc), f, func() string { return local.Load().(string) }
}

func TestForwardGRPC(t *testing.T) {
	signer := testSigner(t, 1)
	a, b := startLeader(t, "A", signer), startLeader(t, "B", signer)
	var to atomic.Pointer[Leader]
	to.Store(&Leader{GRPC: a.addr, Term: 1})
	cl, _, clientAddr := startForwarder(t, signer, &to, 8, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer tok",
		Header, "addr=6.6.6.6%3A1&mac=0000") // a forged origin: replaced

	t.Run("unary", func(t *testing.T) {
		var header, trailer metadata.MD
		resp, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("hello")}},
			grpc.Header(&header), grpc.Trailer(&trailer))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(resp.GetPayload().GetBody()), "A auth=Bearer tok deadline=yes body=hello"; got != want {
			t.Fatalf("answer %q, want %q", got, want)
		}
		if first(header.Get("x-leader")) != "A" || first(trailer.Get("x-trailer")) != "A-done" {
			t.Fatalf("header %v trailer %v", header, trailer)
		}
		a.mu.Lock()
		origin := a.origins[len(a.origins)-1]
		a.mu.Unlock()
		if origin != clientAddr() {
			t.Fatalf("the leader saw origin %q, want the caller's %q", origin, clientAddr())
		}
	})

	t.Run("status", func(t *testing.T) {
		var trailer metadata.MD
		_, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{ResponseStatus: &testgrpc.EchoStatus{Code: int32(codes.PermissionDenied), Message: "no, not you"}},
			grpc.Trailer(&trailer))
		if st := status.Convert(err); st.Code() != codes.PermissionDenied || st.Message() != "no, not you" {
			t.Fatalf("status %v, want the leader's", err)
		}
		if first(trailer.Get("x-trailer")) != "A-done" {
			t.Fatalf("trailer %v", trailer)
		}
	})

	t.Run("server stream", func(t *testing.T) {
		st, err := cl.StreamingOutputCall(authed, &testgrpc.StreamingOutputCallRequest{ResponseParameters: []*testgrpc.ResponseParameters{{Size: 1}, {Size: 3}, {Size: 100000}, {Size: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for {
			m, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, len(m.GetPayload().GetBody()))
		}
		if len(got) != 4 || got[1] != 3 || got[2] != 100000 || got[3] != 2 {
			t.Fatalf("stream of sizes %v", got)
		}
	})

	t.Run("client stream", func(t *testing.T) {
		st, err := cl.StreamingInputCall(authed)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if err := st.Send(&testgrpc.StreamingInputCallRequest{Payload: &testgrpc.Payload{Body: make([]byte, 1000)}}); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := st.CloseAndRecv()
		if err != nil || resp.GetAggregatedPayloadSize() != 10000 {
			t.Fatalf("%v %v", resp, err)
		}
	})

	t.Run("too big", func(t *testing.T) {
		_, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: make([]byte, 2<<20)}})
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("a request over the size limit: %v", err)
		}
	})

	t.Run("client cancel", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		st, err := cl.StreamingOutputCall(cctx, &testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("block")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Header(); err != nil {
			t.Fatal(err)
		}
		<-a.started
		ccancel()
		select {
		case <-a.blocked:
		case <-time.After(10 * time.Second):
			t.Fatal("the leader's call did not end when the caller cancelled")
		}
	})

	t.Run("already forwarded", func(t *testing.T) {
		// A call another coordinator forwarded (its view of the leader
		// stale) is not forwarded again.
		hop := metadata.AppendToOutgoingContext(ctx, Header, signer.Sign(Origin{Addr: "10.0.0.1:5"}))
		_, err := cl.UnaryCall(hop, &testgrpc.SimpleRequest{})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("a forwarded call forwarded again: %v", err)
		}
	})

	t.Run("leader change", func(t *testing.T) {
		a.started, a.blocked = make(chan struct{}), make(chan struct{})
		st, err := cl.StreamingOutputCall(authed, &testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("block")}})
		if err != nil {
			t.Fatal(err)
		}
		if h, err := st.Header(); err != nil || first(h.Get("x-leader")) != "A" {
			t.Fatalf("%v %v", h, err)
		}
		// The change alone, with no new call, ends the call in flight.
		to.Store(&Leader{GRPC: b.addr, Term: 2})
		if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
			t.Fatalf("a call in flight to the former leader: %v, want Unavailable", err)
		}
		resp, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{})
		if err != nil || !strings.HasPrefix(string(resp.GetPayload().GetBody()), "B ") {
			t.Fatalf("after the change: %q %v", resp.GetPayload().GetBody(), err)
		}
	})

	t.Run("no leader", func(t *testing.T) {
		to.Store(&Leader{Term: 3})
		if _, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{}); status.Code(err) != codes.Unavailable {
			t.Fatalf("no leader: %v", err)
		}
	})

	t.Run("waits for a leader", func(t *testing.T) {
		// A call that finds no leader waits (up to MaxWait) for one to
		// advertise its address rather than failing at once: calls that
		// are not retried (a submission) then survive a takeover.
		to.Store(&Leader{Term: 4})
		go func() {
			time.Sleep(200 * time.Millisecond)
			to.Store(&Leader{GRPC: a.addr, Term: 4})
		}()
		resp, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{})
		if err != nil || !strings.HasPrefix(string(resp.GetPayload().GetBody()), "A ") {
			t.Fatalf("a call made before the leader was known: %q %v", resp.GetPayload().GetBody(), err)
		}
	})

	t.Run("leader not answering", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := lis.Addr().String()
		lis.Close()
		to.Store(&Leader{GRPC: dead, Term: 5})
		go func() {
			time.Sleep(300 * time.Millisecond)
			to.Store(&Leader{GRPC: b.addr, Term: 6})
		}()
		resp, err := cl.UnaryCall(authed, &testgrpc.SimpleRequest{})
		if err != nil || !strings.HasPrefix(string(resp.GetPayload().GetBody()), "B ") {
			t.Fatalf("a call made while the row named a dead leader: %q %v", resp.GetPayload().GetBody(), err)
		}
	})
}

func TestForwardCapsCalls(t *testing.T) {
	signer := testSigner(t, 1)
	a := startLeader(t, "A", signer)
	var to atomic.Pointer[Leader]
	to.Store(&Leader{GRPC: a.addr, Term: 1})
	cl, _, _ := startForwarder(t, signer, &to, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One call held open takes the one slot.
	if _, err := cl.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("block")}}); err != nil {
		t.Fatal(err)
	}
	<-a.started
	_, err := cl.UnaryCall(ctx, &testgrpc.SimpleRequest{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "--forward-max-calls") {
		t.Fatalf("a call past the cap: %v", err)
	}
	cancel()
	<-a.blocked
}

// TestForwardBoundedByByteBudget: a follower reserves each relayed
// call's byte limit before reading its body; with the budget held by one
// call, the next is refused RESOURCE_EXHAUSTED (BUSY) without reaching
// the leader. Control: once the first ends, a call is relayed.
func TestForwardBoundedByByteBudget(t *testing.T) {
	signer := testSigner(t, 1)
	a := startLeader(t, "A", signer)
	var to atomic.Pointer[Leader]
	to.Store(&Leader{GRPC: a.addr, Term: 1})
	adm := &admission.Admission{Table: admission.NewTable(), Budget: admission.NewBudget(1<<20, 1<<20)}
	cl, _, _ := startForwarder(t, signer, &to, 8, adm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cl.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("block")}}); err != nil {
		t.Fatal(err)
	}
	<-a.started
	_, err := cl.UnaryCall(context.Background(), &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("x")}})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-request-bytes") {
		t.Fatalf("a call past the follower's byte budget: %v, want ResourceExhausted naming --max-request-bytes", err)
	}
	cancel()
	<-a.blocked
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := cl.UnaryCall(context.Background(), &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("x")}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the held call ended: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSignature(t *testing.T) {
	s, other := testSigner(t, 1), testSigner(t, 2)
	v := s.Sign(Origin{Addr: "192.0.2.7:4711", CertCN: "worker-a"})
	if o, ok := s.Verify(v); !ok || o.Addr != "192.0.2.7:4711" || o.CertCN != "worker-a" {
		t.Fatalf("%q: %v %v", v, o, ok)
	}
	for _, bad := range []string{
		"", "addr=192.0.2.7%3A4711", "addr=192.0.2.7%3A4711&cn=worker-a&mac=" + strings.Repeat("0", 64),
		strings.Replace(v, "worker-a", "worker-b", 1),                  // another name, the same MAC
		other.Sign(Origin{Addr: "192.0.2.7:4711", CertCN: "worker-a"}), // another store's key
		v + strings.Repeat("x", maxHeaderLen),
	} {
		if o, ok := s.Verify(bad); ok {
			t.Errorf("%q believed: %v", bad, o)
		}
	}
	var none *Signer
	if _, ok := none.Verify(v); ok {
		t.Error("a nil signer believed a header")
	}
}

// TestReplayedHeader: a header signed more than MaxAge ago (a replay of
// one seen on the wire), or stamped that far in the future, is not
// believed; one within the window either way (clocks that differ) is.
func TestReplayedHeader(t *testing.T) {
	signer, verifier := testSigner(t, 1), testSigner(t, 1)
	sent := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	signer.now = func() time.Time { return sent }
	v := signer.Sign(Origin{Addr: "192.0.2.7:4711", CertCN: "worker-a"})
	for _, c := range []struct {
		at      time.Duration // the verifier's clock, from the signing time
		believe bool
	}{
		{0, true},
		{MaxAge - time.Second, true},
		{-(MaxAge - time.Second), true}, // the verifier's clock behind the signer's
		{MaxAge + time.Second, false},
		{time.Hour, false},
		{-(MaxAge + time.Second), false},
	} {
		verifier.now = func() time.Time { return sent.Add(c.at) }
		if o, ok := verifier.Verify(v); ok != c.believe || (ok && o.CertCN != "worker-a") {
			t.Errorf("verified %v after signing: %v %v, want believed %v", c.at, o, ok, c.believe)
		}
	}
	// The time is signed: moving it forward breaks the MAC.
	verifier.now = func() time.Time { return sent.Add(time.Hour) }
	fresh := strings.Replace(v, "t="+strconv.FormatInt(sent.UnixMilli(), 10), "t="+strconv.FormatInt(sent.Add(time.Hour).UnixMilli(), 10), 1)
	if fresh == v {
		t.Fatalf("no time in %q", v)
	}
	if o, ok := verifier.Verify(fresh); ok {
		t.Errorf("%q with its time moved believed: %v", fresh, o)
	}
	// A header without a time (as signed before times were) is not believed.
	noTime := url.Values{"addr": {"192.0.2.7:4711"}}.Encode()
	if o, ok := verifier.Verify(noTime + "&mac=" + verifier.mac(noTime)); ok {
		t.Errorf("a header without a time believed: %v", o)
	}
}

func TestForwardHTTP(t *testing.T) {
	signer := testSigner(t, 1)
	// The leader's pages behind Trust: they say whom they see.
	leader := httptest.NewServer(Trust(signer, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Leader", "yes")
		w.Write([]byte(r.Method + " " + r.Host + r.URL.RequestURI() + " from " + r.RemoteAddr + " header=" + r.Header.Get(Header)))
	})))
	defer leader.Close()
	var to atomic.Pointer[Leader]
	to.Store(&Leader{HTTP: strings.TrimPrefix(leader.URL, "http://"), Term: 1})
	f := New(Config{Leader: func() Leader { return *to.Load() }, Signer: signer, MaxWait: 300 * time.Millisecond})
	defer f.Close()
	follower := httptest.NewServer(f.HTTP(func(w http.ResponseWriter, r *http.Request, why error) {
		http.Error(w, "unavailable: "+why.Error(), http.StatusServiceUnavailable)
	}))
	defer follower.Close()

	var local string
	cl := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			local = c.LocalAddr().String()
		}
		return c, err
	}}}
	req, _ := http.NewRequest("GET", follower.URL+"/tests/7?x=1", nil)
	req.Header.Set(Header, "addr=6.6.6.6%3A1&mac=00") // forged: replaced
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "GET " + strings.TrimPrefix(follower.URL, "http://") + "/tests/7?x=1 from " + local + " header="
	if resp.StatusCode != 200 || string(body) != want || resp.Header.Get("X-Leader") != "yes" {
		t.Fatalf("through the follower: %d %q, want %q", resp.StatusCode, body, want)
	}

	// Straight to the leader with a forged or foreign header: not believed.
	for _, forged := range []string{"addr=6.6.6.6%3A1&mac=00", testSigner(t, 9).Sign(Origin{Addr: "6.6.6.6:1"})} {
		req, _ = http.NewRequest("GET", leader.URL+"/", nil)
		req.Header.Set(Header, forged)
		resp, err = cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "6.6.6.6") || !strings.Contains(string(body), "from "+local) {
			t.Fatalf("a forged origin straight to the leader: %q", body)
		}
	}

	to.Store(&Leader{Term: 2})
	resp, err = cl.Get(follower.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("no leader: %d", resp.StatusCode)
	}
}

// The cost of the hop: a unary call to the leader directly and through a
// follower, both on loopback.
func BenchmarkUnary(b *testing.B) {
	signer := testSigner(b, 1)
	l := startLeaderB(b, signer)
	var to atomic.Pointer[Leader]
	to.Store(&Leader{GRPC: l.addr, Term: 1})
	b.Run("direct", func(b *testing.B) {
		cc, err := grpc.NewClient("passthrough:///"+l.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		benchUnary(b, testgrpc.NewTestServiceClient(cc))
	})
	b.Run("forwarded", func(b *testing.B) {
		f := New(Config{Leader: func() Leader { return *to.Load() }, Signer: signer})
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := f.NewServer(nil)
		go srv.Serve(lis)
		defer func() { srv.Stop(); f.Close() }()
		cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		benchUnary(b, testgrpc.NewTestServiceClient(cc))
	})
}

func benchUnary(b *testing.B, cl testgrpc.TestServiceClient) {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer tok")
	req := &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: make([]byte, 1024)}}
	for b.Loop() {
		if _, err := cl.UnaryCall(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func startLeaderB(b *testing.B, signer *Signer) *fakeLeader {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	l := &fakeLeader{name: "A", signer: signer, addr: lis.Addr().String(), blocked: make(chan struct{}), started: make(chan struct{})}
	srv := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(srv, l)
	go srv.Serve(lis)
	b.Cleanup(srv.Stop)
	return l
}

// TestForwardHTTPPassesXForwardedForOnlyFromTrustedProxies: a follower
// passes X-Forwarded-For on to the leader only when its peer is a proxy
// the operator trusts; anyone else's is the caller's claim and is dropped.
// Control: with the peer trusted, the header arrives as sent.
func TestForwardHTTPPassesXForwardedForOnlyFromTrustedProxies(t *testing.T) {
	signer := testSigner(t, 1)
	leader := httptest.NewServer(Trust(signer, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("xff=" + strings.Join(r.Header.Values("X-Forwarded-For"), ",")))
	})))
	defer leader.Close()
	var to atomic.Pointer[Leader]
	to.Store(&Leader{HTTP: strings.TrimPrefix(leader.URL, "http://"), Term: 1})
	for _, c := range []struct {
		trusted []string
		want    string
	}{
		{nil, "xff="},
		{[]string{"192.0.2.0/24"}, "xff="},
		{[]string{"127.0.0.1"}, "xff=203.0.113.9"},
	} {
		adm, err := admission.New(admission.Config{TrustedProxies: c.trusted}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := New(Config{Leader: func() Leader { return *to.Load() }, Signer: signer, MaxWait: 300 * time.Millisecond, Admission: adm})
		follower := httptest.NewServer(f.HTTP(func(w http.ResponseWriter, r *http.Request, why error) {
			http.Error(w, "unavailable: "+why.Error(), http.StatusServiceUnavailable)
		}))
		req, _ := http.NewRequest("GET", follower.URL+"/", nil)
		req.Header.Set("X-Forwarded-For", "203.0.113.9")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		follower.Close()
		f.Close()
		if string(body) != c.want {
			t.Errorf("trusted proxies %v: the leader saw %q, want %q", c.trusted, body, c.want)
		}
	}
}
