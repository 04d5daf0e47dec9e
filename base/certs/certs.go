// Package certs makes the small private PKI of one Arbiter farm: a CA, a
// server certificate for the coordinator and a client certificate per
// worker (mutual TLS, where a worker's certificate is its identity).
//
// Everything lives in one directory:
//
//	DIR/ca.pem, DIR/ca-key.pem                 the CA (keep the key offline)
//	DIR/coordinator/{cert,key,ca}.pem          the coordinator's certificate
//	DIR/workers/NAME/{cert,key,ca}.pem         worker NAME's client certificate
//
// Each leaf directory carries a copy of the CA certificate, so it can be
// handed (mounted) to its one process alone: no process but the one that
// signs ever needs the CA key, and no worker can read another's key.
//
// Issuing is idempotent: files that exist are checked and kept, so running
// the same command again changes nothing. The one exception is a leaf
// certificate within RenewBefore of its end (or past it): it is issued
// again under the same CA and name, which every peer already trusts, so
// that a farm whose `certs init` runs at every start (compose) renews
// itself. The CA is never replaced.
package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// File names inside the directory.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	CertFile       = "cert.pem"
	KeyFile        = "key.pem"
	CoordinatorDir = "coordinator"
	WorkersDir     = "workers"
)

// Lifetimes. The CA outlives many leaf renewals; a leaf is reissued by
// removing its two files and running the command again.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour
	RenewBefore  = 30 * 24 * time.Hour
	// backdate covers clocks a little behind the signer's.
	backdate = 5 * time.Minute
)

// Limits on input, so that a typo cannot make a certificate nobody can use.
const (
	MaxHosts     = 64
	maxHostBytes = 253
)

// nameRE is the credential-name rule of the coordinator: a worker's
// certificate name becomes its identity cert:NAME.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// dnsLabelRE is one label of a host name (RFC 1123).
var dnsLabelRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// PKI is the certificate directory of one farm.
type PKI struct {
	Dir string
	// Now is the clock (nil: time.Now); tests move it to check expiry.
	Now func() time.Time
}

// Issued describes one certificate that a call made or found.
type Issued struct {
	// What is "CA", "coordinator" or "worker NAME".
	What     string
	CertPath string
	KeyPath  string
	// Created is false when the files existed and were kept.
	Created bool
	// Renewed says the files existed and were replaced because the
	// certificate was about to end (RenewBefore) or had ended.
	Renewed  bool
	NotAfter time.Time
	// Hosts are the names and addresses a server certificate is valid for.
	Hosts []string
}

func (p PKI) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Init makes (or reuses) the CA and the coordinator's certificate for
// hosts, each a DNS name or an IP address.
func (p PKI) Init(hosts []string) ([]Issued, error) {
	hosts, err := CheckHosts(hosts)
	if err != nil {
		return nil, err
	}
	ca, caIssued, err := p.ca(true)
	if err != nil {
		return nil, err
	}
	srv, err := p.leaf(ca, leafSpec{what: "coordinator", dir: CoordinatorDir, hosts: hosts})
	if err != nil {
		return nil, err
	}
	return []Issued{caIssued, srv}, nil
}

// Worker makes (or reuses) the client certificate of worker name, signed
// by the CA that Init made in the directory.
func (p PKI) Worker(name string) (Issued, error) {
	if err := CheckName(name); err != nil {
		return Issued{}, err
	}
	ca, _, err := p.ca(false)
	if err != nil {
		return Issued{}, err
	}
	return p.leaf(ca, leafSpec{what: "worker " + name, dir: filepath.Join(WorkersDir, name), name: name})
}

// CheckName checks a worker name: the coordinator's rule for identity
// names (1 to 64 letters, digits, '.', '_' or '-', starting with a letter
// or digit), which also keeps it a safe directory name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("worker name %s: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", apierr.Q(name))
	}
	return nil
}

// CheckHosts checks the coordinator's host names and addresses and
// returns them without duplicates, in their given order.
func CheckHosts(hosts []string) ([]string, error) {
	var out []string
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, errors.New("host: an empty name (want NAME[,NAME...])")
		}
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		} else if err := checkDNSName(h); err != nil {
			return nil, err
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("host: none given (want the names clients dial, e.g. coordinator,localhost,127.0.0.1)")
	}
	if len(out) > MaxHosts {
		return nil, fmt.Errorf("host: %d names, at most %d", len(out), MaxHosts)
	}
	return out, nil
}

func checkDNSName(h string) error {
	bad := func(why string) error {
		return fmt.Errorf("host %s: %s (want a DNS name or an IP address)", apierr.Q(h), why)
	}
	if len(h) > maxHostBytes {
		return bad("longer than 253 bytes")
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if !dnsLabelRE.MatchString(label) {
			return bad(fmt.Sprintf("label %s is not letters, digits and inner hyphens", apierr.Quote(label, 64)))
		}
	}
	return nil
}

// ca loads the CA, creating it when create is set and neither file exists.
func (p PKI) ca(create bool) (*authority, Issued, error) {
	certPath, keyPath := filepath.Join(p.Dir, CAFile), filepath.Join(p.Dir, CAKeyFile)
	is := Issued{What: "CA", CertPath: certPath, KeyPath: keyPath}
	exists, err := pairExists(certPath, keyPath)
	if err != nil {
		return nil, is, err
	}
	if exists {
		ca, err := loadAuthority(certPath, keyPath, p.now())
		if err != nil {
			return nil, is, err
		}
		is.NotAfter = ca.cert.NotAfter
		return ca, is, nil
	}
	if !create {
		return nil, is, fmt.Errorf("no CA in %s (%s missing): run `arbiter certs init` there first", apierr.Q(p.Dir), CAFile)
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, is, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, is, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, is, err
	}
	now := p.now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		// A random suffix tells two farms' CAs apart in error messages
		// and certificate viewers.
		Subject:               pkix.Name{Organization: []string{"Arbiter"}, CommonName: "Arbiter farm CA " + hex.EncodeToString(serial.Bytes()[:4])},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// It signs leaves only, never another CA.
		MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, is, err
	}
	cert, _ := x509.ParseCertificate(der)
	if err := writePair(certPath, keyPath, der, key, false); err != nil {
		return nil, is, err
	}
	is.Created, is.NotAfter = true, cert.NotAfter
	return &authority{cert: cert, key: key, pem: pemCert(der)}, is, nil
}

// authority is a loaded CA.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func loadAuthority(certPath, keyPath string, now time.Time) (*authority, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, err
	}
	pair, err := loadPair(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	cert := pair.Leaf
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%s is not a CA certificate", certPath)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an ECDSA key (not made by arbiter certs)", keyPath)
	}
	if now.After(cert.NotAfter) {
		return nil, fmt.Errorf("the CA %s expired on %s: move the directory away and start a new farm PKI with `arbiter certs init`", certPath, cert.NotAfter.Format(time.DateOnly))
	}
	return &authority{cert: cert, key: key, pem: certPEM}, nil
}

// leafSpec says what certificate to issue: a server certificate for hosts,
// or a client certificate named name.
type leafSpec struct {
	what  string
	dir   string // relative to the PKI directory
	hosts []string
	name  string
}

func (p PKI) leaf(ca *authority, spec leafSpec) (Issued, error) {
	dir := filepath.Join(p.Dir, spec.dir)
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	is := Issued{What: spec.what, CertPath: certPath, KeyPath: keyPath, Hosts: spec.hosts}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return is, err
	}
	exists, err := pairExists(certPath, keyPath)
	if err != nil {
		return is, err
	}
	var cert *x509.Certificate
	if exists {
		if cert, err = p.checkLeaf(ca, spec, certPath, keyPath); err != nil {
			return is, err
		}
		is.NotAfter, is.Hosts = cert.NotAfter, hostsOf(cert)
	}
	if renew := exists && !p.now().Before(cert.NotAfter.Add(-RenewBefore)); !exists || renew {
		// A renewal keeps the checked hosts (a superset of those asked).
		if renew && spec.hosts != nil {
			spec.hosts = is.Hosts
		}
		if cert, err = p.issue(ca, spec, certPath, keyPath, renew); err != nil {
			return is, err
		}
		is.Created, is.Renewed, is.NotAfter = !renew, renew, cert.NotAfter
	}
	// The copy of the CA certificate is derived, public data: refreshed
	// whenever it differs.
	caCopy := filepath.Join(dir, CAFile)
	if old, err := os.ReadFile(caCopy); err != nil || !bytes.Equal(old, ca.pem) {
		if err := writeFileAtomic(caCopy, ca.pem, 0o644, true); err != nil {
			return is, err
		}
	}
	return is, nil
}

// issue makes a key and certificate for spec; replace overwrites existing
// files (a renewal), otherwise they must be absent.
func (p PKI) issue(ca *authority, spec leafSpec, certPath, keyPath string, replace bool) (*x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := p.now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(LeafValidity),
		// ECDSA keys sign; they never encipher keys.
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	if spec.hosts != nil {
		tmpl.Subject = pkix.Name{Organization: []string{"Arbiter"}, CommonName: spec.hosts[0]}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range spec.hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	} else {
		tmpl.Subject = pkix.Name{Organization: []string{"Arbiter"}, CommonName: spec.name}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	if err := writePair(certPath, keyPath, der, key, replace); err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// checkLeaf verifies an existing certificate before keeping (or renewing)
// it: its key, its CA and what it is for. A certificate that does not fit
// is an error that says how to reissue it, never silently replaced. Its
// end date is not checked here: the caller renews it.
func (p PKI) checkLeaf(ca *authority, spec leafSpec, certPath, keyPath string) (*x509.Certificate, error) {
	pair, err := loadPair(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	cert := pair.Leaf
	reissue := fmt.Sprintf("remove %s and %s to issue a new one", certPath, keyPath)
	usage := x509.ExtKeyUsageClientAuth
	if spec.hosts != nil {
		usage = x509.ExtKeyUsageServerAuth
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	// Verified at a moment inside its own validity, which the CA's covers
	// (the CA is checked for expiry when loaded).
	at := cert.NotBefore.Add(time.Second)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return nil, fmt.Errorf("%s certificate %s does not verify against the CA %s: %v; %s", spec.what, certPath, filepath.Join(p.Dir, CAFile), err, reissue)
	}
	for _, h := range spec.hosts {
		if err := cert.VerifyHostname(h); err != nil {
			return nil, fmt.Errorf("%s certificate %s does not cover host %s (it covers %s): %s", spec.what, certPath, apierr.Q(h), strings.Join(hostsOf(cert), ","), reissue)
		}
	}
	if spec.name != "" && cert.Subject.CommonName != spec.name {
		return nil, fmt.Errorf("%s certificate %s is named %s: %s", spec.what, certPath, apierr.Q(cert.Subject.CommonName), reissue)
	}
	return cert, nil
}

func hostsOf(c *x509.Certificate) []string {
	hosts := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	return hosts
}

// pairExists reports whether both files exist; one without the other is
// an error (an interrupted run, or a file removed by hand).
func pairExists(certPath, keyPath string) (bool, error) {
	c, err := exists(certPath)
	if err != nil {
		return false, err
	}
	k, err := exists(keyPath)
	if err != nil {
		return false, err
	}
	switch {
	case c && !k:
		return false, fmt.Errorf("%s exists without its key %s: remove it to issue a new pair", certPath, keyPath)
	case k && !c:
		return false, fmt.Errorf("%s exists without its certificate %s: remove it to issue a new pair", keyPath, certPath)
	}
	return c, nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

func loadPair(certPath, keyPath string) (tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s / %s: %w", certPath, keyPath, err)
	}
	return pair, nil
}

// writePair writes the key (0600) before the certificate (0644), each
// atomically, and only if absent unless replace.
func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey, replace bool) error {
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	if err := writeFileAtomic(keyPath, keyPEM, 0o600, replace); err != nil {
		return err
	}
	return writeFileAtomic(certPath, pemCert(der), 0o644, replace)
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// writeFileAtomic writes data through a temporary file in the same
// directory, so a reader never sees half a key. Without replace the file
// is created only if absent (a hard link fails on an existing name), so
// two runs at once cannot both issue the same file.
func writeFileAtomic(path string, data []byte, mode os.FileMode, replace bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if replace {
		return os.Rename(tmp.Name(), path)
	}
	err = os.Link(tmp.Name(), path)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s appeared while it was being issued (another run at the same time?): run again", path)
	}
	if err != nil {
		// A file system without hard links: the check and the rename are
		// then two steps, which only a second run at the same moment races.
		if ok, serr := exists(path); serr != nil || ok {
			return fmt.Errorf("%s appeared while it was being issued (another run at the same time?): run again", path)
		}
		return os.Rename(tmp.Name(), path)
	}
	return nil
}

func newSerial() (*big.Int, error) {
	// 128 random bits, as the CA/Browser baseline asks (at least 64).
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	// A serial must be positive; the top bit set keeps its length fixed.
	return n.SetBit(n, 127, 1), nil
}
