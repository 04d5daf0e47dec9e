package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/monitoring"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// up --prometheus: a Prometheus of up's own, scraping its coordinator
// (whose /metrics carries its local workers' too, label worker) with the
// shipped alert rules, its TSDB under up's data directory, stopped with up.

// promDefault is --prometheus's value when given without one: Debian's
// package's binary on PATH.
const promDefault = "prometheus"

// prometheus is a running Prometheus of up.
type prometheus struct {
	cmd  *exec.Cmd
	URL  string
	done chan error
}

// promBinary resolves --prometheus's PATH, or says what is wrong with it.
func promBinary(path string) (string, error) {
	bin, err := exec.LookPath(path)
	if err == nil {
		return bin, nil
	}
	if path == promDefault {
		return "", usageError("--prometheus: no prometheus on PATH (apt-get install prometheus, or give --prometheus=PATH)")
	}
	return "", usageError("--prometheus=%s: not an executable Prometheus (%v); apt-get install prometheus, or give its path", apierr.Q(path), errors.Unwrap(err))
}

// freeLoopback is a free port on 127.0.0.1, as host:port.
func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// loopbackTarget is HTTP address addr as this machine reaches it.
func loopbackTarget(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || (host != "" && !net.ParseIP(host).IsUnspecified()) {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// startPrometheus writes the configuration and the alert rules under
// data/prometheus, starts bin on listen scraping target, and waits until
// it is ready.
func startPrometheus(ctx context.Context, bin, data, target, listen string, scrape time.Duration) (*prometheus, error) {
	dir := filepath.Join(data, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--prometheus: %w", err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), monitoring.Alerts, 0o644); err != nil {
		return nil, fmt.Errorf("--prometheus: %w", err)
	}
	if err := os.WriteFile(cfg, []byte(monitoring.Config(target, "alerts.yml", scrape)), 0o644); err != nil {
		return nil, fmt.Errorf("--prometheus: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, fmt.Errorf("--prometheus: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen, "--storage.tsdb.retention.time=7d")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = engineproc.ChildAttr() // no Prometheus outlives an up killed with SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--prometheus %s: %w", bin, err)
	}
	p := &prometheus{cmd: cmd, URL: "http://" + listen + "/", done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	if err := p.waitReady(ctx, 30*time.Second); err != nil {
		p.Stop()
		return nil, fmt.Errorf("--prometheus %s: %w (its log: %s)", bin, err, logf.Name())
	}
	return p, nil
}

// waitReady waits for /-/ready, or the process's end, or timeout.
func (p *prometheus) waitReady(ctx context.Context, timeout time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	for t0 := time.Now(); time.Since(t0) < timeout; time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := hc.Get(p.URL + "-/ready")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("not ready after %s", timeout)
}

// Stop asks Prometheus to end (it flushes its TSDB), and kills it after
// ten seconds or where no interrupt can be sent.
func (p *prometheus) Stop() {
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}
