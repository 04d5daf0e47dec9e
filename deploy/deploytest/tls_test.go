package deploytest

// The security invariants of every shipped deployment, checked against the
// certificates the real binary makes:
//
//   - no coordinator listens without --tls-cert and --tls-key;
//   - every connection to a coordinator (workers, health checks) uses TLS
//     (--ca or --tls) and a --server-name that the coordinator's
//     certificate, as the shipped or documented `arbiter certs init` makes
//     it, is valid for, checked with crypto/x509;
//   - every compose worker is its own identity: its own client certificate
//     (CN = --name), no token, and no access to another worker's key or the
//     CA key; every Kubernetes worker pool its own token Secret, never the
//     coordinator's admin token, and no access to the coordinator's key;
//   - no token on any command line;
//   - every file a flag names is inside a volume mounted in that container,
//     and a certificate flag names a file `arbiter certs init` really makes
//     there.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// pathFlags are the flags whose value is a file or directory in the
// container.
var pathFlags = []string{"tls-cert", "tls-key", "tls-client-ca", "ca", "cert", "key", "token-file", "data", "dir"}

// certsInit runs the real `arbiter certs init` with args (a shipped or
// documented command line) in a fresh directory instead of its --dir, and
// returns that directory and the --host list.
func certsInit(t *testing.T, args []string) (dir string, hosts []string) {
	t.Helper()
	if len(args) < 2 || args[0] != "certs" || args[1] != "init" {
		t.Fatalf("not a certs init command: %q", args)
	}
	dir = filepath.Join(t.TempDir(), "pki")
	run := []string{"certs", "init", "--dir=" + dir}
	for _, a := range args[2:] {
		if strings.HasPrefix(a, "--dir=") {
			continue
		}
		if h, ok := strings.CutPrefix(a, "--host="); ok {
			hosts = append(hosts, strings.Split(h, ",")...)
		}
		run = append(run, a)
	}
	if len(hosts) == 0 {
		t.Fatalf("certs init %q has no --host=", args)
	}
	out, err := exec.Command(arbiterBinary(t), run...).CombinedOutput()
	if err != nil {
		t.Fatalf("arbiter %s: %v\n%s", strings.Join(run, " "), err, out)
	}
	return dir, hosts
}

func loadCertFile(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		t.Fatalf("%s: no PEM certificate", file)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

func certPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		t.Fatalf("%s: no PEM certificate", file)
	}
	return p
}

// checkServerName: a client trusting caFile accepts the coordinator's
// certificate certFile for serverName.
func checkServerName(t *testing.T, where, certFile, caFile, serverName string) {
	t.Helper()
	c := loadCertFile(t, certFile)
	if _, err := c.Verify(x509.VerifyOptions{Roots: certPool(t, caFile), DNSName: serverName}); err != nil {
		t.Errorf("%s: --server-name=%s: the coordinator's certificate does not verify for it: %v", where, serverName, err)
	}
}

// ---- compose ----

// composeMountedFile maps a path in service s's container to the file on
// the test's copy of the certs volume (pki), through the mount that holds
// it. It returns "" for a path on another volume, and fails the test for
// a path on no volume at all.
func composeMountedFile(t *testing.T, s types.ServiceConfig, flag, p, pki string) string {
	t.Helper()
	var best *types.ServiceVolumeConfig
	for i := range s.Volumes {
		m := &s.Volumes[i]
		if (p == m.Target || strings.HasPrefix(p, m.Target+"/")) && (best == nil || len(m.Target) > len(best.Target)) {
			best = m
		}
	}
	if best == nil {
		for _, tmp := range s.Tmpfs {
			if p == tmp || strings.HasPrefix(p, tmp+"/") {
				return ""
			}
		}
		t.Errorf("%s: --%s=%s is in no mounted volume (the root file system is read-only and the image has no such file)", s.Name, flag, p)
		return ""
	}
	if best.Type != types.VolumeTypeVolume || best.Source != "certs" {
		return ""
	}
	sub := ""
	if best.Volume != nil {
		sub = best.Volume.Subpath
	}
	file := filepath.Join(pki, filepath.FromSlash(sub), filepath.FromSlash(strings.TrimPrefix(p, best.Target)))
	if _, err := os.Stat(file); err != nil {
		t.Errorf("%s: --%s=%s: `certs init` makes no such file in the certs volume (%s)", s.Name, flag, p, path.Join(sub, strings.TrimPrefix(p, best.Target)))
		return ""
	}
	return file
}

func TestComposeTLS(t *testing.T) {
	p, err := loadCompose(t, filepath.Join(deployDir(t), "compose.yaml"), []string{"ARBITER_TOKEN=" + testToken})
	if err != nil {
		t.Fatal(err)
	}
	certsSvc, ok := p.Services["certs"]
	if !ok {
		t.Fatal("compose.yaml has no certs service")
	}
	dir, _ := flagValue(certsSvc.Command, "dir")
	if m := findMount(certsSvc, dir); m == nil || m.Type != types.VolumeTypeVolume || m.Source != "certs" || m.ReadOnly || (m.Volume != nil && m.Volume.Subpath != "") {
		t.Errorf("certs --dir=%s is not the whole certs volume, writable: %+v", dir, m)
	}
	pki, hosts := certsInit(t, certsSvc.Command)

	// Every arbiter command line: its path flags resolved into the certs
	// volume; no token on it.
	files := map[string]map[string]string{} // service → flag → file in pki
	for _, s := range p.Services {
		if s.Image != certsSvc.Image {
			continue
		}
		files[s.Name] = map[string]string{}
		for _, args := range commandLines(s) {
			for _, f := range pathFlags {
				if v, ok := flagValue(args, f); ok {
					files[s.Name][f] = composeMountedFile(t, s, f, v, pki)
				}
			}
		}
	}

	coord := p.Services["coordinator"]
	t.Run("coordinator serves TLS and mTLS", func(t *testing.T) {
		for _, f := range []string{"tls-cert", "tls-key", "tls-client-ca"} {
			if files["coordinator"][f] == "" {
				t.Fatalf("coordinator has no --%s in the certs volume: %q", f, coord.Command)
			}
		}
		if _, err := tls.LoadX509KeyPair(files["coordinator"]["tls-cert"], files["coordinator"]["tls-key"]); err != nil {
			t.Errorf("coordinator --tls-cert/--tls-key: %v", err)
		}
	})

	// Every connection to the coordinator: the workers' and the
	// healthcheck's.
	type client struct {
		where string
		svc   string
		args  []string
	}
	var clients []client
	for _, s := range p.Services {
		for i, args := range commandLines(s) {
			if _, ok := flagValue(args, "coordinator"); ok {
				where := s.Name
				if i > 0 {
					where += " healthcheck"
				}
				clients = append(clients, client{where, s.Name, args})
			}
		}
	}
	if len(clients) < 3 {
		t.Errorf("%d connections to the coordinator found, want the healthcheck and two workers", len(clients))
	}
	t.Run("clients use TLS and the certificate's name", func(t *testing.T) {
		for _, c := range clients {
			name, ok := flagValue(c.args, "server-name")
			if !ok || !slices.Contains(hosts, name) {
				t.Errorf("%s: --server-name=%q, want one of the certs init hosts %v", c.where, name, hosts)
			}
			ca := files[c.svc]["ca"]
			if ca == "" {
				t.Errorf("%s: no --ca in the certs volume: it would not trust the farm's CA", c.where)
				continue
			}
			if ok {
				checkServerName(t, c.where, files["coordinator"]["tls-cert"], ca, name)
			}
		}
	})

	workers := composeWorkers(p)
	t.Run("every worker its own identity", func(t *testing.T) {
		seen := map[string]string{}
		for _, w := range workers {
			cert, key := files[w.Name]["cert"], files[w.Name]["key"]
			if cert == "" || key == "" {
				t.Errorf("%s: no --cert/--key in the certs volume", w.Name)
				continue
			}
			if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
				t.Errorf("%s --cert/--key: %v", w.Name, err)
			}
			c := loadCertFile(t, cert)
			name, _ := flagValue(w.Command, "name")
			if c.Subject.CommonName != name {
				t.Errorf("%s: certificate of %q, --name=%s: want its own", w.Name, c.Subject.CommonName, name)
			}
			if other, dup := seen[c.Subject.CommonName]; dup {
				t.Errorf("%s and %s share the identity cert:%s: they could not verify each other", w.Name, other, c.Subject.CommonName)
			}
			seen[c.Subject.CommonName] = w.Name
			if ca := files["coordinator"]["tls-client-ca"]; ca == "" {
				t.Errorf("%s: the coordinator has no --tls-client-ca to check its certificate", w.Name)
			} else if _, err := c.Verify(x509.VerifyOptions{Roots: certPool(t, ca),
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("%s: its certificate does not verify against the coordinator's --tls-client-ca: %v", w.Name, err)
			}
		}
	})

	t.Run("keys reach only their owner", func(t *testing.T) {
		// Only the certs service mounts the CA key; each other container
		// sees one private key at most, its own.
		for _, s := range p.Services {
			if s.Name == certsSvc.Name {
				continue
			}
			for _, m := range s.Volumes {
				if m.Type != types.VolumeTypeVolume || m.Source != "certs" {
					continue
				}
				if !m.ReadOnly {
					t.Errorf("%s mounts the certs volume writable", s.Name)
				}
				sub := ""
				if m.Volume != nil {
					sub = m.Volume.Subpath
				}
				var keys []string
				filepath.WalkDir(filepath.Join(pki, filepath.FromSlash(sub)), func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.HasSuffix(p, "key.pem") {
						keys = append(keys, p)
					}
					return err
				})
				own := []string{files[s.Name]["key"], files[s.Name]["tls-key"]}
				for _, k := range keys {
					if !slices.Contains(own, k) {
						rel, _ := filepath.Rel(pki, k)
						t.Errorf("%s can read %s, a key that is not its own (mount subpath %q)", s.Name, rel, sub)
					}
				}
			}
		}
	})
}

// ---- Kubernetes ----

var (
	certsInitLineRE = regexp.MustCompile(`arbiter certs init (.*)`)
	fromFileRE      = regexp.MustCompile(`--from-file=([a-z.]+)=pki/(\S+)`)
)

// documentedPKI reads the `arbiter certs init` and `kubectl create secret
// generic arbiter-tls --from-file=KEY=pki/FILE` commands that file's
// comments tell the user to run, runs the first, and returns the Secret's
// keys mapped to the files made.
func documentedPKI(t *testing.T, file string) (secret map[string]string, hosts []string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := certsInitLineRE.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("%s: no `arbiter certs init` command in its comments", file)
	}
	args := []string{"certs", "init"}
	fields := strings.Fields(m[1])
	for i := 0; i < len(fields); i++ {
		switch f := fields[i]; {
		case (f == "--dir" || f == "--host") && i+1 < len(fields):
			args = append(args, f+"="+fields[i+1])
			i++
		default:
			args = append(args, f)
		}
	}
	pki, hosts := certsInit(t, args)
	secret = map[string]string{}
	for _, m := range fromFileRE.FindAllStringSubmatch(string(b), -1) {
		secret[m[1]] = filepath.Join(pki, filepath.FromSlash(m[2]))
	}
	for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if secret[k] == "" {
			t.Fatalf("%s: the documented `kubectl create secret generic arbiter-tls` has no --from-file=%s=pki/...", file, k)
		}
	}
	return secret, hosts
}

// podSecretFile maps a path in container c to the key of the Secret
// volume mounted there; it fails the test for a path in no volume.
func podSecretFile(t *testing.T, where string, pod corev1.PodSpec, c corev1.Container, flag, p string) (secretName, key string) {
	t.Helper()
	var best *corev1.VolumeMount
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		if (p == m.MountPath || strings.HasPrefix(p, m.MountPath+"/")) && (best == nil || len(m.MountPath) > len(best.MountPath)) {
			best = m
		}
	}
	if best == nil {
		t.Errorf("%s: --%s=%s is in no mounted volume", where, flag, p)
		return "", ""
	}
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == best.Name {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil {
		t.Errorf("%s: mount %s names no pod volume", where, best.Name)
		return "", ""
	}
	if vol.Secret == nil {
		return "", ""
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, best.MountPath), "/")
	if len(vol.Secret.Items) == 0 {
		return vol.Secret.SecretName, rel
	}
	for _, it := range vol.Secret.Items {
		if it.Path == rel {
			return vol.Secret.SecretName, it.Key
		}
	}
	t.Errorf("%s: --%s=%s: the Secret volume %s projects no item at %s", where, flag, p, vol.Name, rel)
	return "", ""
}

// tlsSecret is the Secret the documented kubectl command makes (outside
// kustomize, so that no key is in git).
const tlsSecret = "arbiter-tls"

func TestKustomizeTLS(t *testing.T) {
	for _, c := range []struct{ dir, doc string }{
		{"base", "base/coordinator-deployment.yaml"},
		{"overlays/example", "overlays/example/kustomization.yaml"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			r := render(t, c.dir)
			secret, hosts := documentedPKI(t, filepath.Join(deployDir(t), "kubernetes", filepath.FromSlash(c.doc)))
			checkKubernetesTLS(t, r, secret, hosts)
		})
	}
}

func checkKubernetesTLS(t *testing.T, r *rendered, secret map[string]string, hosts []string) {
	coord := byComponent(t, r.deployments, "coordinator")
	if coord == nil {
		t.FailNow()
	}
	var svc *corev1.Service
	for _, s := range r.services {
		if s.Spec.Selector[componentLabel] == "coordinator" {
			svc = s
		}
	}
	if svc == nil {
		t.Fatal("no coordinator Service")
	}
	if !slices.Contains(hosts, svc.Name) {
		t.Errorf("documented certs init --host %v lacks the Service name %s", hosts, svc.Name)
	}

	// files maps a path flag of a Deployment to the documented file, for
	// flags on the TLS Secret.
	files := func(d *appsv1.Deployment) map[string]string {
		pod := d.Spec.Template.Spec
		c := pod.Containers[0]
		out := map[string]string{}
		for _, f := range pathFlags {
			v, ok := flagValue(c.Args, f)
			if !ok {
				continue
			}
			name, key := podSecretFile(t, "Deployment "+d.Name, pod, c, f, v)
			switch {
			case name == tlsSecret && secret[key] != "":
				out[f] = secret[key]
			case name == tlsSecret:
				t.Errorf("%s --%s=%s: key %s is not in the documented Secret %s", d.Name, f, v, key, tlsSecret)
			case name != "":
				t.Errorf("%s --%s=%s: on Secret %s, want %s", d.Name, f, v, name, tlsSecret)
			}
		}
		// The TLS Secret is never optional: a pod without it must wait,
		// not run in clear or without trust.
		for _, v := range pod.Volumes {
			if v.Secret != nil && v.Secret.SecretName == tlsSecret && v.Secret.Optional != nil && *v.Secret.Optional {
				t.Errorf("%s: the %s volume is optional", d.Name, tlsSecret)
			}
		}
		return out
	}

	cf := files(coord)
	for _, f := range []string{"tls-cert", "tls-key", "tls-client-ca"} {
		if cf[f] == "" {
			t.Fatalf("coordinator has no --%s on the Secret %s: %q", f, tlsSecret, coord.Spec.Template.Spec.Containers[0].Args)
		}
	}
	if _, err := tls.LoadX509KeyPair(cf["tls-cert"], cf["tls-key"]); err != nil {
		t.Errorf("coordinator --tls-cert/--tls-key as documented: %v", err)
	}

	coordToken := tokenSecret(coord)
	workerTokens := map[string]string{}
	for _, w := range workerDeployments(r) {
		c := w.Spec.Template.Spec.Containers[0]
		wf := files(w)
		name, ok := flagValue(c.Args, "server-name")
		if !ok || name != svc.Name {
			t.Errorf("%s --server-name=%q, want the Service name %s", w.Name, name, svc.Name)
		}
		if wf["ca"] == "" {
			t.Errorf("%s: no --ca on the Secret %s: it would not trust the farm's CA", w.Name, tlsSecret)
		} else if ok {
			checkServerName(t, w.Name, cf["tls-cert"], wf["ca"], name)
		}
		// The workers get the CA certificate only.
		for _, v := range w.Spec.Template.Spec.Volumes {
			if v.Secret == nil || v.Secret.SecretName != tlsSecret {
				continue
			}
			if len(v.Secret.Items) == 0 {
				t.Errorf("%s mounts all of %s, the coordinator's key included: project ca.crt only", w.Name, tlsSecret)
			}
			for _, it := range v.Secret.Items {
				if it.Key != "ca.crt" {
					t.Errorf("%s mounts %s's %s: workers need ca.crt only", w.Name, tlsSecret, it.Key)
				}
			}
		}
		// Every pool its own worker credential, never the admin's.
		tok := tokenSecret(w)
		if tok == "" {
			t.Errorf("%s: no token Secret", w.Name)
			continue
		}
		if tok == coordToken {
			t.Errorf("%s uses the coordinator's bootstrap admin token %s: give it a worker credential", w.Name, tok)
		}
		if other, dup := workerTokens[tok]; dup {
			t.Errorf("%s and %s share the token Secret %s: one identity cannot verify its own units", w.Name, other, tok)
		}
		workerTokens[tok] = w.Name
	}
	for _, d := range r.deployments {
		if _, ok := flagValue(d.Spec.Template.Spec.Containers[0].Args, "token"); ok {
			t.Errorf("%s: --token on the command line", d.Name)
		}
	}
}

// tokenSecret is the Secret a Deployment's ARBITER_TOKEN comes from.
func tokenSecret(d *appsv1.Deployment) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "ARBITER_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef.Name
		}
	}
	return ""
}
