package grpcapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// pgnStream is a DownloadPGN stream that keeps what is sent.
type pgnStream struct {
	grpc.ServerStream
	ctx  context.Context
	sent []*arbiterv1.DownloadPGNResponse
}

func (s *pgnStream) Context() context.Context { return s.ctx }
func (s *pgnStream) Send(r *arbiterv1.DownloadPGNResponse) error {
	s.sent = append(s.sent, r)
	return nil
}

// The RPCs that reach the test workload through testview.Tests answer
// "unknown job", naming it, on a coordinator whose program installed no
// test kind (the service holds no test workload), and do not panic; with
// a reader's role missing (the control) DownloadPGN refuses first.
func TestTestRPCsWithoutTheTestKind(t *testing.T) {
	js := &jobService{}
	reader := context.WithValue(context.Background(), identityKey{}, identity.Identity{Name: "carol", Role: identity.Client})
	_, err := js.RescheduleJob(reader, &arbiterv1.RescheduleJobRequest{JobId: "t1"})
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Reason != apierr.ReasonUnknownJob || !strings.Contains(err.Error(), `"t1"`) {
		t.Fatalf("RescheduleJob without tests: %v", err)
	}
	s := &pgnStream{ctx: reader}
	err = js.DownloadPGN(&arbiterv1.DownloadPGNRequest{JobId: "t2"}, s)
	if !errors.As(err, &ae) || ae.Reason != apierr.ReasonUnknownJob || !strings.Contains(err.Error(), `"t2"`) || len(s.sent) != 0 {
		t.Fatalf("DownloadPGN without tests: %v (%d sent)", err, len(s.sent))
	}
	worker := &pgnStream{ctx: context.WithValue(context.Background(), identityKey{}, identity.Identity{Name: "w", Role: identity.Worker})}
	if err := js.DownloadPGN(&arbiterv1.DownloadPGNRequest{JobId: "t2"}, worker); !errors.As(err, &ae) || ae.Reason != apierr.ReasonWrongRole {
		t.Fatalf("DownloadPGN by a worker: %v", err)
	}
}
