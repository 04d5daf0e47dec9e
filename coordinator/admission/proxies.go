package admission

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies the operator runs in front of the
// coordinator (--trusted-proxy): only a request that arrives from one of
// them may say, in X-Forwarded-For, whom it is for. Anyone else's header
// is a claim of the caller about itself and is ignored, loopback
// included (a process on the coordinator's machine is not a proxy unless
// the operator says so). The nil *Proxies trusts none.
type Proxies struct {
	prefixes []netip.Prefix
}

// ParseProxies reads CIDRs (10.0.0.0/8) and addresses (127.0.0.1).
func ParseProxies(list []string) (*Proxies, error) {
	p := &Proxies{}
	for _, s := range list {
		s = strings.TrimSpace(s)
		if pfx, err := netip.ParsePrefix(s); err == nil {
			p.prefixes = append(p.prefixes, pfx.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy %q: want a CIDR (10.0.0.0/8) or an address (127.0.0.1)", s)
		}
		a = a.Unmap()
		p.prefixes = append(p.prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// Trusted reports whether host (an address, or host:port) is a listed
// proxy.
func (p *Proxies) Trusted(host string) bool {
	if p == nil || len(p.prefixes) == 0 {
		return false
	}
	a, ok := parseHost(host)
	if !ok {
		return false
	}
	for _, pfx := range p.prefixes {
		if pfx.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the caller of a request that came from peer with the
// X-Forwarded-For values xff: the peer itself unless it is a trusted
// proxy; then the forwarded addresses are read from the nearest (last)
// back, skipping trusted proxies, and the first that is not one is the
// caller. A malformed entry ends the walk at the last address believed.
func (p *Proxies) ClientAddr(peer string, xff []string) string {
	host := peer
	if h, _, err := net.SplitHostPort(peer); err == nil {
		host = h
	}
	if !p.Trusted(host) {
		return host
	}
	var hops []string
	for _, v := range xff {
		for _, part := range strings.Split(v, ",") {
			hops = append(hops, strings.TrimSpace(part))
		}
	}
	caller := host
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHost(hops[i])
		if !ok {
			return caller
		}
		caller = a.String()
		if !p.Trusted(caller) {
			return caller
		}
	}
	return caller
}

func parseHost(s string) (netip.Addr, bool) {
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
