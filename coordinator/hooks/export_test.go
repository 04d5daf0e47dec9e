package hooks

// CheckDestination runs the check the sender makes on the address a
// connection is about to be made to (after DNS resolution).
func CheckDestination(m *Manager, addr string) error { return m.checkDial("tcp", addr, nil) }
