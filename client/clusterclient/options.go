package clusterclient

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/auth"
)

// DefaultPort is the coordinator's gRPC port when an address names none.
const DefaultPort = 7700

// Options says how to reach a coordinator and who we are.
type Options struct {
	// Address is HOST[:PORT] (PORT defaults to DefaultPort), or several
	// separated by commas: the coordinators of one cluster, of which one
	// serves at a time (docs/ha.md); the client connects to whichever
	// accepts, and moves on when it goes.
	Address string
	// Token is the bearer credential sent on every call (see ResolveToken).
	Token string
	// TLS turns on TLS with the system roots, or CAFile's certificates.
	TLS    bool
	CAFile string
	// ServerName overrides the name checked in the server's certificate.
	ServerName string
	// CertFile and KeyFile, given together, are a client certificate for
	// mutual TLS (they imply TLS).
	CertFile, KeyFile string
	// Resolver looks up host names (nil: the system's). A name with
	// several addresses is tried address by address, like a list.
	Resolver *net.Resolver
}

func (o Options) secure() bool { return o.TLS || o.CAFile != "" || o.CertFile != "" }

// ResolveToken picks the credential: the --token value, else the first
// line of the --token-file file (so the secret stays out of `ps`), else
// the ARBITER_TOKEN environment variable read through getenv. It returns ""
// without error when none is given.
func ResolveToken(flagValue, tokenFile string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		// Only the first line counts: files written by `echo` or editors
		// end in a newline that is no part of the secret.
		tok, _, _ := strings.Cut(string(b), "\n")
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return "", fmt.Errorf("--token-file %s: the file's first line is empty", apierr.Q(tokenFile))
		}
		return tok, nil
	}
	if getenv != nil {
		return strings.TrimSpace(getenv(auth.EnvToken)), nil
	}
	return "", nil
}

// NormalizeAddress checks a coordinator address and adds DefaultPort when
// it names no port. It accepts HOST, HOST:PORT, an IPv6 literal with or
// without brackets, and :PORT (this machine). Without this, gRPC's resolver
// would dial port 443 for "127.0.0.1".
func NormalizeAddress(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("address missing (want HOST[:PORT])")
	}
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("address %s: %s (want HOST[:PORT])", apierr.Q(addr), why)
	}
	if len(addr) > 300 {
		return bad("too long")
	}
	if strings.Contains(addr, "://") || strings.ContainsAny(addr, " \t/?#@") {
		return bad("not a host and port")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// No port: a plain host, an IPv6 literal, or a bracketed one.
		if strings.HasPrefix(addr, "[") != strings.HasSuffix(addr, "]") {
			return bad("unbalanced brackets")
		}
		host, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), strconv.Itoa(DefaultPort)
		if strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return bad("not a host and port")
		}
	}
	if host == "" {
		host = "localhost"
	}
	if strings.ContainsAny(host, "[]") {
		return bad("misplaced brackets")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return bad(fmt.Sprintf("port %s is not a number from 1 to 65535", apierr.Q(port)))
	}
	return net.JoinHostPort(host, port), nil
}

// MaxAddresses bounds the coordinators one address list may name.
const MaxAddresses = 16

// NormalizeAddresses checks a comma-separated list of coordinator
// addresses (NormalizeAddress each) and returns it normalized, without
// repeats, in the given order.
func NormalizeAddresses(list string) (string, error) {
	parts := strings.Split(list, ",")
	if len(parts) > MaxAddresses {
		return "", fmt.Errorf("address list names %d coordinators, at most %d", len(parts), MaxAddresses)
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range parts {
		if strings.TrimSpace(p) == "" && len(parts) > 1 {
			return "", fmt.Errorf("address list %s: an empty entry (want HOST[:PORT],HOST[:PORT],...)", apierr.Q(list))
		}
		a, err := NormalizeAddress(p)
		if err != nil {
			return "", err
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return strings.Join(out, ","), nil
}
