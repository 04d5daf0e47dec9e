package cliexit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func TestCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{Usage("--x %d: bad", 3), 2},
		{Failure("found"), 1},
		{fmt.Errorf("wrapped: %w", Failure("found")), 1},
		{errors.New("plain"), 7},
	} {
		if got := Code(c.err, 7); got != c.want {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if err := Usage("--x %d: bad", 3); err.Error() != "--x 3: bad" {
		t.Errorf("message %q", err)
	}
}

// A call to an absent coordinator is status 3 and names it.
func TestCallUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := clusterclient.Connect(clusterclient.Options{Address: addr, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, callErr := c.Jobs.ListJobs(context.Background(), &arbiterv1.ListJobsRequest{})
	err = Call(c, "status", callErr)
	if Code(err, -1) != 3 || err.Error() != "coordinator "+addr+" unreachable: connection refused" {
		t.Errorf("%v (status %d)", err, Code(err, -1))
	}
	if Call(c, "status", nil) != nil {
		t.Error("a nil error became one")
	}
}
