// Package clicmd is what a kind's command-line commands are made of and
// where they plug into the arbiter command: the flags and session of every
// command that talks to a coordinator (ClientFlags, Call), and a registry
// of commands (RegisterSubmit for `arbiter submit KIND`, RegisterCommand
// for a command of its own such as `arbiter datagen`) that cmd/arbiter
// reads. A kind's folder registers its commands from its init, so the
// arbiter command lists no kind that plugs in.
package clicmd

import (
	"sort"
	"sync"

	"github.com/spf13/cobra"
)

// NewCommand makes a fresh command (each root command gets its own: tests
// build several).
type NewCommand func() *cobra.Command

var (
	commandsMu sync.Mutex
	submits    = map[string]NewCommand{}
	commands   = map[string]NewCommand{}
)

// RegisterSubmit adds `arbiter submit KIND`; kind is the command's name
// (its Use's first word must be kind). A second registration of a kind
// panics.
func RegisterSubmit(kind string, c NewCommand) { register(submits, "submit "+kind, kind, c) }

// RegisterCommand adds a top-level command of that name (`arbiter
// NAME`). A second registration of a name panics.
func RegisterCommand(name string, c NewCommand) { register(commands, name, name, c) }

func register(into map[string]NewCommand, what, name string, c NewCommand) {
	if name == "" || c == nil {
		panic("clicmd: command " + what + " registered without a name or a constructor")
	}
	commandsMu.Lock()
	defer commandsMu.Unlock()
	if _, dup := into[name]; dup {
		panic("clicmd: command " + what + " registered twice")
	}
	into[name] = c
}

// SubmitCommands are the registered `submit KIND` commands, by kind.
func SubmitCommands() []*cobra.Command { return build(submits) }

// Commands are the registered top-level commands, by name.
func Commands() []*cobra.Command { return build(commands) }

// SubmitKinds names the kinds with a registered submit command, sorted.
func SubmitKinds() []string {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	out := make([]string, 0, len(submits))
	for k := range submits {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func build(from map[string]NewCommand) []*cobra.Command {
	commandsMu.Lock()
	names := make([]string, 0, len(from))
	for n := range from {
		names = append(names, n)
	}
	commandsMu.Unlock()
	sort.Strings(names)
	out := make([]*cobra.Command, 0, len(names))
	for _, n := range names {
		commandsMu.Lock()
		c := from[n]
		commandsMu.Unlock()
		out = append(out, c())
	}
	return out
}
