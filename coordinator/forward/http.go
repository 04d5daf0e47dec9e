package forward

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

type leaderHTTPKey struct{}

// HTTP relays pages and JSON API requests to the leader's HTTP address,
// bodies streamed (live pages flush as the leader writes). unavailable
// answers when there is no leader to relay to, or it does not answer.
func (f *Forwarder) HTTP(unavailable func(w http.ResponseWriter, r *http.Request, why error)) http.Handler {
	rp := &httputil.ReverseProxy{
		// Rewrite (rather than Director) drops the X-Forwarded-* headers
		// the caller sent; the ones a proxy the operator trusts
		// (--trusted-proxy) set in front of this coordinator are put back
		// as they came, so the leader, which trusts the same proxies,
		// sees them as this coordinator would have. Anyone else's are
		// the caller's claims about itself and do not travel.
		Rewrite: func(pr *httputil.ProxyRequest) {
			addr, _ := pr.In.Context().Value(leaderHTTPKey{}).(string)
			pr.SetURL(&url.URL{Scheme: "http", Host: addr})
			pr.Out.Host = pr.In.Host
			if f.proxies().Trusted(pr.In.RemoteAddr) {
				for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host"} {
					if v := pr.In.Header.Values(h); len(v) > 0 {
						pr.Out.Header[h] = v
					}
				}
			}
			pr.Out.Header.Set(Header, f.cfg.Signer.Sign(Origin{Addr: pr.In.RemoteAddr}))
		},
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: time.Minute,
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the caller left
			}
			unavailable(w, r, fmt.Errorf("the leader did not answer: %w", err))
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := f.cfg.Signer.Verify(r.Header.Get(Header)); ok {
			f.m.calls.WithLabelValues("http", "refused").Inc()
			unavailable(w, r, fmt.Errorf("forwarded here by another coordinator whose view of the leader is stale"))
			return
		}
		l, ok := f.waitLeaderHTTP(r.Context())
		if !ok {
			f.m.calls.WithLabelValues("http", "refused").Inc()
			unavailable(w, r, errNoLeader)
			return
		}
		release, err := f.acquire()
		if err != nil {
			f.m.calls.WithLabelValues("http", "refused").Inc()
			unavailable(w, r, fmt.Errorf("this coordinator already forwards %d calls (--forward-max-calls)", f.cfg.MaxCalls))
			return
		}
		defer release()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		rp.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), leaderHTTPKey{}, l.HTTP)))
		f.m.calls.WithLabelValues("http", httpClass(sw.code)).Inc()
	})
}

// waitLeaderHTTP waits up to MaxWait for a leader that has advertised
// its HTTP address (a takeover in progress).
func (f *Forwarder) waitLeaderHTTP(ctx context.Context) (Leader, bool) {
	deadline := time.Now().Add(f.cfg.MaxWait)
	for {
		l := f.cfg.Leader()
		if l.HTTP != "" {
			return l, true
		}
		if time.Now().After(deadline) {
			return l, false
		}
		select {
		case <-ctx.Done():
			return l, false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Trust is the leader's side of HTTP: a request whose Header a follower
// signed is served as if it came from the caller the follower saw (its
// RemoteAddr); the header is removed either way, so that a caller that
// sets it gets nothing from it.
func Trust(s *Signer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(Header)
		if v == "" {
			next.ServeHTTP(w, r)
			return
		}
		o, ok := s.Verify(v)
		r = r.Clone(r.Context())
		r.Header.Del(Header)
		if ok {
			r.RemoteAddr = o.Addr
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status written, for the metrics; Unwrap
// keeps http.ResponseController (flushes of live pages) working.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
