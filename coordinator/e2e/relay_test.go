//go:build unix

package e2e

import (
	"io"
	"net"
	"sync"
	"testing"
)

// relay is a TCP relay on loopback between one coordinator and
// PostgreSQL that a test can cut like a dropped network: while cut, the
// bytes of every connection already open go nowhere in either direction
// (read and dropped, so neither end sees a close or an error, only
// silence), and new connections are refused (accepted and closed at
// once). Healed, it relays new connections again; the connections that
// were open when it was cut stay dead (it closes them), as a session
// whose peer went silent is by then ended by one side or the other.
type relay struct {
	t        *testing.T
	lis      net.Listener
	upstream string

	mu    sync.Mutex
	cut   bool
	pairs map[*relayPair]bool
}

// relayPair is one relayed connection: the caller's side and the server's.
type relayPair struct {
	down, up net.Conn
	dead     bool // cut while open: its bytes are dropped until healed, then it is closed
}

// startRelay relays 127.0.0.1:<free port> to upstream (host:port) until
// the test ends.
func startRelay(t *testing.T, upstream string) *relay {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{t: t, lis: lis, upstream: upstream, pairs: map[*relayPair]bool{}}
	go r.serve()
	t.Cleanup(func() {
		lis.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for p := range r.pairs {
			p.down.Close()
			p.up.Close()
		}
	})
	return r
}

func (r *relay) Addr() string { return r.lis.Addr().String() }

func (r *relay) serve() {
	for {
		down, err := r.lis.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		cut := r.cut
		r.mu.Unlock()
		if cut {
			down.Close()
			continue
		}
		up, err := net.Dial("tcp", r.upstream)
		if err != nil {
			down.Close()
			continue
		}
		p := &relayPair{down: down, up: up}
		r.mu.Lock()
		r.pairs[p] = true
		r.mu.Unlock()
		go r.pipe(p, down, up)
		go r.pipe(p, up, down)
	}
}

// pipe copies src to dst while the pair is live; once the pair is cut it
// reads and drops, and an end closing is not passed on (a dropped network
// carries no FIN either).
func (r *relay) pipe(p *relayPair, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		r.mu.Lock()
		dead := p.dead
		r.mu.Unlock()
		if n > 0 && !dead {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			if err != io.EOF || !dead {
				r.closePair(p)
			}
			return
		}
	}
}

func (r *relay) closePair(p *relayPair) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.dead && r.cut {
		return // silent until healed
	}
	p.down.Close()
	p.up.Close()
	delete(r.pairs, p)
}

// Cut blackholes every open connection and refuses new ones.
func (r *relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = true
	for p := range r.pairs {
		p.dead = true
	}
}

// Heal relays new connections again and closes those that were cut.
func (r *relay) Heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = false
	for p := range r.pairs {
		if p.dead {
			p.down.Close()
			p.up.Close()
			delete(r.pairs, p)
		}
	}
}
