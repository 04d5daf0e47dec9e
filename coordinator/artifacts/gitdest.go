package artifacts

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
)

// Where a fetch may connect. A remote source=git:URL@REF makes the
// coordinator connect where a submitter says, as a webhook does, so the
// same policy applies (base/destpolicy, --git-allow): the host is
// resolved here, every address checked, and git is then told to connect
// to the address that passed and no other — curl's resolve list for
// http(s), ssh's HostName for ssh, the address in the URL for git:// —
// with proxies and redirects off, so that neither a second DNS answer
// (rebinding) nor a redirect reaches what the check refused.

// gitPin is how one fetch is held to the address checked.
type gitPin struct {
	host    string // the URL's host as written (ssh's HostKeyAlias)
	resolve string // HOST:PORT:ADDRESS for http(s) (http.curloptResolve)
	sshHost string // the address ssh connects to
}

// gitDestination reads a repository URL's scheme, host and port (the
// scheme's default when none is written); scp-like user@host:path is ssh.
func gitDestination(raw string) (scheme, host, port string, err error) {
	if !strings.Contains(raw, "://") {
		rest := raw
		if i := strings.Index(rest, "@"); i >= 0 && i < strings.Index(rest, ":") {
			rest = rest[i+1:]
		}
		if strings.HasPrefix(rest, "[") {
			end := strings.Index(rest, "]")
			if end < 0 {
				return "", "", "", errors.New("host: unclosed [")
			}
			return "ssh", rest[1:end], "22", nil
		}
		host, _, _ = strings.Cut(rest, ":")
		return "ssh", host, "22", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", err
	}
	scheme, host, port = strings.ToLower(u.Scheme), u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "ssh": "22", "git": "9418"}[scheme]
	}
	return scheme, host, port, nil
}

// pinDestination checks where a fetch of repository raw connects and
// returns how to hold git to it, and the URL to fetch (git:// names the
// address checked). file:// and hosts the operator allows by name (or
// "*") are not pinned.
func (s *Store) pinDestination(ctx context.Context, raw string) (*gitPin, string, error) {
	scheme, host, port, err := gitDestination(raw)
	if err != nil {
		return nil, "", err
	}
	if scheme == "file" || s.gitPolicy.AllowsHost(host) {
		return nil, raw, nil
	}
	if host == "" {
		return nil, "", errors.New("no host")
	}
	ip, err := s.gitPolicy.Resolve(ctx, "host", host)
	if err != nil {
		return nil, "", err
	}
	pin := &gitPin{host: host}
	addr := ip.String()
	if ip.Is6() {
		addr = "[" + addr + "]"
	}
	switch scheme {
	case "http", "https":
		if !strings.Contains(host, ":") && host != ip.String() {
			pin.resolve = host + ":" + port + ":" + addr
		}
	case "ssh":
		pin.sshHost = ip.String()
	case "git":
		u, err := url.Parse(raw)
		if err != nil {
			return nil, "", err
		}
		u.Host = net.JoinHostPort(ip.String(), port)
		return pin, u.String(), nil
	}
	return pin, raw, nil
}
