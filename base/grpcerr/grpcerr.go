// Package grpcerr carries apierr errors across gRPC: To on the server turns
// a domain error into a status with an ErrorInfo detail, and the client
// helpers read the reason back, so no one classifies errors by their text.
package grpcerr

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

var toCode = map[apierr.Code]codes.Code{
	apierr.Internal:           codes.Internal,
	apierr.InvalidArgument:    codes.InvalidArgument,
	apierr.NotFound:           codes.NotFound,
	apierr.AlreadyExists:      codes.AlreadyExists,
	apierr.PermissionDenied:   codes.PermissionDenied,
	apierr.Unauthenticated:    codes.Unauthenticated,
	apierr.FailedPrecondition: codes.FailedPrecondition,
	apierr.ResourceExhausted:  codes.ResourceExhausted,
	apierr.Unavailable:        codes.Unavailable,
}

// Status builds a status of code and reason with an ErrorInfo detail.
func Status(code codes.Code, reason, msg string) *status.Status {
	st := status.New(code, msg)
	if withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: apierr.Domain}); err == nil {
		return withInfo
	}
	return st
}

// To converts err for the wire. A domain error keeps its code and reason; a
// status error passes through; a context error becomes its status; anything
// else is Internal (the caller should have logged it).
func To(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := apierr.As(err); ok {
		return Status(toCode[e.Code], e.Reason, e.Msg).Err()
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	return Status(codes.Internal, apierr.ReasonInternal, err.Error()).Err()
}

// Reason is the ErrorInfo reason of a status error, or "".
func Reason(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return ""
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == apierr.Domain {
			return info.GetReason()
		}
	}
	return ""
}

// Code is the gRPC code of err (codes.Unknown for a non-status error,
// codes.OK for nil).
func Code(err error) codes.Code { return status.Code(err) }

// Message is the status message of err without the "rpc error: code = ..."
// prefix, for showing to people.
func Message(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}
