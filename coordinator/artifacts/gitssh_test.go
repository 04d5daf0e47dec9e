package artifacts

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/testing/gittest"
)

// skipSSH skips a test that cannot run sshd here, or fails it under
// ARBITER_REQUIRE_SSHD=1 (set by .ci/run, which installs openssh-server),
// so CI cannot pass with the ssh path untested.
func skipSSH(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("ARBITER_REQUIRE_SSHD") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// startSSHD runs OpenSSH's sshd on a loopback port for the test, taking
// the key authorizedKey for the current user, and returns its port. It
// skips the test (skipSSH) when there is no sshd or it cannot run here.
func startSSHD(t *testing.T, dir, authorizedKey string) string {
	t.Helper()
	const sshd = "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		skipSSH(t, "no "+sshd+" (Debian package openssh-server)")
	}
	if os.Geteuid() == 0 {
		// sshd started by root drops privileges into this directory,
		// which the package's service makes at boot.
		os.MkdirAll("/run/sshd", 0o755)
	}
	hostKey := filepath.Join(dir, "host_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		skipSSH(t, fmt.Sprintf("ssh-keygen: %v %s", err, out))
	}
	auth := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(auth, []byte(authorizedKey), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	config := filepath.Join(dir, "sshd_config")
	os.WriteFile(config, []byte(fmt.Sprintf("Port %s\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nPidFile %s\n"+
		"StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n",
		port, hostKey, auth, filepath.Join(dir, "sshd.pid"))), 0o600)
	var logs bytes.Buffer
	cmd := exec.Command(sshd, "-D", "-e", "-f", config)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		skipSSH(t, fmt.Sprintf("sshd: %v", err))
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			skipSSH(t, "sshd did not listen: "+logs.String())
		}
	}
}

// TestGitSSHKey fetches a repository over ssh from a real sshd on
// loopback that takes one key: without --git-ssh-key the fetch is
// refused with an error saying where the key comes from; with it, the
// engine is fetched; the private key is in no error or stored file.
func TestGitSSHKey(t *testing.T) {
	// No agent; ssh's known hosts in the test's own file (ssh reads
	// the user's home from the password database, not $HOME).
	t.Setenv("SSH_AUTH_SOCK", "")
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	keys := t.TempDir()
	key := filepath.Join(keys, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		skipSSH(t, fmt.Sprintf("ssh-keygen: %v %s", err, out))
	}
	pub, _ := os.ReadFile(key + ".pub")
	private, _ := os.ReadFile(key)
	port := startSSHD(t, t.TempDir(), string(pub))
	me, err := user.Current()
	if err != nil {
		skipSSH(t, err.Error())
	}
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "engine")
	commit := repo.Commit("Engine over ssh", map[string]string{"Makefile": "all:\n\tcc -o engine engine.c\n", "engine.c": "int depth = 5;\n"})
	url := "ssh://" + me.Username + "@127.0.0.1:" + port + repo.Dir
	ctx := context.Background()

	bare := newFixtureGit(t, "", GitConfig{Allow: []string{"127.0.0.1"}, SSHKnownHosts: knownHosts})
	err = bare.arts.ImportEngines(ctx, alice, remoteEngine("dev", url, "main"))
	ae, _ := apierr.As(err)
	if err == nil || ae == nil || ae.Code != apierr.FailedPrecondition || !strings.Contains(err.Error(), "Permission denied (publickey") ||
		!strings.Contains(err.Error(), "--git-ssh-key") {
		t.Errorf("fetch without the key: %v", err)
	}
	withKey := newFixtureGit(t, "", GitConfig{Allow: []string{"127.0.0.1"}, SSHKey: key, SSHKnownHosts: knownHosts})
	e := remoteEngine("dev", url, "main")
	if err := withKey.arts.ImportEngines(ctx, alice, e); err != nil {
		t.Fatalf("fetch with the key: %v", err)
	}
	if a, err := withKey.arts.Resolve(e.GetArtifact().GetSha256()); err != nil || a.Commit != commit {
		t.Errorf("artifact: %v %+v", err, a)
	}
	secret := strings.Split(strings.TrimSpace(string(private)), "\n")[1] // a line of the key itself
	for _, d := range []string{bare.dir, withKey.dir} {
		filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
					t.Errorf("the private key is in %s", p)
				}
			}
			return nil
		})
	}
}
