package destpolicy

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

// TestPolicy: what is refused by default and why, what the operator's
// list allows (CIDRs, addresses, names, "*"), and the checks made on a
// resolved address (Control) and before a program is pinned to one
// (Resolve).
func TestPolicy(t *testing.T) {
	strict, err := Parse("--x-allow", nil)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{
		"127.0.0.1": "a loopback address", "::1": "a loopback address", "::ffff:127.0.0.1": "a loopback address",
		"10.1.2.3": "a private address", "192.168.0.1": "a private address", "fd00::1": "a private address", "100.64.0.1": "a private address",
		"169.254.169.254": "a link-local address", "fe80::1": "a link-local address",
		"0.0.0.0": "an unspecified address", "::": "an unspecified address", "239.1.1.1": "a multicast address",
		"93.184.216.34": "", "2606:4700::1111": "",
	} {
		if got := strict.Denied(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Denied(%s) = %q, want %q", addr, got, want)
		}
	}
	p, err := Parse("--x-allow", []string{"10.0.0.0/8", " 127.0.0.1 ", "Git.Internal.", ""})
	if err != nil {
		t.Fatal(err)
	}
	if p.Denied(netip.MustParseAddr("10.9.9.9")) != "" || p.Denied(netip.MustParseAddr("127.0.0.1")) != "" ||
		p.Denied(netip.MustParseAddr("127.0.0.2")) == "" || p.Denied(netip.MustParseAddr("192.168.1.1")) == "" {
		t.Error("the allowed prefixes are not what was given")
	}
	if !p.AllowsHost("git.internal") || p.AllowsHost("other.internal") {
		t.Error("allowed names")
	}
	all, _ := Parse("--x-allow", []string{"*"})
	if all.Denied(netip.MustParseAddr("127.0.0.1")) != "" || !all.AllowsHost("anything") {
		t.Error(`"*" does not allow everything`)
	}
	if _, err := Parse("--x-allow", []string{"10.0.0.0/40"}); err == nil || !strings.Contains(err.Error(), "--x-allow 10.0.0.0/40: not a CIDR") {
		t.Errorf("a bad CIDR: %v", err)
	}

	if err := strict.Control("webhook destination")("tcp", "127.0.0.1:80", nil); err == nil ||
		err.Error() != "webhook destination 127.0.0.1 is a loopback address, refused (the operator allows such destinations with --x-allow)" {
		t.Errorf("Control of loopback: %v", err)
	}
	if err := strict.Control("d")("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("Control of a public address: %v", err)
	}

	ctx := context.Background()
	for host, want := range map[string]string{
		"127.0.0.1":   "host 127.0.0.1 is a loopback address, refused (the operator allows such destinations with --x-allow)",
		"[::1]":       "host ::1 is a loopback address",
		"localhost":   "host localhost is this machine, refused",
		"a.localhost": "host a.localhost is this machine",
	} {
		if _, err := strict.Resolve(ctx, "host", host); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%s): %v; want %q", host, err, want)
		}
	}
	if ip, err := strict.Resolve(ctx, "host", "93.184.216.34"); err != nil || ip.String() != "93.184.216.34" {
		t.Errorf("Resolve of a public address: %v %v", ip, err)
	}
	if ip, err := p.Resolve(ctx, "host", "127.0.0.1"); err != nil || ip.String() != "127.0.0.1" {
		t.Errorf("Resolve of an allowed address: %v %v", ip, err)
	}
}

// TestSpecialRanges: every special-purpose range of RFC 6890 and the IANA
// registries is refused by default, at its first and last address and with
// its reason, including the ones the audit of issue 41 found passing
// (198.18.0.0/15, 64:ff9b::/96 embedding loopback, ::127.0.0.1,
// 255.255.255.255, fec0::/10); the addresses just outside each range, and
// public addresses of both families, pass (the control).
func TestSpecialRanges(t *testing.T) {
	strict, err := Parse("--x-allow", nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct{ addr, why string }{
		{"0.0.0.1", `a "this network" address`}, {"0.255.255.255", `a "this network" address`},
		{"0.0.0.0", "an unspecified address"},
		{"10.0.0.0", "a private address"}, {"10.255.255.255", "a private address"},
		{"100.64.0.0", "a private address"}, {"100.127.255.255", "a private address"},
		{"127.0.0.1", "a loopback address"}, {"127.255.255.255", "a loopback address"},
		{"169.254.0.1", "a link-local address"}, {"169.254.255.255", "a link-local address"},
		{"172.16.0.0", "a private address"}, {"172.31.255.255", "a private address"},
		{"192.0.0.1", "an IETF protocol assignment address"}, {"192.0.0.255", "an IETF protocol assignment address"},
		{"192.0.2.1", "a documentation address"}, {"198.51.100.7", "a documentation address"}, {"203.0.113.255", "a documentation address"},
		{"192.31.196.1", "an AS112 address"}, {"192.175.48.1", "an AS112 address"},
		{"192.52.193.1", "an AMT relay address"}, {"192.88.99.1", "a 6to4 relay anycast address"},
		{"192.168.0.0", "a private address"}, {"192.168.255.255", "a private address"},
		{"198.18.0.0", "a benchmarking address"}, {"198.19.255.255", "a benchmarking address"},
		{"224.0.0.1", "a multicast address"}, {"239.255.255.255", "a multicast address"},
		{"240.0.0.1", "a reserved address"}, {"255.255.255.254", "a reserved address"},
		{"255.255.255.255", "the broadcast address"},
		{"::", "an unspecified address"}, {"::1", "a loopback address"},
		{"::127.0.0.1", "an IPv4-compatible address (deprecated)"}, {"::8.8.8.8", "an IPv4-compatible address (deprecated)"},
		{"::ffff:127.0.0.1", "a loopback address"}, {"::ffff:10.0.0.1", "a private address"},
		{"64:ff9b::127.0.0.1", "a NAT64 address of 127.0.0.1, which is a loopback address"},
		{"64:ff9b::198.18.0.1", "a NAT64 address of 198.18.0.1, which is a benchmarking address"},
		{"64:ff9b:1::1.2.3.4", "a local-use NAT64 address"},
		{"100::1", "a discard-only address"}, {"100::ffff:ffff:ffff:ffff", "a discard-only address"},
		{"2001::1", "an IETF protocol assignment address"}, {"2001:1ff:ffff::1", "an IETF protocol assignment address"},
		{"2001:db8::1", "a documentation address"}, {"3fff::1", "a documentation address"},
		{"2002:7f00:1::1", "a 6to4 address"}, {"2002:808:808::1", "a 6to4 address"},
		{"5f00::1", "a segment routing address"},
		{"fc00::1", "a private address"}, {"fdff:ffff::1", "a private address"},
		{"fe80::1", "a link-local address"}, {"fe80::1%eth0", "a link-local address"}, {"febf::1", "a link-local address"},
		{"fec0::1", "a site-local address (deprecated)"}, {"feff::1", "a site-local address (deprecated)"},
		{"ff02::1", "a multicast address"}, {"ff01::1", "a multicast address"}, {"ff0e::1", "a multicast address"},
		{"4000::1", "a reserved address (not IPv6 global unicast)"}, {"1::1", "a reserved address (not IPv6 global unicast)"},
	}
	for _, c := range refused {
		if got := strict.Denied(netip.MustParseAddr(c.addr)); got != c.why {
			t.Errorf("Denied(%s) = %q, want %q", c.addr, got, c.why)
		}
	}
	// The control: public addresses, the neighbours of the ranges, and
	// NAT64 of a public address (DNS64 on an IPv6-only network).
	for _, addr := range []string{
		"1.1.1.1", "8.8.8.8", "93.184.216.34", "1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.255.255", "172.15.255.255", "172.32.0.0", "192.0.1.0", "192.0.3.0",
		"192.88.98.255", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
		"2606:4700::1111", "2a00:1450:4001::1", "2001:200::1", "2001:db7:ffff::1", "2001:db9::1", "2003::1", "3ffe:ffff::1",
		"64:ff9b::8.8.8.8", "::ffff:8.8.8.8",
	} {
		if got := strict.Denied(netip.MustParseAddr(addr)); got != "" {
			t.Errorf("Denied(%s) = %q, want allowed (a public address)", addr, got)
		}
	}
	if err := strict.Control("webhook destination")("tcp", "[64:ff9b::7f00:1]:80", nil); err == nil ||
		!strings.Contains(err.Error(), "webhook destination 64:ff9b::7f00:1 is a NAT64 address of 127.0.0.1, which is a loopback address, refused") {
		t.Errorf("Control of NAT64 loopback: %v", err)
	}
	for _, host := range []string{"198.18.0.1", "[::127.0.0.1]", "255.255.255.255", "[fec0::1]", "[64:ff9b::a00:1]"} {
		if _, err := strict.Resolve(context.Background(), "host", host); err == nil || !strings.Contains(err.Error(), "refused (the operator allows such destinations with --x-allow)") {
			t.Errorf("Resolve(%s): %v, want refused naming the flag", host, err)
		}
	}
}

// TestSpecialRangesOperatorAllows: the operator's allow list still opens
// any special range, a NAT64 address is allowed when the address it embeds
// is, and "*" opens everything.
func TestSpecialRangesOperatorAllows(t *testing.T) {
	p, err := Parse("--x-allow", []string{"198.18.0.0/15", "127.0.0.1", "fec0::/10", "2002::/16"})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"198.18.3.4", "127.0.0.1", "::ffff:127.0.0.1", "64:ff9b::127.0.0.1", "fec0::5", "2002:7f00:1::1"} {
		if got := p.Denied(netip.MustParseAddr(addr)); got != "" {
			t.Errorf("Denied(%s) = %q with it allowed", addr, got)
		}
	}
	for _, addr := range []string{"127.0.0.2", "64:ff9b::127.0.0.2", "::127.0.0.1", "255.255.255.255"} {
		if p.Denied(netip.MustParseAddr(addr)) == "" {
			t.Errorf("Denied(%s) allowed; only the listed ranges are", addr)
		}
	}
	all, _ := Parse("--x-allow", []string{"*"})
	for _, addr := range []string{"255.255.255.255", "::127.0.0.1", "fec0::1", "64:ff9b:1::1"} {
		if got := all.Denied(netip.MustParseAddr(addr)); got != "" {
			t.Errorf(`Denied(%s) = %q with "*"`, addr, got)
		}
	}
}
