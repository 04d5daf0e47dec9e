// Package identity names who is calling: every credential belongs to one
// identity with one role. The gRPC layer resolves credentials to an
// Identity; the coordinator's core decides what each role may do.
package identity

import "fmt"

// Role is what a credential may do.
type Role string

const (
	// Admin may do everything, including managing credentials.
	Admin Role = "admin"
	// Client submits, cancels, reads and downloads work.
	Client Role = "client"
	// Worker registers workers, leases units and submits results.
	Worker Role = "worker"
)

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case Admin, Client, Worker:
		return Role(s), nil
	}
	return "", fmt.Errorf("role %q: want admin, client or worker", s)
}

// Identity is an authenticated caller.
type Identity struct {
	// Name is unique among credentials ("admin" for the bootstrap token).
	Name string
	Role Role
}

// CanWork reports whether the identity may act as a worker.
func (id Identity) CanWork() bool { return id.Role == Worker || id.Role == Admin }

// CanSubmit reports whether the identity may submit and manage jobs.
func (id Identity) CanSubmit() bool { return id.Role == Client || id.Role == Admin }

// IsAdmin reports whether the identity is an administrator.
func (id Identity) IsAdmin() bool { return id.Role == Admin }

// Bootstrap is the identity of the coordinator's own --token.
var Bootstrap = Identity{Name: "admin", Role: Admin}
