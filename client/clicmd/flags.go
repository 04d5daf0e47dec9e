package clicmd

// The flags of every command that talks to a coordinator, registered the
// same way everywhere; a failed call becomes a message and an exit status
// through cliexit.Call (0 ok, 1 failure, 2 bad input, 3 coordinator
// unreachable or refused the credential).

import (
	"context"
	"crypto/tls"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
)

// DefaultCoordinator is --coordinator's default where a coordinator is
// the point of the command (submit, status, worker, ...).
const DefaultCoordinator = "127.0.0.1:7700"

// ClientFlags are --coordinator, --token, --token-file, --tls, --ca,
// --server-name, --cert and --key.
type ClientFlags struct {
	coordinator string
	token       string
	tokenFile   string
	tls         bool
	ca          string
	serverName  string
	cert        string
	key         string
	json        bool // --json, for the commands that take it (AddJSON)
}

// Add registers the flags with --coordinator defaulting to this machine.
func (f *ClientFlags) Add(fl *pflag.FlagSet) {
	fl.StringVar(&f.coordinator, "coordinator", "", "coordinator address HOST[:PORT], port default 7700, or several separated by commas (coordinators sharing one PostgreSQL: the one that leads serves) (default: $"+EnvCoordinator+", else the arbiter up running on this machine's data directory, else "+DefaultCoordinator+")")
	f.AddCredentials(fl)
}

// AddOptional registers the flags for a command that runs locally unless
// --coordinator (or its deprecated alias --cluster) is given; what says
// what the coordinator then does.
func (f *ClientFlags) AddOptional(fl *pflag.FlagSet, what string) {
	fl.StringVar(&f.coordinator, "coordinator", "", what+" (HOST[:PORT], port default 7700; several separated by commas)")
	fl.StringVar(&f.coordinator, "cluster", "", "deprecated: use --coordinator")
	fl.MarkDeprecated("cluster", "use --coordinator")
	f.AddCredentials(fl)
}

// AddCredentials registers the credential and TLS flags alone.
func (f *ClientFlags) AddCredentials(fl *pflag.FlagSet) {
	fl.StringVar(&f.token, "token", "", "credential (default: --token-file, else $"+auth.EnvToken+")")
	fl.StringVar(&f.tokenFile, "token-file", "", "read the credential from the first line of this file (keeps it out of ps)")
	fl.BoolVar(&f.tls, "tls", false, "connect with TLS, trusting the system's CA certificates (or --ca's)")
	fl.StringVar(&f.ca, "ca", "", "connect with TLS, trusting the CA certificates in this PEM file")
	fl.StringVar(&f.ca, "tls-ca", "", "deprecated: use --ca")
	fl.MarkDeprecated("tls-ca", "use --ca")
	fl.StringVar(&f.serverName, "server-name", "", "with TLS: the name the coordinator's certificate must carry (default: the host of --coordinator)")
	fl.StringVar(&f.cert, "cert", "", "client certificate (PEM) for mutual TLS, e.g. a worker's made by arbiter certs worker; needs --key, implies TLS, and stands in for a token")
	fl.StringVar(&f.key, "key", "", "private key (PEM) of --cert")
}

// UpToken is the token of the arbiter up running on this machine's data
// directory when this command talks to it (its address, given or found),
// else "".
func (f *ClientFlags) UpToken() string {
	c, _ := f.TargetUp()
	return c.Token
}

// UpPages is the web pages' URL of the arbiter up this command talks
// to, if it is the one running here, else "".
func (f *ClientFlags) UpPages() string {
	c, _ := f.TargetUp()
	return c.Pages
}

// TargetUp is the connection of the arbiter up running on this machine's
// data directory when this command talks to it (its address, given or
// found).
func (f *ClientFlags) TargetUp() (UpConnection, bool) {
	c, ok := RunningUp()
	if !ok {
		return UpConnection{}, false
	}
	addr := f.coordinator
	if addr == "" {
		addr, _ = CoordinatorAddress()
	}
	a, err1 := clusterclient.NormalizeAddress(addr)
	b, err2 := clusterclient.NormalizeAddress(c.Address)
	if err1 != nil || err2 != nil || a != b {
		return UpConnection{}, false
	}
	return c, true
}

// Given reports whether a coordinator address was set (for commands that
// otherwise run locally).
func (f *ClientFlags) Given() bool { return f.coordinator != "" }

// Options checks the flags; errors are bad input.
func (f *ClientFlags) Options() (clusterclient.Options, error) {
	tok, err := clusterclient.ResolveToken(f.token, f.tokenFile, os.Getenv)
	if err != nil {
		return clusterclient.Options{}, cliexit.Usage("%v", err)
	}
	if tok == "" && f.cert == "" {
		tok = f.UpToken()
	}
	if (f.cert == "") != (f.key == "") {
		return clusterclient.Options{}, cliexit.Usage("--cert and --key go together (a client certificate and its key)")
	}
	if f.cert != "" {
		// Checked here so that a bad file is named by its flag.
		if _, err := tls.LoadX509KeyPair(f.cert, f.key); err != nil {
			return clusterclient.Options{}, cliexit.Usage("--cert %s / --key %s: %v", apierr.Q(f.cert), apierr.Q(f.key), err)
		}
	}
	// A client certificate is a credential of its own (a worker's
	// identity); otherwise a token is needed.
	if tok == "" && f.cert == "" {
		return clusterclient.Options{}, cliexit.Usage("no credential: pass --token or --token-file, set %s, or pass a client certificate with --cert and --key (a client of the arbiter up running here needs none)", auth.EnvToken)
	}
	if f.serverName != "" && !f.tls && f.ca == "" && f.cert == "" {
		return clusterclient.Options{}, cliexit.Usage("--server-name: applies to TLS only; add --tls or --ca")
	}
	given, flag := f.coordinator, "--coordinator"
	if given == "" {
		given, flag = CoordinatorAddress()
		if flag == "" {
			flag = "--coordinator"
		}
	}
	addr, err := clusterclient.NormalizeAddresses(given)
	if err != nil {
		return clusterclient.Options{}, cliexit.Usage("%s: %v", flag, err)
	}
	return clusterclient.Options{Address: addr, Token: tok, TLS: f.tls, CAFile: f.ca, ServerName: f.serverName, CertFile: f.cert, KeyFile: f.key}, nil
}

// Dial returns a client of the coordinator.
func (f *ClientFlags) Dial() (*clusterclient.Client, error) {
	o, err := f.Options()
	if err != nil {
		return nil, err
	}
	c, err := clusterclient.Connect(o)
	if err != nil {
		return nil, cliexit.Usage("%v", err)
	}
	return c, nil
}

// Session dials and returns the client with a context that SIGINT and
// SIGTERM cancel; done closes both.
func (f *ClientFlags) Session() (context.Context, *clusterclient.Client, func(), error) {
	c, err := f.Dial()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := SignalContext()
	return ctx, c, func() { cancel(); c.Close() }, nil
}

// Required refuses a missing --flag; why says what it is for.
func Required(flag, why string) error {
	return cliexit.Usage("--%s is required (%s)", flag, why)
}

// SignalContext ends on SIGINT or SIGTERM.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
