package gitsource

import (
	"strings"
	"testing"
)

func TestSplitAndRemote(t *testing.T) {
	for _, c := range []struct {
		spec, repo, ref string
		remote          bool
	}{
		{".@main", ".", "main", false},
		{".", ".", "HEAD", false},
		{"/src/engine@v1.2", "/src/engine", "v1.2", false},
		{`C:\src\engine@dev`, `C:\src\engine`, "dev", false},
		{"https://github.com/me/engine.git@dev", "https://github.com/me/engine.git", "dev", true},
		{"git://127.0.0.1:9418/engine@main", "git://127.0.0.1:9418/engine", "main", true},
		{"git@github.com:me/engine.git@feature/x", "git@github.com:me/engine.git", "feature/x", true},
		{"git@github.com:me/engine.git", "git@github.com:me/engine.git", "HEAD", true},
		{"ssh://git@host/engine@0123abcd", "ssh://git@host/engine", "0123abcd", true},
		{"file:///srv/git/engine@main", "file:///srv/git/engine", "main", true},
	} {
		repo, ref, err := Split(c.spec)
		if err != nil || repo != c.repo || ref != c.ref {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q", c.spec, repo, ref, err, c.repo, c.ref)
		}
		if IsRemote(repo) != c.remote {
			t.Errorf("IsRemote(%q) = %v", repo, !c.remote)
		}
	}
	for _, bad := range []string{"@main", ".@-n", ".@a b", ".@a..b", ".@x;rm", ".@" + strings.Repeat("a", 300)} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("Split(%q): no error", bad)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("https://ada:hunter2@example.org/engine"); got != "https://***@example.org/engine" {
		t.Errorf("Redact: %s", got)
	}
	if got := Redact("git@github.com:me/engine.git"); got != "git@github.com:me/engine.git" {
		t.Errorf("Redact of an scp-like address: %s", got)
	}
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"https://github.com/me/engine.git", "git://127.0.0.1/engine", "ssh://git@host/engine", "git@github.com:me/e.git"} {
		if err := CheckURL(ok, false); err != nil {
			t.Errorf("CheckURL(%q): %v", ok, err)
		}
	}
	if err := CheckURL("file:///srv/engine", true); err != nil {
		t.Errorf("file URL allowed: %v", err)
	}
	for bad, want := range map[string]string{
		"file:///srv/engine":                        "--git-allow-file",
		"ext::sh -c touch% /tmp/pwned":              "not a URL",
		"ftp://host/engine":                         `scheme "ftp"`,
		"https://user:hunter2@host/engine":          "password",
		"https://ghp_token@host/engine":             "token",
		"-uhack://x":                                "not a URL",
		"https:///engine":                           "no host",
		"https://host/" + strings.Repeat("a", 1100): "bytes",
	} {
		err := CheckURL(bad, false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v; want an error with %q", bad, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckURL(%q): the password is in the error: %v", bad, err)
		}
	}
}
