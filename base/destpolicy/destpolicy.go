// Package destpolicy decides where the coordinator may send requests on
// a user's behalf: webhooks (coordinator/hooks) and git fetches of
// source=git:URL@REF (coordinator/artifacts). Both let a submitter name a
// destination, so both refuse what is not the public internet — every
// special-purpose range of RFC 6890 and the IANA registries (loopback,
// private, CGNAT, link-local, benchmarking, documentation, NAT64, 6to4,
// multicast, broadcast, reserved...; the one list is special below) —
// unless the operator allows it (--hook-allow, --git-allow).
//
// The check belongs on the address a connection is made to, after DNS
// resolution: a name that resolves to a public address when it is
// checked and to a private one when it is dialled (DNS rebinding) must
// still be refused. Dialer (Go's own connections) and Resolve (for
// programs such as git, which are then pinned to the address checked)
// both do that.
package destpolicy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// Policy is the operator's allow list for one kind of destination.
type Policy struct {
	// flag names the operator's setting in errors ("--hook-allow").
	flag     string
	prefixes []netip.Prefix
	hosts    map[string]bool
	allowAll bool
}

// Parse reads an allow list: CIDRs ("10.0.0.0/8"), addresses
// ("127.0.0.1"), host names ("git.internal") or "*" (everything). flag
// is the setting's name, for errors.
func Parse(flag string, allow []string) (*Policy, error) {
	p := &Policy{flag: flag, hosts: map[string]bool{}}
	for _, a := range allow {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
		case a == "*":
			p.allowAll = true
		case strings.Contains(a, "/"):
			pre, err := netip.ParsePrefix(a)
			if err != nil {
				return nil, fmt.Errorf("%s %s: not a CIDR: %v", flag, a, err)
			}
			p.prefixes = append(p.prefixes, pre.Masked())
		default:
			if ip, err := netip.ParseAddr(a); err == nil {
				p.prefixes = append(p.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
				continue
			}
			p.hosts[strings.TrimSuffix(strings.ToLower(a), ".")] = true
		}
	}
	return p, nil
}

// AllowsHost reports whether host is allowed by name (or everything is):
// its addresses are then not checked.
func (p *Policy) AllowsHost(host string) bool {
	return p.allowAll || p.hosts[strings.TrimSuffix(strings.ToLower(host), ".")]
}

// special is every address range that is not the public internet: the
// special-purpose ranges of RFC 6890 and the IANA IPv4 and IPv6
// Special-Purpose Address Registries, and multicast. It is the one list;
// Denied reads it and nothing else decides by range. The longest prefix
// containing an address gives the reason, so that 0.0.0.0 is "an
// unspecified address" within "this network" 0.0.0.0/8.
//
// Ranges that carry an IPv4 address inside an IPv6 one are not
// destinations of their own: the IPv4-mapped ::ffff:0:0/96 is unmapped
// before the lookup, and the NAT64 well-known prefix 64:ff9b::/96 (the
// address DNS64 gives a public IPv4 host on an IPv6-only network) is
// judged by the IPv4 address it embeds. The others (IPv4-compatible ::/96,
// local-use NAT64 64:ff9b:1::/48, 6to4 2002::/16, Teredo within
// 2001::/23) are refused whatever they embed: they are deprecated or
// reach a relay of the operator's network.
var special = []specialRange{
	// IPv4 (RFC 6890 section 2.2.2 and its updates).
	{prefix: "0.0.0.0/8", why: `a "this network" address`},
	{prefix: "0.0.0.0/32", why: "an unspecified address"},
	{prefix: "10.0.0.0/8", why: "a private address"},
	{prefix: "100.64.0.0/10", why: "a private address"}, // shared address space of carrier-grade NAT (RFC 6598)
	{prefix: "127.0.0.0/8", why: "a loopback address"},
	{prefix: "169.254.0.0/16", why: "a link-local address"},
	{prefix: "172.16.0.0/12", why: "a private address"},
	{prefix: "192.0.0.0/24", why: "an IETF protocol assignment address"},
	{prefix: "192.0.2.0/24", why: "a documentation address"},
	{prefix: "192.31.196.0/24", why: "an AS112 address"},
	{prefix: "192.52.193.0/24", why: "an AMT relay address"},
	{prefix: "192.88.99.0/24", why: "a 6to4 relay anycast address"},
	{prefix: "192.168.0.0/16", why: "a private address"},
	{prefix: "192.175.48.0/24", why: "an AS112 address"},
	{prefix: "198.18.0.0/15", why: "a benchmarking address"},
	{prefix: "198.51.100.0/24", why: "a documentation address"},
	{prefix: "203.0.113.0/24", why: "a documentation address"},
	{prefix: "224.0.0.0/4", why: "a multicast address"},
	{prefix: "240.0.0.0/4", why: "a reserved address"},
	{prefix: "255.255.255.255/32", why: "the broadcast address"},
	// IPv6 (RFC 6890 section 2.2.3 and its updates).
	{prefix: "::/96", why: "an IPv4-compatible address (deprecated)"},
	{prefix: "::/128", why: "an unspecified address"},
	{prefix: "::1/128", why: "a loopback address"},
	{prefix: "64:ff9b::/96", embedsIPv4: true},
	{prefix: "64:ff9b:1::/48", why: "a local-use NAT64 address"},
	{prefix: "100::/64", why: "a discard-only address"},
	{prefix: "2001::/23", why: "an IETF protocol assignment address"},
	{prefix: "2001:db8::/32", why: "a documentation address"},
	{prefix: "2002::/16", why: "a 6to4 address"},
	{prefix: "3fff::/20", why: "a documentation address"},
	{prefix: "5f00::/16", why: "a segment routing address"},
	{prefix: "fc00::/7", why: "a private address"},
	{prefix: "fe80::/10", why: "a link-local address"},
	{prefix: "fec0::/10", why: "a site-local address (deprecated)"},
	{prefix: "ff00::/8", why: "a multicast address"},
}

// globalUnicast is the only IPv6 space IANA allocates for the public
// internet; anything else the table above does not name is reserved.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// specialRange is one row of special.
type specialRange struct {
	prefix     string
	why        string // the reason an error gives: "is a loopback address"
	embedsIPv4 bool   // judged by the IPv4 address in its last 32 bits
	parsed     netip.Prefix
}

func init() {
	for i := range special {
		special[i].parsed = netip.MustParsePrefix(special[i].prefix)
	}
}

// lookupSpecial returns the most specific row of special containing ip
// (ip without a zone, unmapped), or nil.
func lookupSpecial(ip netip.Addr) *specialRange {
	var best *specialRange
	for i := range special {
		r := &special[i]
		if r.parsed.Contains(ip) && (best == nil || r.parsed.Bits() > best.parsed.Bits()) {
			best = r
		}
	}
	return best
}

// Denied says why address ip is refused ("" when it is not): a special
// range (see special) the operator has not allowed.
func (p *Policy) Denied(ip netip.Addr) string {
	// A zone ("fe80::1%eth0") would make every prefix miss it.
	ip = ip.WithZone("").Unmap()
	if p.allowAll || p.allowedPrefix(ip) {
		return ""
	}
	if !ip.IsValid() {
		return "not an address"
	}
	r := lookupSpecial(ip)
	switch {
	case r != nil && r.embedsIPv4:
		b := ip.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if why := p.Denied(v4); why != "" {
			return fmt.Sprintf("a NAT64 address of %s, which is %s", v4, why)
		}
		return ""
	case r != nil:
		return r.why
	case ip.Is6() && !globalUnicast.Contains(ip):
		return "a reserved address (not IPv6 global unicast)"
	}
	return ""
}

func (p *Policy) allowedPrefix(ip netip.Addr) bool {
	for _, pre := range p.prefixes {
		if pre.Contains(ip) {
			return true
		}
	}
	return false
}

// IsLocalhost reports whether host is a name of this machine
// (localhost, *.localhost), which no DNS answer is needed to refuse.
func IsLocalhost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Control is a net.Dialer's Control: it runs on the address a connection
// is about to be made to, after resolution.
func (p *Policy) Control(what string) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%s %s: not an address", what, host)
		}
		if why := p.Denied(ip); why != "" {
			return fmt.Errorf("%s %s is %s, refused (the operator allows such destinations with %s)", what, ip, why, p.flag)
		}
		return nil
	}
}

// Resolve looks host up and returns the first of its addresses the
// policy allows, for a program that is then told to connect to that
// address alone (so that a second lookup cannot answer otherwise). A
// host the operator allows by name, or an address literal, is returned
// as it is resolved or written. When every address is refused, the
// error names the host, the first address and why.
func (p *Policy) Resolve(ctx context.Context, what, host string) (netip.Addr, error) {
	host = strings.Trim(host, "[]")
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := p.Denied(ip); why != "" {
			return netip.Addr{}, fmt.Errorf("%s %s is %s, refused (the operator allows such destinations with %s)", what, ip.Unmap(), why, p.flag)
		}
		return ip.Unmap(), nil
	}
	if IsLocalhost(host) && !p.AllowsHost(host) {
		return netip.Addr{}, fmt.Errorf("%s %s is this machine, refused (the operator allows such destinations with %s)", what, host, p.flag)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s %s: cannot resolve it: %v", what, host, err)
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("%s %s: no address", what, host)
	}
	first := ""
	for _, a := range addrs {
		a = a.Unmap()
		if p.AllowsHost(host) {
			return a, nil
		}
		why := p.Denied(a)
		if why == "" {
			return a, nil
		}
		if first == "" {
			first = fmt.Sprintf("%s %s resolves to %s, which is %s, refused (the operator allows such destinations with %s)", what, host, a, why, p.flag)
		}
	}
	return netip.Addr{}, fmt.Errorf("%s", first)
}
