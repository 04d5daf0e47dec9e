package epd

import "github.com/arbiter-chess/arbiter/client/clicmd"

// The kind's command, `arbiter epd`, registered as every kind's commands
// are (cmd/arbiter reads clicmd's registry; kinds/install imports this
// package).
func init() { clicmd.RegisterCommand("epd", NewCommand) }
