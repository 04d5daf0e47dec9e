// Package gitsource reads an engine's source=git:REPO@REF: a local
// repository the client packs itself, or a remote URL (https, ssh, git://,
// file) the coordinator fetches. Client and coordinator share it so that
// both read the same spec the same way.
package gitsource

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// MaxRefBytes and MaxURLBytes bound what a submitter may name.
const (
	MaxRefBytes = 256
	MaxURLBytes = 1024
)

// Split reads REPO@REF (REF defaults to HEAD). The last '@' splits, so
// that ssh URLs (git@host:repo) keep theirs.
func Split(spec string) (repo, ref string, err error) {
	repo, ref = spec, "HEAD"
	if i := strings.LastIndex(spec, "@"); i >= 0 && !isSCPUserOnly(spec, i) {
		repo, ref = spec[:i], spec[i+1:]
	}
	if ref == "" {
		ref = "HEAD"
	}
	if repo == "" {
		return "", "", fmt.Errorf("source=git:%s: want git:REPO@REF", spec)
	}
	if err := CheckRef(ref); err != nil {
		return "", "", fmt.Errorf("source=git:%s: %w", spec, err)
	}
	return repo, ref, nil
}

// isSCPUserOnly tells an '@' at i that is the user of an scp-like ssh
// address with no ref after it (git@host:repo) from REPO@REF.
func isSCPUserOnly(spec string, i int) bool {
	return strings.Contains(spec[i+1:], ":") && !strings.Contains(spec[:i], ":") && !strings.Contains(spec[:i], "/")
}

// refPattern is what a branch, tag or commit name may be: git's own rules
// are wider, but a ref that starts with '-' would be read as an option and
// a ref with control characters or spaces is no engine's branch.
var refPattern = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_./+-]*$`)

// CheckRef refuses a ref git would read as an option, or that is not a
// plain branch, tag or commit name.
func CheckRef(ref string) error {
	switch {
	case len(ref) > MaxRefBytes:
		return fmt.Errorf("ref of %d bytes (at most %d)", len(ref), MaxRefBytes)
	case ref == "HEAD":
		return nil
	case !refPattern.MatchString(ref) || strings.Contains(ref, "..") || strings.HasSuffix(ref, ".lock") || strings.HasSuffix(ref, "/"):
		return fmt.Errorf("ref %q: not a branch, tag or commit name (letters, digits and _ . / + -, not starting with '-')", ref)
	}
	return nil
}

// IsRemote tells a URL the coordinator fetches from a local path the
// client packs: a scheme (https://, ssh://, git://, file://) or, as git
// reads it, an scp-like ssh address: a colon with no slash before it
// (git@github.com:me/engine.git). C:\dir is a Windows path, not host C.
func IsRemote(repo string) bool {
	if strings.Contains(repo, "://") {
		return true
	}
	colon := strings.Index(repo, ":")
	return colon > 1 && !strings.ContainsAny(repo[:colon], `/\`)
}

// Schemes the coordinator fetches from. Others (ext::, fd::, a helper's
// scheme) can run programs or reach what they should not: git is told to
// allow these alone (GIT_ALLOW_PROTOCOL).
var Schemes = []string{"https", "http", "ssh", "git", "file"}

// CheckURL refuses what the coordinator will not fetch: another scheme,
// a password in the URL (it would be stored in the test and shown on its
// page: credentials belong in the coordinator's files or environment),
// an option-like or over-long URL, and file URLs unless allowFile.
func CheckURL(repo string, allowFile bool) error {
	if len(repo) > MaxURLBytes {
		return fmt.Errorf("repository URL of %d bytes (at most %d)", len(repo), MaxURLBytes)
	}
	if strings.HasPrefix(repo, "-") || strings.ContainsAny(repo, " \t\r\n\x00") {
		return fmt.Errorf("repository %q: not a URL", repo)
	}
	if !strings.Contains(repo, "://") {
		if !IsRemote(repo) {
			return fmt.Errorf("repository %q: not a URL (https://, ssh://, git://, file:// or user@host:path)", repo)
		}
		return nil // scp-like ssh: user@host:path carries no password
	}
	u, err := url.Parse(repo)
	if err != nil {
		return fmt.Errorf("repository %q: %v", Redact(repo), err)
	}
	scheme := strings.ToLower(u.Scheme)
	known := false
	for _, s := range Schemes {
		known = known || s == scheme
	}
	switch {
	case !known:
		return fmt.Errorf("repository %q: scheme %q is not fetched (https, http, ssh, git or file)", Redact(repo), u.Scheme)
	case u.User != nil:
		if _, has := u.User.Password(); has {
			return fmt.Errorf("repository %q: a password in the URL would be stored with the test; give the coordinator credentials (--git-credentials or its environment)", Redact(repo))
		}
		if scheme == "https" || scheme == "http" {
			return fmt.Errorf("repository %q: a user name in an http(s) URL is a token more often than not; give the coordinator credentials instead", Redact(repo))
		}
	case scheme == "file" && !allowFile:
		return fmt.Errorf("repository %q: file URLs read the coordinator's own disk; the operator allows them with --git-allow-file", repo)
	case scheme != "file" && u.Host == "":
		return fmt.Errorf("repository %q: no host", repo)
	}
	return nil
}

// Redact hides the user information of a URL, for errors and logs.
func Redact(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return repo
	}
	u.User = url.User("REDACTED")
	return strings.Replace(u.String(), "REDACTED@", "***@", 1)
}
