package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

func TestCertsCommandInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"certs", "init", "--host", "coordinator"}, 2, "--dir is required"},
		{[]string{"certs", "init", "--dir", dir}, 2, "--host: none given"},
		{[]string{"certs", "init", "--dir", dir, "--host", "coordinator,"}, 2, "--host: an empty name"},
		{[]string{"certs", "init", "--dir", dir, "--host", "http://coordinator:7700"}, 2, `--host "http://coordinator:7700"`},
		{[]string{"certs", "init", "--dir", dir, "--host", "coordinator", "--worker", "a/b"}, 2, `--worker: worker name "a/b"`},
		{[]string{"certs", "worker", "--dir", dir}, 2, "--name is required"},
		{[]string{"certs", "worker", "--dir", dir, "--name", "-w"}, 2, `--name: worker name "-w"`},
		{[]string{"certs", "worker", "--name", "w"}, 2, "--dir is required"},
		{[]string{"certs", "worker", "--dir", dir, "--name", "w"}, 1, "no CA in"},
	} {
		_, _, err := runArbiter(t, "", c.args...)
		if exitCode(err) != c.exit || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want %d and %q", c.args, exitCode(err), err, c.exit, c.want)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("refused commands created %s", dir)
	}

	out, _, err := runArbiter(t, "", "certs", "init", "--dir", dir, "--host", "coordinator,127.0.0.1", "--worker", "w1")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "created CA ") || !strings.HasPrefix(lines[1], "created coordinator ") ||
		!strings.HasSuffix(lines[1], ", for coordinator,127.0.0.1") || !strings.HasPrefix(lines[2], "created worker w1 ") {
		t.Errorf("init printed:\n%s", out)
	}
	out, _, err = runArbiter(t, "", "certs", "init", "--dir", dir, "--host", "coordinator,127.0.0.1", "--worker", "w1")
	if err != nil || strings.Count(out, "kept ") != 3 || strings.Contains(out, "created") {
		t.Errorf("second init: %v\n%s", err, out)
	}
	out, _, err = runArbiter(t, "", "certs", "worker", "--dir", dir, "--name", "w2")
	if err != nil || !strings.HasPrefix(out, "created worker w2 ") || !strings.Contains(out, filepath.Join(dir, "workers", "w2", "cert.pem")) {
		t.Errorf("certs worker: %v\n%s", err, out)
	}
	_, _, err = runArbiter(t, "", "certs", "init", "--dir", dir, "--host", "elsewhere")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), `does not cover host "elsewhere"`) {
		t.Errorf("init with another host: exit %d, %v", exitCode(err), err)
	}
}

// TestClientCertFlags: --cert and --key go together, their files are
// checked up front and named by flag, and a client certificate stands in
// for a token.
func TestClientCertFlags(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	dir := t.TempDir()
	if _, _, err := runArbiter(t, "", "certs", "init", "--dir", dir, "--host", "localhost", "--worker", "w1"); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(dir, "workers", "w1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cert", filepath.Join(w, "cert.pem")}, "--cert and --key go together"},
		{[]string{"--key", filepath.Join(w, "key.pem")}, "--cert and --key go together"},
		{[]string{"--cert", filepath.Join(w, "nope.pem"), "--key", filepath.Join(w, "key.pem")}, "--cert " + `"` + filepath.Join(w, "nope.pem")},
		{[]string{"--cert", filepath.Join(w, "cert.pem"), "--key", filepath.Join(dir, "coordinator", "key.pem")}, "private key does not match public key"},
		{[]string{}, "or pass a client certificate with --cert and --key"},
	} {
		var f clicmd.ClientFlags
		fl := pflag.NewFlagSet("client", pflag.ContinueOnError)
		f.Add(fl)
		if err := fl.Parse(append([]string{"--coordinator", "localhost"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		_, err := f.Options()
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}
	var f clicmd.ClientFlags
	fl := pflag.NewFlagSet("client", pflag.ContinueOnError)
	f.Add(fl)
	cert, key := filepath.Join(w, "cert.pem"), filepath.Join(w, "key.pem")
	if err := fl.Parse([]string{"--coordinator", "localhost", "--cert", cert, "--key", key, "--server-name", "coordinator"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.Options()
	if err != nil || o.Token != "" || o.CertFile != cert || o.KeyFile != key || o.ServerName != "coordinator" {
		t.Errorf("certificate only: %+v, %v", o, err)
	}
}

// arbiterProcess is the arbiter command run as a real process (the test
// binary re-executed through TestHelperArbiterMain).
type arbiterProcess struct {
	*proctest.Process
	cmd    *exec.Cmd
	exited <-chan struct{}
}

func startArbiterProcess(t *testing.T, env []string, args ...string) *arbiterProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, args...)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, auth.EnvToken+"=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(append(cmd.Env, "ARBITER_TEST_MAIN=1"), env...)
	p := proctest.Start(t, cmd, strings.Join(args, " "))
	return &arbiterProcess{Process: p, cmd: cmd, exited: p.Exited()}
}

func (p *arbiterProcess) log() string { return p.Log() }

// waitLine waits for a stderr line with prefix and returns the rest.
func (p *arbiterProcess) waitLine(t *testing.T, prefix string) string {
	t.Helper()
	return p.WaitLine(t, prefix)
}

// TestCertsTLSCoordinator runs what deploy/compose.yaml runs, as real
// processes on loopback: `certs init` makes the farm's PKI, a coordinator
// serves it with --tls-cert/--tls-key/--tls-client-ca, two workers with
// only their client certificates (no token) register as cert:NAME and
// verify each other's perft units, a token client with --ca and
// --server-name calls status, and plaintext, a wrong server name, a worker
// certificate used as a client and another farm's certificate are refused.
func TestCertsTLSCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a coordinator and two workers")
	}
	t.Setenv(auth.EnvToken, "")
	const token = "tls-bootstrap-token"
	const host = "coordinator.test"
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	if _, _, err := runArbiter(t, "", "certs", "init", "--dir", pki, "--host", host+",127.0.0.1", "--worker", "worker-1,worker-2"); err != nil {
		t.Fatal(err)
	}
	coordDir := filepath.Join(pki, "coordinator")
	coord := startArbiterProcess(t, []string{auth.EnvToken + "=" + token}, "coordinator", "--listen", "127.0.0.1:0",
		"--data", filepath.Join(dir, "data"), "--lease-duration", "10s", "--unit-duration", "100ms",
		"--tls-cert", filepath.Join(coordDir, "cert.pem"), "--tls-key", filepath.Join(coordDir, "key.pem"),
		"--tls-client-ca", filepath.Join(coordDir, "ca.pem"))
	addr := coord.waitLine(t, "arbiter coordinator: listening on ")
	caFile := filepath.Join(pki, "ca.pem")
	tlsArgs := []string{"--coordinator", addr, "--ca", caFile, "--server-name", host}

	// A token client over TLS.
	out, _, err := runArbiter(t, "", append([]string{"status", "--token", token}, tlsArgs...)...)
	if err != nil || !strings.Contains(out, "No jobs.") {
		t.Fatalf("status over TLS: %v\n%s", err, out)
	}
	// Refused: plaintext, a name the certificate does not carry, no CA.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--coordinator", addr}, "coordinator " + addr + " unreachable"},
		{[]string{"--coordinator", addr, "--ca", caFile, "--server-name", "other.test"}, "other.test"},
		{[]string{"--coordinator", addr, "--tls"}, "certificate signed by unknown authority"},
	} {
		_, _, err := runArbiter(t, "", append([]string{"status", "--token", token}, c.args...)...)
		if exitCode(err) != 3 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("status %v: exit %d, %v; want 3 and %q", c.args, exitCode(err), err, c.want)
		}
	}
	// A worker's certificate is a worker's identity: not a client's.
	w1 := filepath.Join(pki, "workers", "worker-1")
	_, _, err = runArbiter(t, "", append([]string{"status", "--cert", filepath.Join(w1, "cert.pem"), "--key", filepath.Join(w1, "key.pem")}, tlsArgs...)...)
	if exitCode(err) != 3 || !strings.Contains(err.Error(), "cert:worker-1") {
		t.Errorf("status with a worker certificate: exit %d, %v; want 3 naming cert:worker-1", exitCode(err), err)
	}

	// Another farm's worker certificate, no token: the worker cannot register.
	other := filepath.Join(dir, "other")
	if _, _, err := runArbiter(t, "", "certs", "init", "--dir", other, "--host", host, "--worker", "worker-1"); err != nil {
		t.Fatal(err)
	}
	ow := filepath.Join(other, "workers", "worker-1")
	foreign := startArbiterProcess(t, nil, append([]string{"worker", "--name", "worker-1", "--threads", "1", "--hash", "16",
		"--cert", filepath.Join(ow, "cert.pem"), "--key", filepath.Join(ow, "key.pem")}, tlsArgs...)...)
	select {
	case <-foreign.exited:
		if code := foreign.cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(foreign.log(), "refused the credential") {
			t.Errorf("worker with a foreign certificate: exit %d, want 3 with a refused credential:\n%s", code, foreign.log())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("worker with a foreign certificate still runs after 30 s:\n%s", foreign.log())
	}

	// Two workers, each with only its own certificate.
	for _, name := range []string{"worker-1", "worker-2"} {
		wd := filepath.Join(pki, "workers", name)
		startArbiterProcess(t, nil, append([]string{"worker", "--name", name, "--threads", "1", "--hash", "16",
			"--cert", filepath.Join(wd, "cert.pem"), "--key", filepath.Join(wd, "key.pem")}, tlsArgs...)...)
	}
	c, err := clusterclient.Connect(clusterclient.Options{Address: addr, Token: token, CAFile: caFile, ServerName: host})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var owners []string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := c.Admin.ListWorkers(ctx, &arbiterv1.ListWorkersRequest{})
		cancel()
		if err != nil {
			t.Fatalf("ListWorkers: %v", err)
		}
		owners = owners[:0]
		for _, w := range resp.GetWorkers() {
			owners = append(owners, w.GetOwner()+"/"+w.GetName())
		}
		slices.Sort(owners)
		if len(owners) >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.Equal(owners, []string{"cert:worker-1/worker-1", "cert:worker-2/worker-2"}) {
		t.Fatalf("registered workers (owner/name) %v, want cert:worker-1/worker-1 and cert:worker-2/worker-2", owners)
	}

	// Two identities verify each other: every unit of a fully verified
	// perft counts.
	out, _, err = runArbiter(t, "", append([]string{"submit", "perft", "--depth", "4", "--recheck", "1", "--wait", "--json", "--token", token}, tlsArgs...)...)
	if err != nil {
		t.Fatalf("submit over TLS: %v\n%s", err, out)
	}
	var res struct {
		Nodes         json.Number `json:"nodes"`
		Units         uint64      `json:"units"`
		UnitsVerified uint64      `json:"units_verified"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Nodes != "197281" || res.Units == 0 || res.UnitsVerified != res.Units {
		t.Errorf("perft 4 with --verify 1: %+v, want 197281 nodes and every unit verified", res)
	}
	t.Logf("perft 4 over mTLS: %s nodes, %d units, %d verified by the other identity", res.Nodes, res.Units, res.UnitsVerified)
}
