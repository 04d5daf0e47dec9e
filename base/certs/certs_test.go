package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) > 0 {
		t.Fatalf("%s: want exactly one PEM CERTIFICATE block", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// snapshot reads every file under dir, to prove a second run changed none.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestCertsInitAndWorkerFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	now := time.Now()
	p := PKI{Dir: dir}
	issued, err := p.Init([]string{"coordinator", "localhost", "127.0.0.1", "::1", "coordinator"})
	if err != nil {
		t.Fatal(err)
	}
	if len(issued) != 2 || !issued[0].Created || !issued[1].Created || issued[0].What != "CA" || issued[1].What != "coordinator" {
		t.Fatalf("Init issued %+v", issued)
	}
	w, err := p.Worker("worker-1")
	if err != nil {
		t.Fatal(err)
	}
	if !w.Created || w.What != "worker worker-1" || w.CertPath != filepath.Join(dir, "workers", "worker-1", "cert.pem") {
		t.Errorf("Worker issued %+v", w)
	}

	ca := readCert(t, filepath.Join(dir, CAFile))
	if !ca.IsCA || !ca.BasicConstraintsValid || !ca.MaxPathLenZero || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("CA: IsCA %v, constraints %v, MaxPathLenZero %v, key usage %v", ca.IsCA, ca.BasicConstraintsValid, ca.MaxPathLenZero, ca.KeyUsage)
	}
	if pub, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("CA key %T, want ECDSA P-256", ca.PublicKey)
	}
	if life := ca.NotAfter.Sub(now); life < CAValidity-time.Hour || life > CAValidity+time.Hour {
		t.Errorf("CA valid for %v, want about 10 years", life)
	}

	srv := readCert(t, filepath.Join(dir, CoordinatorDir, CertFile))
	if !slices.Equal(srv.DNSNames, []string{"coordinator", "localhost"}) || len(srv.IPAddresses) != 2 ||
		!srv.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) || !srv.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Errorf("server SANs DNS %v IP %v, want coordinator, localhost, 127.0.0.1, ::1 (duplicates dropped)", srv.DNSNames, srv.IPAddresses)
	}
	if !slices.Equal(srv.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) || srv.IsCA {
		t.Errorf("server ExtKeyUsage %v IsCA %v, want ServerAuth only", srv.ExtKeyUsage, srv.IsCA)
	}
	if life := srv.NotAfter.Sub(now); life < LeafValidity-time.Hour || life > LeafValidity+time.Hour {
		t.Errorf("server certificate valid for %v, want about 1 year", life)
	}
	cli := readCert(t, w.CertPath)
	if cli.Subject.CommonName != "worker-1" || !slices.Equal(cli.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
		t.Errorf("worker certificate CN %q ExtKeyUsage %v, want worker-1 and ClientAuth only", cli.Subject.CommonName, cli.ExtKeyUsage)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: "coordinator"}); err != nil {
		t.Errorf("server certificate: %v", err)
	}
	if _, err := cli.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("worker certificate: %v", err)
	}
	// A worker certificate cannot serve: it is not for server auth.
	if _, err := cli.Verify(x509.VerifyOptions{Roots: roots}); err == nil {
		t.Errorf("the worker certificate verifies as a server certificate")
	}
	if srv.SerialNumber.Cmp(cli.SerialNumber) == 0 || srv.SerialNumber.Cmp(ca.SerialNumber) == 0 {
		t.Errorf("serial numbers repeat")
	}

	// Keys 0600, certificates 0644, every leaf directory with its CA copy.
	for _, f := range []string{CAKeyFile, "coordinator/key.pem", "workers/worker-1/key.pem"} {
		if m := mode(t, filepath.Join(dir, f)); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, m)
		}
	}
	caPEM, _ := os.ReadFile(filepath.Join(dir, CAFile))
	for _, f := range []string{CAFile, "coordinator/cert.pem", "coordinator/ca.pem", "workers/worker-1/cert.pem", "workers/worker-1/ca.pem"} {
		if m := mode(t, filepath.Join(dir, f)); m != 0o644 {
			t.Errorf("%s mode %v, want 0644", f, m)
		}
	}
	for _, f := range []string{"coordinator/ca.pem", "workers/worker-1/ca.pem"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); !bytes.Equal(b, caPEM) {
			t.Errorf("%s is not a copy of ca.pem", f)
		}
	}
	// No temporary file is left behind.
	for path := range snapshot(t, dir) {
		if strings.Contains(filepath.Base(path), ".tmp-") {
			t.Errorf("left over: %s", path)
		}
	}
}

func TestCertsIdempotent(t *testing.T) {
	dir := t.TempDir()
	p := PKI{Dir: dir}
	hosts := []string{"coordinator", "127.0.0.1"}
	if _, err := p.Init(hosts); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Worker("w1"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	issued, err := p.Init(hosts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Worker("w1")
	if err != nil {
		t.Fatal(err)
	}
	if issued[0].Created || issued[1].Created || w.Created {
		t.Errorf("second run created files: %+v %+v", issued, w)
	}
	// A subset of the hosts is covered too.
	if _, err := p.Init([]string{"127.0.0.1"}); err != nil {
		t.Errorf("init with a covered subset of hosts: %v", err)
	}
	after := snapshot(t, dir)
	if len(before) != len(after) {
		t.Errorf("files %d, then %d", len(before), len(after))
	}
	for path, b := range before {
		if after[path] != b {
			t.Errorf("%s changed on the second run", path)
		}
	}

	// A new coordinator certificate (its files removed) is signed by the
	// kept CA, so every worker's trust stays valid.
	os.Remove(filepath.Join(dir, "coordinator/cert.pem"))
	os.Remove(filepath.Join(dir, "coordinator/key.pem"))
	issued, err = p.Init([]string{"coordinator", "coord.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if issued[0].Created || !issued[1].Created {
		t.Errorf("reissue: %+v", issued)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, CAFile)); string(b) != before[filepath.Join(dir, CAFile)] {
		t.Errorf("the CA changed")
	}
	ca := readCert(t, filepath.Join(dir, CAFile))
	if err := readCert(t, filepath.Join(dir, "coordinator/cert.pem")).CheckSignatureFrom(ca); err != nil {
		t.Errorf("reissued server certificate: %v", err)
	}
}

func TestCertsRefuseWhatDoesNotFit(t *testing.T) {
	dir := t.TempDir()
	p := PKI{Dir: dir}
	if _, err := p.Init([]string{"coordinator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Worker("w1"); err != nil {
		t.Fatal(err)
	}
	expect := func(what string, err error, parts ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, s := range parts {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q lacks %q", what, err, s)
			}
		}
	}
	_, err := p.Init([]string{"coordinator", "other.example"})
	expect("a host the certificate lacks", err, `does not cover host "other.example"`, "it covers coordinator", "remove "+filepath.Join(dir, "coordinator/cert.pem"))

	muchLater := PKI{Dir: dir, Now: func() time.Time { return time.Now().Add(CAValidity + 24*time.Hour) }}
	_, err = muchLater.Worker("w3")
	expect("expired CA", err, "the CA", "expired on", "start a new farm PKI")

	// A certificate of another farm's CA is not kept.
	other := PKI{Dir: t.TempDir()}
	if _, err := other.Init([]string{"coordinator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Worker("w4"); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "workers/w4"), 0o700)
	for _, f := range []string{"cert.pem", "key.pem"} {
		b, _ := os.ReadFile(filepath.Join(other.Dir, "workers/w4", f))
		os.WriteFile(filepath.Join(dir, "workers/w4", f), b, 0o600)
	}
	_, err = p.Worker("w4")
	expect("foreign worker certificate", err, "does not verify against the CA")

	// Half a pair is an error naming both files.
	os.Remove(filepath.Join(dir, "workers/w1/cert.pem"))
	_, err = p.Worker("w1")
	expect("key without certificate", err, "key.pem exists without its certificate", "cert.pem")
	os.Remove(filepath.Join(dir, CAKeyFile))
	_, err = p.Init([]string{"coordinator"})
	expect("CA without key", err, "ca.pem exists without its key")

	// A worker needs a CA.
	_, err = PKI{Dir: t.TempDir()}.Worker("w1")
	expect("no CA", err, "no CA in", "arbiter certs init")
}

// TestCertsRenewal: a leaf within RenewBefore of its end, or past it, is issued
// again (new key, same name and hosts, same CA); one further from its end
// is kept.
func TestCertsRenewal(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	p := PKI{Dir: dir}
	if _, err := p.Init([]string{"coordinator", "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Worker("w1"); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) PKI { return PKI{Dir: dir, Now: func() time.Time { return start.Add(d) }} }
	before := snapshot(t, dir)

	// 31 days before the end: kept.
	early := at(LeafValidity - RenewBefore - 24*time.Hour)
	issued, err := early.Init([]string{"coordinator"})
	if err != nil || issued[1].Created || issued[1].Renewed {
		t.Errorf("31 days before the end: %+v, %v; want kept", issued, err)
	}
	if w, err := early.Worker("w1"); err != nil || w.Renewed {
		t.Errorf("worker 31 days before the end: %+v, %v; want kept", w, err)
	}
	for path, b := range snapshot(t, dir) {
		if before[path] != b {
			t.Errorf("%s changed 31 days before the end", path)
		}
	}

	// A day past the end: renewed, the CA kept, the hosts and name kept.
	late := at(LeafValidity + 24*time.Hour)
	issued, err = late.Init([]string{"coordinator"})
	if err != nil || issued[0].Created || issued[0].Renewed || !issued[1].Renewed || issued[1].Created {
		t.Fatalf("a day past the end: %+v, %v; want the CA kept and the coordinator renewed", issued, err)
	}
	w, err := late.Worker("w1")
	if err != nil || !w.Renewed {
		t.Fatalf("worker a day past the end: %+v, %v; want renewed", w, err)
	}
	after := snapshot(t, dir)
	for _, f := range []string{CAFile, CAKeyFile} {
		if after[filepath.Join(dir, f)] != before[filepath.Join(dir, f)] {
			t.Errorf("%s changed on renewal", f)
		}
	}
	for _, f := range []string{"coordinator/key.pem", "coordinator/cert.pem", "workers/w1/key.pem", "workers/w1/cert.pem"} {
		if after[filepath.Join(dir, f)] == before[filepath.Join(dir, f)] {
			t.Errorf("%s not replaced on renewal", f)
		}
	}
	ca := readCert(t, filepath.Join(dir, CAFile))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	srv := readCert(t, filepath.Join(dir, "coordinator/cert.pem"))
	if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1", CurrentTime: start.Add(LeafValidity + 48*time.Hour)}); err != nil {
		t.Errorf("renewed server certificate, for a host it had: %v", err)
	}
	cli := readCert(t, filepath.Join(dir, "workers/w1/cert.pem"))
	if cli.Subject.CommonName != "w1" || !cli.NotAfter.After(start.Add(2*LeafValidity)) {
		t.Errorf("renewed worker certificate: CN %q until %v", cli.Subject.CommonName, cli.NotAfter)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "workers/w1/cert.pem"), filepath.Join(dir, "workers/w1/key.pem")); err != nil {
		t.Errorf("renewed pair: %v", err)
	}
	// Renewed again right after: kept.
	if w, err := late.Worker("w1"); err != nil || w.Renewed || w.Created {
		t.Errorf("right after renewal: %+v, %v; want kept", w, err)
	}
}

func TestCertsInputChecks(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct {
		hosts []string
		want  string
	}{
		{nil, "none given"},
		{[]string{""}, "empty name"},
		{[]string{"coordinator", " "}, "empty name"},
		{[]string{"bad host"}, `host "bad host"`},
		{[]string{"-coordinator"}, "label"},
		{[]string{"coord..example"}, "label"},
		{[]string{"http://coordinator"}, "label"},
		{[]string{"*.example.org"}, "label"},
		{[]string{long}, "longer than 253 bytes"},
	} {
		_, err := CheckHosts(c.hosts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hosts %q: err %v, want one containing %q", c.hosts, err, c.want)
		}
		if err != nil && len(err.Error()) > 250 {
			t.Errorf("hosts %q: error of %d bytes quotes too much", c.hosts, len(err.Error()))
		}
	}
	many := make([]string, MaxHosts+1)
	for i := range many {
		many[i] = "h" + strconv.Itoa(i)
	}
	if _, err := CheckHosts(many); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("%d hosts: %v", len(many), err)
	}
	if got, err := CheckHosts([]string{"Coord.Example.", "0:0::1", "::1"}); err != nil || !slices.Equal(got, []string{"Coord.Example.", "::1"}) {
		t.Errorf("CheckHosts: %v %v", got, err)
	}
	for _, name := range []string{"", "-w", "w/1", "../w", "w 1", strings.Repeat("w", 65), "cert:w"} {
		if err := CheckName(name); err == nil || !strings.Contains(err.Error(), "worker name") {
			t.Errorf("name %q: %v", name, err)
		}
		if _, err := (PKI{Dir: t.TempDir()}).Worker(name); err == nil {
			t.Errorf("Worker(%q) accepted", name)
		}
	}
	for _, name := range []string{"w", "worker-1", "farm_07.b", strings.Repeat("w", 64)} {
		if err := CheckName(name); err != nil {
			t.Errorf("name %q: %v", name, err)
		}
	}
}

// TestMutualTLSHandshake: over loopback TCP, a server configured as the
// coordinator's LoadTLS does (its certificate, client certificates
// verified against ca.pem if given) sees the worker's name in the
// verified chain; a client trusting only ca.pem accepts the server for its
// hosts and refuses it for any other name; a client certificate of
// another farm is refused.
func TestMutualTLSHandshake(t *testing.T) {
	dir := t.TempDir()
	p := PKI{Dir: dir}
	if _, err := p.Init([]string{"coordinator", "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Worker("worker-1"); err != nil {
		t.Fatal(err)
	}
	other := PKI{Dir: t.TempDir()}
	if _, err := other.Init([]string{"coordinator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Worker("worker-1"); err != nil {
		t.Fatal(err)
	}
	srvPair, err := tls.LoadX509KeyPair(filepath.Join(dir, "coordinator/cert.pem"), filepath.Join(dir, "coordinator/key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := func(path string) *x509.CertPool {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cp := x509.NewCertPool()
		if !cp.AppendCertsFromPEM(b) {
			t.Fatalf("%s: no certificate", path)
		}
		return cp
	}
	srvCfg := &tls.Config{Certificates: []tls.Certificate{srvPair}, MinVersion: tls.VersionTLS12,
		ClientCAs: pool(filepath.Join(dir, "coordinator/ca.pem")), ClientAuth: tls.VerifyClientCertIfGiven}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	peers := make(chan string, 8)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				tc := c.(*tls.Conn)
				if err := tc.Handshake(); err != nil {
					peers <- "refused"
					return
				}
				name := "anonymous"
				if ch := tc.ConnectionState().VerifiedChains; len(ch) > 0 {
					name = ch[0][0].Subject.CommonName
				}
				peers <- name
				io.WriteString(c, name)
			}()
		}
	}()

	// dial connects as a client trusting the farm's CA, with the client
	// certificate in certDir if given; force sends it even where the
	// server's list of acceptable CAs does not name its issuer.
	dial := func(serverName, certDir string, force bool) (string, error) {
		cfg := &tls.Config{RootCAs: pool(filepath.Join(dir, "workers/worker-1/ca.pem")), ServerName: serverName, MinVersion: tls.VersionTLS12}
		if certDir != "" {
			pair, err := tls.LoadX509KeyPair(filepath.Join(certDir, "cert.pem"), filepath.Join(certDir, "key.pem"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
			if force {
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
			}
		}
		c, err := tls.Dial("tcp", lis.Addr().String(), cfg)
		if err != nil {
			return "", err
		}
		defer c.Close()
		b, err := io.ReadAll(c)
		return string(b), err
	}
	if got, err := dial("coordinator", filepath.Join(dir, "workers/worker-1"), false); err != nil || got != "worker-1" || <-peers != "worker-1" {
		t.Errorf("mTLS as worker-1: %q, %v", got, err)
	}
	if got, err := dial("127.0.0.1", "", false); err != nil || got != "anonymous" || <-peers != "anonymous" {
		t.Errorf("TLS without a client certificate (a token client): %q, %v", got, err)
	}
	var hostErr x509.HostnameError
	if _, err := dial("elsewhere", "", false); !errors.As(err, &hostErr) {
		t.Errorf("server name not in the certificate: %v, want a hostname error", err)
	}
	<-peers
	// Another farm's client certificate: the client does not offer it (the
	// server names the CAs it accepts), so it identifies no one ...
	if got, err := dial("coordinator", filepath.Join(other.Dir, "workers/worker-1"), false); err != nil || got != "anonymous" || <-peers != "anonymous" {
		t.Errorf("a foreign client certificate not offered: %q, %v; want an anonymous connection", got, err)
	}
	// ... and forced on the server, it is refused (TLS 1.3 reports that on
	// the client's first read).
	if got, err := dial("coordinator", filepath.Join(other.Dir, "workers/worker-1"), true); err == nil {
		t.Errorf("a foreign client certificate was accepted: %q", got)
	}
	if p := <-peers; p != "refused" {
		t.Errorf("server saw %q for a foreign client certificate, want refused", p)
	}
}
