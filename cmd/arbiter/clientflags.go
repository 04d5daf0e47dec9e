package main

// The flags of every command that talks to a coordinator, registered the
// same way everywhere, and the translation of a failed call into a message
// and an exit status (0 ok, 1 failure, 2 bad input, 3 coordinator
// unreachable or refused the credential).

import (
	"context"
	"crypto/tls"
	"os"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
)

// defaultCoordinator is --coordinator's default where a coordinator is
// the point of the command (submit, status, worker, ...).
const defaultCoordinator = "127.0.0.1:7700"

// clientFlags are --coordinator, --token, --token-file, --tls, --ca,
// --server-name, --cert and --key.
type clientFlags struct {
	coordinator string
	token       string
	tokenFile   string
	tls         bool
	ca          string
	serverName  string
	cert        string
	key         string
	json        bool // --json, for the commands that take it (addJSON)
}

// add registers the flags with --coordinator defaulting to this machine.
func (f *clientFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.coordinator, "coordinator", "", "coordinator address HOST[:PORT], port default 7700, or several separated by commas (coordinators sharing one PostgreSQL: the one that leads serves) (default: $"+envCoordinator+", else the arbiter up running on this machine's data directory, else "+defaultCoordinator+")")
	f.addCredentials(fl)
}

// addOptional registers the flags for a command that runs locally unless
// --coordinator (or its deprecated alias --cluster) is given; what says
// what the coordinator then does.
func (f *clientFlags) addOptional(fl *pflag.FlagSet, what string) {
	fl.StringVar(&f.coordinator, "coordinator", "", what+" (HOST[:PORT], port default 7700; several separated by commas)")
	fl.StringVar(&f.coordinator, "cluster", "", "deprecated: use --coordinator")
	fl.MarkDeprecated("cluster", "use --coordinator")
	f.addCredentials(fl)
}

func (f *clientFlags) addCredentials(fl *pflag.FlagSet) {
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

// upToken is the token of the arbiter up running on this machine's data
// directory when this command talks to it (its address, given or found),
// else "".
func (f *clientFlags) upToken() string {
	c, _ := f.targetUp()
	return c.Token
}

// upPages is the web pages' URL of the arbiter up this command talks
// to, if it is the one running here, else "".
func (f *clientFlags) upPages() string {
	c, _ := f.targetUp()
	return c.Pages
}

// targetUp is the connection of the arbiter up running on this machine's
// data directory when this command talks to it (its address, given or
// found).
func (f *clientFlags) targetUp() (upConnection, bool) {
	c, ok := runningUp()
	if !ok {
		return upConnection{}, false
	}
	addr := f.coordinator
	if addr == "" {
		addr, _ = coordinatorAddress()
	}
	a, err1 := clusterclient.NormalizeAddress(addr)
	b, err2 := clusterclient.NormalizeAddress(c.Address)
	if err1 != nil || err2 != nil || a != b {
		return upConnection{}, false
	}
	return c, true
}

// given reports whether a coordinator address was set (for commands that
// otherwise run locally).
func (f *clientFlags) given() bool { return f.coordinator != "" }

// options checks the flags; errors are bad input.
func (f *clientFlags) options() (clusterclient.Options, error) {
	tok, err := clusterclient.ResolveToken(f.token, f.tokenFile, os.Getenv)
	if err != nil {
		return clusterclient.Options{}, usageError("%v", err)
	}
	if tok == "" && f.cert == "" {
		tok = f.upToken()
	}
	if (f.cert == "") != (f.key == "") {
		return clusterclient.Options{}, usageError("--cert and --key go together (a client certificate and its key)")
	}
	if f.cert != "" {
		// Checked here so that a bad file is named by its flag.
		if _, err := tls.LoadX509KeyPair(f.cert, f.key); err != nil {
			return clusterclient.Options{}, usageError("--cert %s / --key %s: %v", apierr.Q(f.cert), apierr.Q(f.key), err)
		}
	}
	// A client certificate is a credential of its own (a worker's
	// identity); otherwise a token is needed.
	if tok == "" && f.cert == "" {
		return clusterclient.Options{}, usageError("no credential: pass --token or --token-file, set %s, or pass a client certificate with --cert and --key (a client of the arbiter up running here needs none)", auth.EnvToken)
	}
	if f.serverName != "" && !f.tls && f.ca == "" && f.cert == "" {
		return clusterclient.Options{}, usageError("--server-name: applies to TLS only; add --tls or --ca")
	}
	given, flag := f.coordinator, "--coordinator"
	if given == "" {
		given, flag = coordinatorAddress()
		if flag == "" {
			flag = "--coordinator"
		}
	}
	addr, err := clusterclient.NormalizeAddresses(given)
	if err != nil {
		return clusterclient.Options{}, usageError("%s: %v", flag, err)
	}
	return clusterclient.Options{Address: addr, Token: tok, TLS: f.tls, CAFile: f.ca, ServerName: f.serverName, CertFile: f.cert, KeyFile: f.key}, nil
}

// dial returns a client of the coordinator.
func (f *clientFlags) dial() (*clusterclient.Client, error) {
	o, err := f.options()
	if err != nil {
		return nil, err
	}
	c, err := clusterclient.Connect(o)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return c, nil
}

// session dials and returns the client with a context that SIGINT and
// SIGTERM cancel; done closes both.
func (f *clientFlags) session() (context.Context, *clusterclient.Client, func(), error) {
	c, err := f.dial()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := signalContext()
	return ctx, c, func() { cancel(); c.Close() }, nil
}

// resolveToken is the credential of a command that serves rather than
// dials (coordinator, up): the flag's, else the environment's.
func resolveToken(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(auth.EnvToken)
}

// callError turns a failed call of op into the CLI's error: a message
// that names the coordinator and the exit status of its kind.
func callError(c *clusterclient.Client, op string, err error) error { return cliexit.Call(c, op, err) }
