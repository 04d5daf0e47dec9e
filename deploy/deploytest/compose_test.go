package deploytest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

const testToken = "compose-test-token"

// loadCompose loads a compose file the way `docker compose` does: schema
// validation (unknown keys fail), interpolation from env only (not the OS
// environment or a .env file, so the test is hermetic), consistency checks,
// paths resolved against the file's folder.
func loadCompose(t *testing.T, file string, env []string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(filepath.Dir(file)),
		cli.WithEnv(env),
		cli.WithInterpolation(true),
		cli.WithConsistency(true),
		cli.WithResolvedPaths(true),
		cli.WithNormalization(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

func TestCompose(t *testing.T) {
	file := filepath.Join(deployDir(t), "compose.yaml")
	p, err := loadCompose(t, file, []string{"ARBITER_TOKEN=" + testToken})
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if p.Name != "arbiter" {
		t.Errorf("project name %q, want arbiter", p.Name)
	}
	for _, name := range []string{"certs", "coordinator", "worker-1", "worker-2", "prometheus", "grafana"} {
		if _, ok := p.Services[name]; !ok {
			t.Fatalf("compose.yaml has no service %q", name)
		}
	}
	for _, v := range []string{"coordinator-data", "certs", "prometheus-data", "grafana-data"} {
		if _, ok := p.Volumes[v]; !ok {
			t.Errorf("named volume %q not declared", v)
		}
	}
	coord := p.Services["coordinator"]
	workers := composeWorkers(p)
	if len(workers) < 2 {
		t.Fatalf("%d worker services, want at least 2 (perft verification needs two identities)", len(workers))
	}

	t.Run("coordinator", func(t *testing.T) {
		checkArgs(t, "compose coordinator", coord.Command)
		data, ok := flagValue(coord.Command, "data")
		if !ok {
			t.Fatalf("coordinator command has no --data")
		}
		if m := findMount(coord, data); m == nil || m.Type != types.VolumeTypeVolume || m.Source != "coordinator-data" {
			t.Errorf("--data=%s is not on the named volume coordinator-data: %+v", data, m)
		}
		checkHardened(t, coord)
		if hc := coord.HealthCheck; hc == nil || len(hc.Test) < 2 || hc.Test[0] != "CMD" || hc.Test[1] != "/arbiter" {
			t.Errorf("coordinator healthcheck %+v: want [CMD /arbiter ...] (the image has no shell)", hc)
		} else {
			checkArgs(t, "coordinator healthcheck", hc.Test[2:])
			listen, _ := flagValue(coord.Command, "listen")
			target, _ := flagValue(hc.Test[2:], "coordinator")
			if portOf(listen) != portOf(target) {
				t.Errorf("healthcheck dials %s, the coordinator listens on %s", target, listen)
			}
		}
		// gRPC published for remote workers; HTTP (unauthenticated
		// metrics) only on loopback.
		httpAddr, _ := flagValue(coord.Command, "http")
		for _, port := range coord.Ports {
			if port.Target == atoi(t, portOf(httpAddr)) && port.HostIP != "127.0.0.1" {
				t.Errorf("coordinator HTTP port %d published on %q, want 127.0.0.1", port.Target, port.HostIP)
			}
		}
	})

	t.Run("certs", func(t *testing.T) {
		certs := p.Services["certs"]
		checkArgs(t, "compose certs", certs.Command)
		if len(certs.Command) < 2 || certs.Command[1] != "init" {
			t.Errorf("certs command %q: want certs init ...", certs.Command)
		}
		if certs.Restart != "no" {
			t.Errorf("certs restart %q: want \"no\" (a one-shot)", certs.Restart)
		}
		if certs.Image != coord.Image {
			t.Errorf("certs image %q, coordinator image %q: want the same image", certs.Image, coord.Image)
		}
		checkHardened(t, certs)
		// Everything that uses the certificates starts after they exist.
		for _, s := range append([]types.ServiceConfig{coord}, workers...) {
			if dep, ok := s.DependsOn["certs"]; !ok || dep.Condition != types.ServiceConditionCompletedSuccessfully {
				t.Errorf("%s depends_on certs %+v: want condition service_completed_successfully", s.Name, dep)
			}
		}
	})

	t.Run("workers", func(t *testing.T) {
		listen, _ := flagValue(coord.Command, "listen")
		for _, w := range workers {
			checkArgs(t, "compose "+w.Name, w.Command)
			// One container per identity: scaling a service would run
			// two workers under one certificate and name.
			if w.Deploy != nil && w.Deploy.Replicas != nil && *w.Deploy.Replicas != 1 {
				t.Errorf("%s deploy.replicas = %d, want 1 (one container per certificate)", w.Name, *w.Deploy.Replicas)
			}
			dep, ok := w.DependsOn["coordinator"]
			if !ok || dep.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s depends_on coordinator %+v: want condition service_healthy", w.Name, dep)
			}
			if target, _ := flagValue(w.Command, "coordinator"); target != "coordinator:"+portOf(listen) {
				t.Errorf("%s --coordinator=%s, want coordinator:%s", w.Name, target, portOf(listen))
			}
			checkHardened(t, w)
		}
	})

	t.Run("token", func(t *testing.T) {
		v := coord.Environment["ARBITER_TOKEN"]
		if v == nil || *v != testToken {
			t.Errorf("coordinator: ARBITER_TOKEN = %v, want the value of $ARBITER_TOKEN", v)
		}
		// A worker's identity is its certificate: with a token as well,
		// the token would decide who it is.
		isWorker := map[string]bool{}
		for _, w := range workers {
			isWorker[w.Name] = true
			if _, ok := w.Environment["ARBITER_TOKEN"]; ok {
				t.Errorf("%s: has ARBITER_TOKEN; a compose worker is identified by its client certificate", w.Name)
			}
		}
		for _, s := range p.Services {
			for _, args := range commandLines(s) {
				if _, ok := flagValue(args, "token"); ok {
					t.Errorf("%s: token on the command line (visible in ps and docker inspect)", s.Name)
				}
				if _, ok := flagValue(args, "token-file"); ok && isWorker[s.Name] {
					t.Errorf("%s: --token-file on a worker; it is identified by its certificate", s.Name)
				}
			}
		}
		// Without the variable, compose refuses to start, naming it.
		_, err := loadCompose(t, file, nil)
		if err == nil || !strings.Contains(err.Error(), "ARBITER_TOKEN") {
			t.Errorf("loading without ARBITER_TOKEN: err = %v, want a required-variable error naming ARBITER_TOKEN", err)
		}
	})

	t.Run("prometheus", func(t *testing.T) {
		prom := p.Services["prometheus"]
		cfg := mountedFile(t, prom, "/etc/prometheus/prometheus.yml")
		rules := mountedFile(t, prom, "/etc/prometheus/alerts.yml")
		if cfg == "" || rules == "" {
			return
		}
		var pc struct {
			RuleFiles     []string `json:"rule_files"`
			ScrapeConfigs []struct {
				JobName       string `json:"job_name"`
				StaticConfigs []struct {
					Targets []string `json:"targets"`
				} `json:"static_configs"`
				DNSSDConfigs []struct {
					Names []string `json:"names"`
					Port  int      `json:"port"`
				} `json:"dns_sd_configs"`
			} `json:"scrape_configs"`
		}
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &pc); err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if !slices.Contains(pc.RuleFiles, filepath.Base(rules)) {
			t.Errorf("prometheus.yml rule_files %v does not load %s", pc.RuleFiles, filepath.Base(rules))
		}
		coordHTTP, _ := flagValue(coord.Command, "http")
		// Every worker serves HTTP on one port under the DNS alias worker,
		// so one DNS service-discovery job finds them all.
		workerHTTP, _ := flagValue(workers[0].Command, "http")
		for _, w := range workers {
			if h, _ := flagValue(w.Command, "http"); portOf(h) != portOf(workerHTTP) {
				t.Errorf("%s --http=%s, %s --http=%s: want one port", w.Name, h, workers[0].Name, workerHTTP)
			}
			if n := w.Networks["default"]; n == nil || !slices.Contains(n.Aliases, "worker") {
				t.Errorf("%s has no network alias worker on the default network: Prometheus's DNS job would not find it", w.Name)
			}
		}
		var sawCoord, sawWorker bool
		for _, sc := range pc.ScrapeConfigs {
			switch sc.JobName {
			case "arbiter-coordinator":
				for _, s := range sc.StaticConfigs {
					sawCoord = sawCoord || slices.Contains(s.Targets, "coordinator:"+portOf(coordHTTP))
				}
			case "arbiter-worker":
				for _, d := range sc.DNSSDConfigs {
					sawWorker = sawWorker || (slices.Contains(d.Names, "worker") && uint32(d.Port) == atoi(t, portOf(workerHTTP)))
				}
			}
		}
		if !sawCoord {
			t.Errorf("prometheus.yml: job arbiter-coordinator does not scrape coordinator:%s", portOf(coordHTTP))
		}
		if !sawWorker {
			t.Errorf("prometheus.yml: job arbiter-worker does not scrape every worker (DNS name worker) on port %s", portOf(workerHTTP))
		}
	})

	t.Run("grafana", func(t *testing.T) {
		g := p.Services["grafana"]
		ds := mountedFile(t, g, "/etc/grafana/provisioning/datasources")
		dp := mountedFile(t, g, "/etc/grafana/provisioning/dashboards")
		if ds == "" || dp == "" {
			return
		}
		var dsf struct {
			APIVersion  int `json:"apiVersion"`
			Datasources []struct {
				UID, Type, URL string
			} `json:"datasources"`
		}
		readYAMLFiles(t, ds, &dsf, func() {
			for _, d := range dsf.Datasources {
				if d.Type != "prometheus" || d.UID != "prometheus" || d.URL != "http://prometheus:9090" {
					t.Errorf("datasource %+v: want type prometheus, uid prometheus, url http://prometheus:9090", d)
				}
			}
		})
		var dpf struct {
			Providers []struct {
				Type    string
				Options struct {
					Path string
				}
			} `json:"providers"`
		}
		readYAMLFiles(t, dp, &dpf, func() {
			for _, pr := range dpf.Providers {
				m := findMount(g, pr.Options.Path)
				if pr.Type != "file" || m == nil || m.Source != filepath.Join(repoRoot(t), "dashboards") || !m.ReadOnly {
					t.Errorf("dashboard provider %+v: want a file provider on the repo's dashboards/ mounted read-only", pr)
				}
			}
		})
	})

	t.Run("bind mounts exist", func(t *testing.T) {
		for _, s := range p.Services {
			for _, v := range s.Volumes {
				if v.Type != types.VolumeTypeBind {
					continue
				}
				if v.Source == filepath.Join(repoRoot(t), "dashboards") {
					if _, err := os.Stat(v.Source); os.IsNotExist(err) {
						t.Run("dashboards", func(t *testing.T) {
							t.Skipf("%s: dashboards/ is not in the repository yet (issue 7, dashboards half)", s.Name)
						})
						continue
					}
				}
				if !strings.HasPrefix(v.Source, repoRoot(t)+string(filepath.Separator)) {
					t.Errorf("%s: bind mount %s is outside the repository", s.Name, v.Source)
				}
				if _, err := os.Stat(v.Source); err != nil {
					t.Errorf("%s: bind mount source: %v", s.Name, err)
				}
				if !v.ReadOnly {
					t.Errorf("%s: bind mount %s is writable; config mounts are read-only", s.Name, v.Source)
				}
			}
		}
	})
}

// TestComposeStrict proves the loader is strict: a misspelt key fails.
func TestComposeStrict(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir(t), "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "    stop_grace_period: 15s\n", "    stop_grace_period: 15s\n    stop_grace_periode: 15s\n", 1)
	if bad == string(b) {
		t.Fatal("could not inject the unknown key")
	}
	file := filepath.Join(t.TempDir(), "compose.yaml")
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loadCompose(t, file, []string{"ARBITER_TOKEN=" + testToken})
	if err == nil || !strings.Contains(err.Error(), "stop_grace_periode") {
		t.Errorf("unknown key: err = %v, want a validation error naming it", err)
	}
}

// composeWorkers returns the services that run `arbiter worker`, by name.
func composeWorkers(p *types.Project) []types.ServiceConfig {
	var ws []types.ServiceConfig
	for _, s := range p.Services {
		if len(s.Command) > 0 && s.Command[0] == "worker" {
			ws = append(ws, s)
		}
	}
	slices.SortFunc(ws, func(a, b types.ServiceConfig) int { return strings.Compare(a.Name, b.Name) })
	return ws
}

// commandLines are the arbiter command lines of a service: its command and
// its healthcheck's (after CMD /arbiter).
func commandLines(s types.ServiceConfig) [][]string {
	lines := [][]string{s.Command}
	if hc := s.HealthCheck; hc != nil && len(hc.Test) > 2 && hc.Test[0] == "CMD" && hc.Test[1] == "/arbiter" {
		lines = append(lines, hc.Test[2:])
	}
	return lines
}

func findMount(s types.ServiceConfig, target string) *types.ServiceVolumeConfig {
	for i := range s.Volumes {
		if s.Volumes[i].Target == target {
			return &s.Volumes[i]
		}
	}
	return nil
}

// mountedFile returns the host path bind-mounted at target, failing if none.
func mountedFile(t *testing.T, s types.ServiceConfig, target string) string {
	t.Helper()
	m := findMount(s, target)
	if m == nil || m.Type != types.VolumeTypeBind {
		t.Errorf("%s: nothing bind-mounted at %s", s.Name, target)
		return ""
	}
	return m.Source
}

// readYAMLFiles decodes each *.yaml in dir into v and calls check.
func readYAMLFiles(t *testing.T, dir string, v any, check func()) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		t.Errorf("%s: no *.yaml provisioning file", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		check()
	}
}

// checkHardened: the arbiter containers run as the image's non-root user
// with a read-only root file system and no capabilities.
func checkHardened(t *testing.T, s types.ServiceConfig) {
	t.Helper()
	if !s.ReadOnly {
		t.Errorf("%s: read_only is not set", s.Name)
	}
	if uid, _, _ := strings.Cut(s.User, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("%s: user %q, want a numeric non-root uid", s.Name, s.User)
	}
	if !slices.Contains(s.CapDrop, "ALL") {
		t.Errorf("%s: cap_drop %v, want ALL", s.Name, s.CapDrop)
	}
}

func atoi(t *testing.T, s string) uint32 {
	t.Helper()
	var n uint32
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("port %q is not a number", s)
		}
		n = n*10 + uint32(c-'0')
	}
	return n
}
