// Package destpolicy decides where the coordinator may send requests on
// a user's behalf: webhooks (coordinator/hooks) and git fetches of
// source=git:URL@REF (coordinator/artifacts). Both let a submitter name a
// destination, so both refuse what is not the public internet —
// loopback, private, CGNAT, link-local, multicast and unspecified
// addresses — unless the operator allows it (--hook-allow, --git-allow).
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

// cgnat is the shared address space of carrier-grade NAT (RFC 6598):
// not the public internet either.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Denied says why address ip is refused ("" when it is not).
func (p *Policy) Denied(ip netip.Addr) string {
	ip = ip.Unmap()
	if p.allowAll {
		return ""
	}
	for _, pre := range p.prefixes {
		if pre.Contains(ip) {
			return ""
		}
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate(), cgnat.Contains(ip):
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	return ""
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
