// Package clicmd is what a kind's command-line commands are made of and
// where they plug into the arbiter command: the flags and session of every
// command that talks to a coordinator (ClientFlags, Call), and a registry
// of commands (RegisterSubmit for `arbiter submit KIND`, RegisterCommand
// for a command of its own such as `arbiter datagen`) that cmd/arbiter
// reads. A kind's folder registers its commands from its init, so the
// arbiter command lists no kind that plugs in.
package clicmd

import (
	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/registry"
)

// NewCommand makes a fresh command (each root command gets its own: tests
// build several).
type NewCommand func() *cobra.Command

var (
	submits  = registry.New[NewCommand]("clicmd: command submit")
	commands = registry.New[NewCommand]("clicmd: command")
)

// RegisterSubmit adds `arbiter submit KIND`; kind is the command's name
// (its Use's first word must be kind). A second registration of a kind
// panics.
func RegisterSubmit(kind string, c NewCommand) { submits.Add(kind, c) }

// RegisterCommand adds a top-level command of that name (`arbiter
// NAME`). A second registration of a name panics.
func RegisterCommand(name string, c NewCommand) { commands.Add(name, c) }

// SubmitCommands are the registered `submit KIND` commands, by kind.
func SubmitCommands() []*cobra.Command { return build(submits) }

// Commands are the registered top-level commands, by name.
func Commands() []*cobra.Command { return build(commands) }

// SubmitKinds names the kinds with a registered submit command, sorted.
func SubmitKinds() []string { return submits.Names() }

// build makes a fresh command of each constructor, by name.
func build(from *registry.Registry[NewCommand]) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range from.All() {
		out = append(out, c())
	}
	return out
}
