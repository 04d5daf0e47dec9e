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
