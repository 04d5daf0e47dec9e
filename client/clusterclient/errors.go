package clusterclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
)

// Kind sorts a failed call by what a person (or a script reading the exit
// status) can do about it.
type Kind int

const (
	// Failed: the call failed in some other way (a coordinator bug, a
	// store failure that outlasted the retries).
	Failed Kind = iota
	// Unreachable: the coordinator could not be reached or did not answer
	// (connection refused, DNS, TLS handshake, no answer in time, shutting
	// down). Try again later or check the address.
	Unreachable
	// Refused: the coordinator refused the credential (unknown, revoked, or
	// without the role for the call).
	Refused
	// BadInput: the coordinator said no to the request itself (an invalid
	// field, an unknown job, too large).
	BadInput
	// Interrupted: the caller cancelled (Ctrl-C).
	Interrupted
)

// Exit statuses of the CLI (documented in docs/cluster.md).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitBadInput    = 2
	ExitUnreachable = 3
)

// Code is err's gRPC code: that of the status it carries (also when
// wrapped), DeadlineExceeded or Canceled for a context error, Unknown for
// any other error, OK for nil.
func Code(err error) codes.Code {
	if st := statusOf(err); st != nil {
		return st.Code()
	}
	switch {
	case err == nil:
		return codes.OK
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}

// statusOf finds the gRPC status in err's chain. status.FromError would
// fold a wrapper's text into the message; people should see the
// coordinator's message alone.
func statusOf(err error) *status.Status {
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		return gs.GRPCStatus()
	}
	return nil
}

// message is what the coordinator said, without "rpc error: code = ...".
func message(err error) string {
	if st := statusOf(err); st != nil {
		return st.Message()
	}
	return err.Error()
}

// KindOf classifies err, by its reason first and by its code when the
// coordinator sent no reason (an older coordinator, or the transport).
func KindOf(err error) Kind {
	if err == nil {
		return Failed
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	switch grpcerr.Reason(err) {
	case apierr.ReasonBadCredential, apierr.ReasonWrongRole:
		return Refused
	case apierr.ReasonBadInput, apierr.ReasonUnknownJob, apierr.ReasonTooLarge, apierr.ReasonJobFinished, apierr.ReasonInUse:
		return BadInput
	case apierr.ReasonShuttingDown:
		return Unreachable
	case "":
	default:
		return Failed
	}
	switch Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return Unreachable
	case codes.Unauthenticated, codes.PermissionDenied:
		return Refused
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.AlreadyExists, codes.OutOfRange:
		return BadInput
	case codes.Canceled:
		return Interrupted
	}
	return Failed
}

// ExitCode is the CLI's exit status for err: 0 for nil, 2 for a request
// the coordinator refused as bad input, 3 when the coordinator could not
// be reached or refused the credential, 1 otherwise.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	switch KindOf(err) {
	case Unreachable, Refused:
		return ExitUnreachable
	case BadInput:
		return ExitBadInput
	}
	return ExitFailure
}

// Error is a failed call to a coordinator, for people: it names the
// coordinator's address and says whether it was unreachable, refused the
// credential or refused the request, in one line.
type Error struct {
	// Addr is the coordinator's address; Op what was being done
	// ("submit", "watch p1a2b3").
	Addr, Op string
	Kind     Kind
	Code     codes.Code
	// Reason is the coordinator's stable reason ("" when it sent none).
	Reason string
	// Detail is the coordinator's message, or the cause of a failed
	// connection ("connection refused").
	Detail string
	err    error
}

func (e *Error) Error() string {
	switch e.Kind {
	case Unreachable:
		return fmt.Sprintf("coordinator %s unreachable: %s", e.Addr, e.Detail)
	case Refused:
		return fmt.Sprintf("coordinator %s refused the credential: %s", e.Addr, e.Detail)
	case Interrupted:
		return e.Op + ": interrupted"
	}
	return e.Op + ": " + e.Detail
}

// Unwrap returns the underlying error (a gRPC status error, usually).
func (e *Error) Unwrap() error { return e.err }

// describe builds the Error for err of a call op to addr; lastDial is the
// cause of the latest failed connection attempt, if the latest failed.
func describe(addr, op string, err, lastDial error) *Error {
	var already *Error
	if errors.As(err, &already) {
		return already
	}
	e := &Error{Addr: addr, Op: op, Kind: KindOf(err), Code: Code(err), Reason: grpcerr.Reason(err), Detail: message(err), err: err}
	switch {
	case e.Kind == Unreachable && e.Code == codes.Unavailable && e.Reason == "" && lastDial != nil:
		e.Detail = dialCause(lastDial)
	case e.Kind == Unreachable && e.Code == codes.DeadlineExceeded && errors.As(lastDial, new(*notAnswering)):
		// The deadline passed during a retry; the attempt before it had
		// found the coordinator not answering.
		e.Detail = dialCause(lastDial)
	case e.Kind == Unreachable && e.Code == codes.DeadlineExceeded:
		e.Detail = "no answer before the deadline (" + e.Detail + ")"
	}
	return e
}

// handshakeError marks a failed TLS handshake (see recordingCreds).
type handshakeError struct{ err error }

func (h *handshakeError) Error() string { return "TLS handshake failed: " + h.err.Error() }
func (h *handshakeError) Unwrap() error { return h.err }

// plaintextToTLS marks a plaintext connection the coordinator closed (or
// answered with TLS) before speaking HTTP/2 (see firstReadConn).
type plaintextToTLS struct{ err error }

func (p *plaintextToTLS) Error() string {
	return "the coordinator closed the connection before speaking gRPC; if it serves TLS, connect with --ca FILE (or --tls)"
}
func (p *plaintextToTLS) Unwrap() error { return p.err }

// notAnswering marks a connection the coordinator accepted but on which it
// sent nothing before the connect timeout (a stopped or wedged process:
// the kernel completes TCP handshakes on its own).
type notAnswering struct{ err error }

func (n *notAnswering) Error() string {
	return fmt.Sprintf("not answering: it accepted the connection but sent nothing within %v (a stopped or overloaded coordinator)", connectTimeout)
}
func (n *notAnswering) Unwrap() error { return n.err }

// silent reports whether err ended a read or handshake on a connection
// the peer never spoke on: our side closed it or its deadline passed,
// rather than the peer closing or resetting it.
func silent(err error) bool {
	var netErr net.Error
	return errors.Is(err, net.ErrClosed) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
}

// dialCause says in a few words why a connection attempt failed, from the
// error's type rather than its text.
func dialCause(err error) string {
	var (
		dnsErr *net.DNSError
		hs     *handshakeError
		netErr net.Error
	)
	var (
		plain  *plaintextToTLS
		notTLS tls.RecordHeaderError
		silent *notAnswering
	)
	switch {
	case errors.As(err, &silent):
		return silent.Error()
	case errors.As(err, &plain):
		return plain.Error()
	case errors.As(err, &notTLS):
		return "TLS handshake failed: the coordinator does not answer in TLS here; connect without --tls, --ca and --cert, or check the port"
	case errors.As(err, &hs):
		return hs.Error()
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return fmt.Sprintf("cannot resolve %s: no such host", apierr.Q(dnsErr.Name))
		}
		return fmt.Sprintf("cannot resolve %s: %s", apierr.Q(dnsErr.Name), dnsErr.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "connection timed out"
	}
	return err.Error()
}
