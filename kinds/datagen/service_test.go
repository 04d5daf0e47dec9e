package datagen

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/base/identity"
)

// TestEveryMethodHasARule: the coordinator admits the calls of a kind's
// service by the rules the kind gives (workload.Servicer); each method of
// DatagenService has one, for clients, with a small request.
func TestEveryMethodHasARule(t *testing.T) {
	srv := grpc.NewServer()
	names, methods := (&Workload{}).RegisterGRPC(srv, func(context.Context) identity.Identity { return identity.Identity{} })
	ruled := map[string]bool{}
	for _, m := range methods {
		ruled[m.FullName] = true
		if m.Role != identity.Client || m.MaxBytes <= 0 || m.MaxBytes > 1<<20 {
			t.Errorf("%s: %+v, want the client role and a small request", m.FullName, m)
		}
	}
	info := srv.GetServiceInfo()
	for _, name := range names {
		for _, m := range info[name].Methods {
			if full := "/" + name + "/" + m.Name; !ruled[full] {
				t.Errorf("method %s has no rule", full)
			}
		}
	}
}
