// Package obs is the HTTP face every Arbiter process shares: a Prometheus
// registry with the Go runtime and process collectors, and a handler for
// /metrics, /healthz (the process is alive) and /readyz (it is ready for
// work). Each process builds its own registry: there is no global one.
package obs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// NewRegistry returns a registry with the Go runtime and process collectors
// registered (go_*, process_*).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// ReadyFunc reports why a process is not ready for work, or nil when it
// is. A Ready error is a success that says more than "ready" (a
// coordinator's role).
type ReadyFunc func() error

// Ready is what a ReadyFunc returns to be ready and say what as.
type Ready string

func (r Ready) Error() string { return string(r) }

// Handler serves /metrics from g, /healthz (always 200 while the process
// serves HTTP) and /readyz (200 when ready() is nil, else 503 with the
// reason). A nil ready is always ready.
func Handler(g prometheus.Gatherer, ready ReadyFunc) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ready != nil {
			err := ready()
			var as Ready
			if errors.As(err, &as) {
				fmt.Fprintln(w, "ready:", as)
				return
			}
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "not ready:", err)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	if g != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	}
	return mux
}

// Server is an HTTP server started by Serve.
type Server struct {
	srv  *http.Server
	addr string
}

// Serve listens on addr and serves h in the background.
func Serve(addr string, h http.Handler, log *zap.Logger) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, addr: lis.Addr().String()}
	go func() {
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) && log != nil {
			log.Error("http serve", zap.String("addr", s.addr), zap.Error(err))
		}
	}()
	if log != nil {
		log.Info("http listening", zap.String("addr", s.addr))
	}
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// Close shuts the server down, waiting up to two seconds for requests.
func (s *Server) Close() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
}
