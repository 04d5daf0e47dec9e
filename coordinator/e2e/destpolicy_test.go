//go:build unix

package e2e

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestWebhookSpecialRangesRefused: on a real coordinator, a client's
// webhook to a special-purpose address the destination policy let through
// before issue 41 (benchmarking 198.18.0.0/15, NAT64 of loopback,
// IPv4-compatible loopback, the broadcast address, site-local fec0::/10)
// is refused when it is made, with the reason and the operator's flag. The
// controls: a public address is accepted, and a coordinator whose operator
// allows 198.18.0.0/15 (--hook-allow) accepts a hook there.
func TestWebhookSpecialRangesRefused(t *testing.T) {
	addr, httpAddr := proctest.FreeAddr(t), proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--http", httpAddr)
	api := []string{"--api", "http://" + httpAddr, "--token", newCredential(t, addr, "client")}
	for url, why := range map[string]string{
		"http://198.18.0.1/hook":        "198.18.0.1 is a benchmarking address",
		"http://[64:ff9b::7f00:1]/hook": "is a NAT64 address of 127.0.0.1, which is a loopback address",
		"http://[::127.0.0.1]/hook":     "is an IPv4-compatible address",
		"http://255.255.255.255/hook":   "255.255.255.255 is the broadcast address",
		"https://[fec0::1]:8443/hook":   "fec0::1 is a site-local address",
		"http://[2001:db8::1]/hook":     "2001:db8::1 is a documentation address",
		"http://[64:ff9b::c612:1]/hook": "a NAT64 address of 198.18.0.1, which is a benchmarking address",
	} {
		out, code := cli(t, append([]string{"hook", "add", url}, api...)...)
		if code == 0 || !strings.Contains(out, why) || !strings.Contains(out, "--hook-allow") {
			t.Errorf("hook add %s: exit %d: %s\nwant refused: %q and the flag", url, code, out, why)
		}
	}
	for _, url := range []string{"http://93.184.216.34/hook", "http://[64:ff9b::5db8:d822]/hook"} {
		if out, code := cli(t, append([]string{"hook", "add", url}, api...)...); code != 0 {
			t.Errorf("hook add %s (public): exit %d: %s", url, code, out)
		}
	}

	addr2, httpAddr2 := proctest.FreeAddr(t), proctest.FreeAddr(t)
	coordinator(t, addr2, t.TempDir(), "--http", httpAddr2, "--hook-allow", "198.18.0.0/15")
	api2 := []string{"--api", "http://" + httpAddr2, "--token", newCredential(t, addr2, "client")}
	if out, code := cli(t, append([]string{"hook", "add", "http://198.18.0.1/hook"}, api2...)...); code != 0 {
		t.Errorf("hook add to 198.18.0.1 with --hook-allow 198.18.0.0/15: exit %d: %s", code, out)
	}
	if out, code := cli(t, append([]string{"hook", "add", "http://255.255.255.255/hook"}, api2...)...); code == 0 {
		t.Errorf("hook add to 255.255.255.255 with only 198.18.0.0/15 allowed: accepted: %s", out)
	}
}
