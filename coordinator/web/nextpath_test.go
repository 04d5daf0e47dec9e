package web

import "testing"

// TestLocalPathRefusesOffSite: every next= that a browser would follow off
// the site (issue 41: "/%09/host", whose tab browsers drop) goes to "/";
// paths of the site, with a query, a fragment or percent-encoded
// characters, are kept (the control).
func TestLocalPathRefusesOffSite(t *testing.T) {
	for _, off := range []string{
		"", "tests", "//evil.example", "/\\evil.example", "\\\\evil.example", "https://evil.example/", "javascript:alert(1)",
		"/\t/evil.example", "/\n/evil.example", "/\r/evil.example", " //evil.example", "/ /evil.example", "/\u00a0/evil.example",
		"/%09/evil.example", "/%0a/evil.example", "/%2F/evil.example", "/%2fevil.example", "/%5Cevil.example", "/%5c%5cevil",
		"/x\\y", "/\u202e/evil", "/%E2%80%AE/evil", "/%zz", "/\x00", "/%00",
		"/" + string(make([]byte, maxNextPath)),
		"/tests?q=a%20b", // not off-site, but a blank once decoded is refused as well

	} {
		if got := localPath(off); got != "/" {
			t.Errorf("localPath(%q) = %q, want /", off, got)
		}
	}
	for _, ok := range []string{"/", "/tests/s0123abcd", "/tests?state=running&q=a+b", "/tests/x#games", "/w/%C3%A9l%C3%A9", "/a:b", "/tests/x/../y"} {
		if got := localPath(ok); got != ok {
			t.Errorf("localPath(%q) = %q, want it kept", ok, got)
		}
	}
}
