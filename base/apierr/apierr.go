// Package apierr is the one vocabulary of errors between the coordinator and
// its clients. The coordinator's core and workloads return *Error values (no
// gRPC in sight); the gRPC layer turns them into a status with the matching
// code and an ErrorInfo detail whose reason is Reason, and clients read the
// reason back (package grpcerr) instead of matching message text.
//
// A reason is a stable, upper-snake-case identifier: adding one is an API
// change, renaming one is a breaking change.
package apierr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Domain is the ErrorInfo domain of every Arbiter error.
const Domain = "arbiter.chess"

// Code is the class of an error; it maps one to one to a gRPC code.
type Code int

// Codes, named after the gRPC codes they become.
const (
	Internal Code = iota
	InvalidArgument
	NotFound
	AlreadyExists
	PermissionDenied
	Unauthenticated
	FailedPrecondition
	ResourceExhausted
	Unavailable
)

func (c Code) String() string {
	switch c {
	case InvalidArgument:
		return "invalid argument"
	case NotFound:
		return "not found"
	case AlreadyExists:
		return "already exists"
	case PermissionDenied:
		return "permission denied"
	case Unauthenticated:
		return "unauthenticated"
	case FailedPrecondition:
		return "failed precondition"
	case ResourceExhausted:
		return "resource exhausted"
	case Unavailable:
		return "unavailable"
	}
	return "internal"
}

// Reasons. Each names one situation a caller may want to act on.
const (
	// ReasonBadInput: a request field is invalid (the message names it).
	ReasonBadInput = "BAD_INPUT"
	// ReasonUnknownJob: no job, test or session has that id.
	ReasonUnknownJob = "UNKNOWN_JOB"
	// ReasonUnknownWorker: the worker id is not registered (register again).
	ReasonUnknownWorker = "UNKNOWN_WORKER"
	// ReasonUnknownUnit: no unit has that id.
	ReasonUnknownUnit = "UNKNOWN_UNIT"
	// ReasonNotLeaseHolder: the caller does not hold the lease it names.
	ReasonNotLeaseHolder = "NOT_LEASE_HOLDER"
	// ReasonMalformedResult: a result's shape does not fit its unit.
	ReasonMalformedResult = "MALFORMED_RESULT"
	// ReasonImplausibleResult: a result is impossible for its unit.
	ReasonImplausibleResult = "IMPLAUSIBLE_RESULT"
	// ReasonInvalidGame: a game of a batch result does not replay (an
	// illegal move, an end its moves do not support, a pair not on its
	// opening with colours swapped).
	ReasonInvalidGame = "INVALID_GAME"
	// ReasonConflictingResult: the same worker submitted different results
	// for one unit.
	ReasonConflictingResult = "CONFLICTING_RESULT"
	// ReasonJobFinished: the job is no longer running.
	ReasonJobFinished = "JOB_FINISHED"
	// ReasonWrongRole: the credential's role may not call this method.
	ReasonWrongRole = "WRONG_ROLE"
	// ReasonBadCredential: the credential is missing, unknown or revoked.
	ReasonBadCredential = "BAD_CREDENTIAL"
	// ReasonTooLarge: a request or the work it asks for exceeds a limit.
	ReasonTooLarge = "TOO_LARGE"
	// ReasonQuota: the caller's identity is at one of its limits (the
	// message names the limit, its value and the coordinator flag that
	// sets it); retry when its own work has finished or later.
	ReasonQuota = "QUOTA"
	// ReasonBusy: the coordinator's budget for this kind of work (bytes
	// of requests in flight, password hashing) is spent for now; the
	// message names the budget and its flag. Retry after a backoff.
	ReasonBusy = "BUSY"
	// ReasonInUse: the object is used by running work.
	ReasonInUse = "IN_USE"
	// ReasonUnknownArtifact: no engine artifact has that hash.
	ReasonUnknownArtifact = "UNKNOWN_ARTIFACT"
	// ReasonHashMismatch: uploaded bytes do not have the announced SHA-256
	// (they were discarded; upload again).
	ReasonHashMismatch = "HASH_MISMATCH"
	// ReasonStore: the store failed; the call may be retried.
	ReasonStore = "STORE"
	// ReasonShuttingDown: the coordinator is stopping; retry elsewhere or later.
	ReasonShuttingDown = "SHUTTING_DOWN"
	// ReasonInternal: a bug; it was logged.
	ReasonInternal = "INTERNAL"
)

// Error is a domain error: a class, a stable reason and a message for people.
type Error struct {
	Code   Code
	Reason string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// New returns an error of code and reason with a formatted message.
func New(code Code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// Invalid is a bad-input error; the message should name the input.
func Invalid(format string, args ...any) *Error {
	return New(InvalidArgument, ReasonBadInput, format, args...)
}

// Store wraps a store failure (retryable).
func Store(err error) *Error {
	return New(Unavailable, ReasonStore, "store: %v", err)
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// ReasonOf is err's reason, or "" when err carries none.
func ReasonOf(err error) string {
	if e, ok := As(err); ok {
		return e.Reason
	}
	return ""
}

// Quote renders an input for an error message, Go-quoted, so that control
// and invisible characters show escaped. The rendering between the quotes
// is at most max bytes: an input is cut (on a character boundary, with its
// full length noted) when its escaped form would pass max, so that neither a
// huge input nor a short one of bytes that escape to four or ten ("\xff",
// "\U000e0041") makes a huge error.
func Quote(s string, max int) string {
	if q := strconv.Quote(s); len(q) <= max+2 {
		return q
	}
	var b strings.Builder
	b.WriteByte('"')
	rendered := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+size])
		piece := q[1 : len(q)-1]
		if rendered+len(piece) > max {
			break
		}
		b.WriteString(piece)
		rendered += len(piece)
		i += size
	}
	fmt.Fprintf(&b, "\"… (%d bytes)", len(s))
	return b.String()
}

// Q is Quote with the default limit of 100 bytes.
func Q(s string) string { return Quote(s, 100) }
