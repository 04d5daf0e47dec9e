package web

import (
	"net/url"
	"strings"
	"unicode"

	"github.com/arbiter-chess/arbiter/base/textcheck"
)

// maxNextPath bounds the next= a page sends back to after signing in.
const maxNextPath = 2048

// localPath is next if it is a path of this site, else "/": the one check
// of every next= the pages redirect to (sign-in, sign-up, follows).
//
// A browser reads a Location loosely: it drops tabs and line breaks
// anywhere ("/\t/evil.example" becomes "//evil.example", another site),
// takes a backslash for a slash ("/\evil.example"), and a URL with a
// scheme or host leaves the site. So next must be one leading "/" not
// followed by another "/" or "\", without a scheme, host, backslash,
// blank, control or invisible character, both as given and once
// percent-decoded (a page or proxy that decodes it again must not find
// one either).
func localPath(next string) string {
	if len(next) > maxNextPath || !isLocalPath(next) {
		return "/"
	}
	decoded, err := url.PathUnescape(next)
	if err != nil || !isLocalPath(decoded) {
		return "/"
	}
	return next
}

func isLocalPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsRune(p, '\\') {
		return false
	}
	if _, _, found := textcheck.FirstControl(p); found || strings.IndexFunc(p, unicode.IsSpace) >= 0 {
		return false
	}
	u, err := url.Parse(p)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil && u.Opaque == ""
}
