package hooks

import (
	"context"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// CheckDestination runs the check the sender makes on the address a
// connection is about to be made to (after DNS resolution).
func CheckDestination(m *Manager, addr string) error { return m.checkDial("tcp", addr, nil) }

// Send makes one attempt of delivery d to hook h, as the sender does,
// for a hook that passed the checks when it was made (as a name that
// resolved elsewhere then would have).
func Send(m *Manager, h *store.Hook, d *store.Delivery) (int, error) {
	return m.send(context.Background(), h, d)
}
