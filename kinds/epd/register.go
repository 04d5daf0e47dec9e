package epd

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/clicmd"
)

// The kind's commands, `arbiter epd` and `arbiter submit epd`, registered
// as every kind's commands are (cmd/arbiter reads clicmd's registry;
// kinds/install imports this package).
func init() {
	clicmd.RegisterCommand("epd", NewCommand)
	clicmd.RegisterSubmit("epd", func() *cobra.Command { return NewSubmitCommand(clientSession) })
}

// clientSession adds the shared client flags (clicmd.ClientFlags) to a
// command and returns the session they make.
func clientSession(fl *pflag.FlagSet) Session {
	c := &clicmd.ClientFlags{}
	c.Add(fl)
	return c.Session
}
