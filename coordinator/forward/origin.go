// Package forward lets a coordinator that follows serve: it passes every
// gRPC call (any service and method, unary or streaming) and every page
// and JSON API request on to the coordinator that leads, which alone
// keeps the live state (leases, scheduling) in memory.
//
// Invariants:
//   - A follower keeps no job state and answers nothing itself but
//     /metrics, /healthz and /readyz: what it relays is the leader's
//     answer, status, headers and trailers unchanged, so every
//     coordinator's answer is the leader's.
//   - Who called is carried to the leader in one header (Header) signed
//     with a key all coordinators read from the store (meta KeyName),
//     along with when it was signed. The leader believes the caller's
//     address and TLS client certificate name from it only when the
//     signature is valid and was made within MaxAge of its own clock; a
//     caller that sets the header itself gets it ignored (and a follower
//     replaces it), and one who replays a header seen on the wire gets it
//     ignored once MaxAge has passed.
//   - Nothing a caller sends is buffered whole: messages and bodies are
//     relayed one by one, the number of calls relayed at once is capped
//     (Config.MaxCalls), and message sizes are the leader's own limits.
//   - A call is relayed once: a follower refuses a call another
//     coordinator already forwarded (its view of the leader is stale), so
//     no chain or loop of followers forms.
package forward

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Header carries the signed origin of a forwarded call: gRPC metadata
// key and HTTP header (HTTP header names are case-insensitive).
const Header = "x-arbiter-forwarded"

// KeyName is the meta key of the key that signs Header; all coordinators
// of one store share it.
const KeyName = "forward_key"

// maxHeaderLen bounds what Verify reads of a header a peer sent.
const maxHeaderLen = 1024

// MaxAge is how far from the verifier's clock a header's signing time may
// be, in the past or the future, for the header to be believed. A header
// is signed by the follower the moment it relays a call and verified by
// the leader when the call arrives (a long stream is checked once, at its
// start), so the real age is the relay's latency; the rest of the window
// is for the coordinators' clocks, which are separate machines' clocks:
// NTP keeps them within milliseconds, a host without it drifts by seconds
// a day. 30 s tolerates clocks up to about 29 s apart and bounds a replay
// of a header seen on the wire to that long after it was sent.
const MaxAge = 30 * time.Second

// Origin is who sent a call to the coordinator that forwarded it.
type Origin struct {
	// Addr is the caller's address as host:port.
	Addr string
	// CertCN is the common name of the caller's TLS client certificate,
	// verified by the forwarding coordinator against the client CA ("":
	// none).
	CertCN string
}

// NetAddr is Addr as a net.Addr (a TCP address when it is an IP and a
// port; never a name lookup).
func (o Origin) NetAddr() net.Addr {
	if ap, err := netip.ParseAddrPort(o.Addr); err == nil {
		return net.TCPAddrFromAddrPort(ap)
	}
	return originAddr(o.Addr)
}

type originAddr string

func (a originAddr) Network() string { return "tcp" }
func (a originAddr) String() string  { return string(a) }

// Signer signs and checks Header with the coordinators' shared key.
// A nil Signer signs nothing and believes nothing.
type Signer struct {
	key []byte
	// now is the clock that stamps and checks headers (time.Now; tests
	// move it).
	now func() time.Time
}

// NewSigner signs with key (at least 32 bytes).
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("forward: key of %d bytes: want at least 32", len(key))
	}
	return &Signer{key: append([]byte(nil), key...), now: time.Now}, nil
}

// LoadSigner reads the shared key from the store, creating it (once, for
// every coordinator of the store) if there is none yet.
func LoadSigner(ctx context.Context, st *store.Store) (*Signer, error) {
	key, err := st.Meta(ctx, KeyName)
	if err != nil {
		return nil, fmt.Errorf("forward: key: %w", err)
	}
	if len(key) < 32 {
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return nil, err
		}
		if key, err = st.PutMetaIfAbsent(ctx, KeyName, fresh); err != nil {
			return nil, fmt.Errorf("forward: key: %w", err)
		}
	}
	return NewSigner(key)
}

// Sign is the value of Header for o, stamped with the time it is signed.
func (s *Signer) Sign(o Origin) string {
	v := url.Values{}
	v.Set("addr", o.Addr)
	if o.CertCN != "" {
		v.Set("cn", o.CertCN)
	}
	v.Set("t", strconv.FormatInt(s.now().UnixMilli(), 10))
	body := v.Encode()
	return body + "&mac=" + s.mac(body)
}

// Verify returns the origin a header value names, and whether its
// signature is valid and recent; a value that is not (absent, forged,
// damaged, too long, signed more than MaxAge from now or without a time)
// names nothing.
func (s *Signer) Verify(value string) (Origin, bool) {
	if s == nil || value == "" || len(value) > maxHeaderLen {
		return Origin{}, false
	}
	i := strings.LastIndex(value, "&mac=")
	if i < 0 {
		return Origin{}, false
	}
	body, mac := value[:i], value[i+len("&mac="):]
	if !hmac.Equal([]byte(mac), []byte(s.mac(body))) {
		return Origin{}, false
	}
	v, err := url.ParseQuery(body)
	if err != nil || v.Get("addr") == "" {
		return Origin{}, false
	}
	signed, err := strconv.ParseInt(v.Get("t"), 10, 64)
	if err != nil {
		return Origin{}, false
	}
	if age := s.now().Sub(time.UnixMilli(signed)); age > MaxAge || age < -MaxAge {
		return Origin{}, false
	}
	return Origin{Addr: v.Get("addr"), CertCN: v.Get("cn")}, true
}

func (s *Signer) mac(body string) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte("arbiter-forwarded-v2\n"))
	h.Write([]byte(body))
	return hex.EncodeToString(h.Sum(nil))
}

// errNoLeader is a call that finds no leader to forward to.
var errNoLeader = errors.New("no coordinator leads yet (or it has not started serving)")
