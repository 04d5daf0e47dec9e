package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/monitoring"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/web"
)

// webFlags are the web pages' settings of `arbiter coordinator` and
// `arbiter up` (docs/web.md): the pages are served on --http.
type webFlags struct {
	anonymous  bool
	grafanaURL string
	// prometheusURL: the Prometheus /monitor reads (--prometheus-url, or
	// up's own with --prometheus).
	prometheusURL string
	// prometheusScrape: that Prometheus's scrape interval.
	prometheusScrape time.Duration
	books            string
	accounts         coordinator.AccountsConfig
	// mintWorkers lets accounts mint worker tokens on /account.
	mintWorkers bool
}

func (f *webFlags) add(fl *pflag.FlagSet) {
	fl.BoolVar(&f.anonymous, "web-anonymous", true, "anyone who reaches --http reads the pages; false: every reader signs in")
	fl.StringVar(&f.grafanaURL, "grafana-url", "", "Grafana's base URL (http:// or https://): each page links its dashboard")
	fl.StringVar(&f.prometheusURL, "prometheus-url", "", "base URL (http:// or https://) of a Prometheus scraping this coordinator: the pages' /monitor shows the key figures from it")
	fl.DurationVar(&f.prometheusScrape, "prometheus-scrape", monitoring.ScrapeInterval, "scrape interval of the --prometheus-url Prometheus (arbiter up --prometheus: of its own); /monitor's rates span four of it")
	fl.StringVar(&f.books, "web-books", "", "directory of opening books (.epd, .pgn, .zip) the pages' submit form offers")
	fl.BoolVar(&f.accounts.SignUp, "signup", false, "open the pages' sign-up: anyone may ask for an account, which an admin approves")
	fl.BoolVar(&f.accounts.Approval, "approval", false, "tests, tunes and datasets (every kind that may run a submitted program) of accounts with role user wait (pending) until an approver approves them")
	fl.BoolVar(&f.accounts.CrossApproval, "cross-approval", true, "with --approval, nobody approves their own test, admins included")
	fl.BoolVar(&f.mintWorkers, "worker-token-minting", true, "accounts may mint worker tokens on /account (identities that earn trust by replays); false: workers run only on credentials an admin makes")
	fl.DurationVar(&f.accounts.SessionTTL, "session-ttl", 7*24*time.Hour, "how long a sign-in with a password lasts")
}

// check refuses settings that would only fail once the server starts.
func (f *webFlags) check() error {
	if f.grafanaURL != "" {
		u, err := url.Parse(f.grafanaURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError("--grafana-url %s: want an http:// or https:// URL", apierr.Q(f.grafanaURL))
		}
	}
	if f.prometheusURL != "" {
		u, err := url.Parse(f.prometheusURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError("--prometheus-url %s: want an http:// or https:// URL", apierr.Q(f.prometheusURL))
		}
	}
	if f.prometheusScrape < time.Second || f.prometheusScrape > time.Hour {
		return usageError("--prometheus-scrape %s: want from 1s to 1h", f.prometheusScrape)
	}
	if f.accounts.SessionTTL < time.Minute || f.accounts.SessionTTL > 366*24*time.Hour {
		return usageError("--session-ttl %s: want from 1m to 8784h", f.accounts.SessionTTL)
	}
	if f.books != "" {
		if st, err := os.Stat(f.books); err != nil || !st.IsDir() {
			return usageError("--web-books %s: not a readable directory", apierr.Q(f.books))
		}
	}
	return nil
}

// pages makes the web pages of the assembled coordinator
// (localcluster.ServerConfig.Pages).
func (f *webFlags) pages(log *zap.Logger) func(*coordinator.Coordinator, *store.Store) (http.Handler, error) {
	return func(c *coordinator.Coordinator, st *store.Store) (http.Handler, error) {
		return web.New(context.Background(), web.Config{
			Core: c.Core, Games: c.Games(), Credentials: c.Credentials, Accounts: c.Accounts,
			Store: st, Logger: log, GrafanaURL: f.grafanaURL, PrometheusURL: f.prometheusURL, PrometheusScrape: f.prometheusScrape, RequireSignIn: !f.anonymous, BooksDir: f.books,
			Diffs: c.Artifacts, Hooks: c.Hooks, Follows: c.Hooks, Trust: c.Trust, NoWorkerMinting: !f.mintWorkers, Admission: c.Admission,
			DeclareLiar: c.DeclareLiar,
		})
	}
}

// pagesURL is the pages' URL on HTTP address addr; a wildcard host is
// shown as loopback, which reaches it from this machine.
func pagesURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
