package main

// "Did you mean": a mistyped flag or subcommand is refused with the names
// it is closest to, at every level of the command tree (cobra suggests
// only for the root's subcommands, and a group such as `arbiter engine`
// given an unknown word printed its help and exited 0).

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addSuggestions installs the flag error handler on root and makes every
// group of subcommands refuse an unknown word with suggestions.
func addSuggestions(root *cobra.Command) {
	root.SetFlagErrorFunc(flagErrorWithSuggestions)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.HasSubCommands() || c.Runnable() {
			return
		}
		c.Args = cobra.ArbitraryArgs
		c.SuggestionsMinimumDistance = 2
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return usageError("%s (see %s --help)", msg, c.CommandPath())
		}
	}
	walk(root)
}

// flagErrorWithSuggestions adds the closest flag names to pflag's
// "unknown flag: --dept" (and "unknown shorthand flag: 'x' in -xyz").
func flagErrorWithSuggestions(c *cobra.Command, err error) error {
	msg := err.Error()
	var typed string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		typed = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		// "unknown shorthand flag: 'e' in -engine": a long flag given
		// with one dash.
		if i := strings.Index(msg, " in -"); i >= 0 {
			typed = msg[i+len(" in -"):]
		}
	default:
		return usageError("%v", err)
	}
	typed, _, _ = strings.Cut(typed, "=")
	if s := closestFlags(c, typed); len(s) > 0 {
		return usageError("%v; did you mean %s?", err, strings.Join(s, " or "))
	}
	return usageError("%v (see %s --help)", err, c.CommandPath())
}

// closestFlags are c's flags (its own and inherited) nearest to typed:
// within an edit distance of a third of its length (at least 1, at most
// 3), or, when none is, starting with it; at most three, the nearest
// first.
func closestFlags(c *cobra.Command, typed string) []string {
	if typed == "" {
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	seen := map[string]bool{}
	limit := min(max(len(typed)/3, 1), 3)
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		d := editDistance(strings.ToLower(typed), f.Name)
		if d <= limit || (len(typed) >= 3 && strings.HasPrefix(f.Name, typed)) {
			cs = append(cs, cand{f.Name, d})
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	// A near miss (a typo) beats a longer flag the typed one only begins:
	// --worker is --workers, not also --worker-token-minting.
	if slices.ContainsFunc(cs, func(c cand) bool { return c.d <= limit }) {
		cs = slices.DeleteFunc(cs, func(c cand) bool { return c.d > limit })
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d || (cs[i].d == cs[j].d && cs[i].name < cs[j].name) })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, "--"+cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
