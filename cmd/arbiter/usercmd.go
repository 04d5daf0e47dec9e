package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// The accounts of the web pages and the audit log, worked on in the
// coordinator's store (like arbiter store): whoever can open the store is
// its admin. The coordinator reads accounts and sessions from the store on
// every request, so a change here holds at once on a running coordinator.

// storeFlags name the store of arbiter user and arbiter audit.
type storeFlags struct{ data, store string }

func (f *storeFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.data, "data", "arbiter-data", "the coordinator's data directory (its SQLite store)")
	fl.StringVar(&f.store, "store", "", "the coordinator's PostgreSQL database, postgres://user:password@host:port/db (default: $"+envStore+")")
}

func (f *storeFlags) open() (*store.Store, error) {
	if f.store == "" {
		f.store = os.Getenv(envStore)
	}
	if f.store == "" {
		// Open would make an empty store where none is: a mistyped --data
		// must not look like a farm without accounts.
		if _, err := os.Stat(filepath.Join(f.data, store.FileName)); err != nil {
			return nil, usageError("--data %s: no coordinator store there (%s)", apierr.Q(f.data), store.FileName)
		}
	}
	st, err := store.OpenURL(f.store, f.data)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return st, nil
}

// operator is who the audit log records for a change made here.
func operator() identity.Identity {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return identity.Identity{Name: "store:" + name, Role: identity.Admin}
}

func newUserCommand() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Add, list, approve and change the web pages' accounts (admin, on the store)",
		Long: `Accounts sign in to the web pages with a name and a password. Their roles:
user (submits tests; on a coordinator run with approvals on, they wait
for an approver), approver (also approves other people's tests) and admin
(also manages accounts and credentials). Sign-ups, when the coordinator
takes them, wait for an admin: approve them here or on the pages'
Accounts page.

These commands work on the coordinator's store (--data, or --store for
PostgreSQL), as arbiter store does, and may run while the coordinator
does: sign-ins and sessions are read from the store on every request.
Every change is in the audit log (arbiter audit) as store:<your login>.`,
		Args: cobra.NoArgs,
	}
	sf.add(cmd.PersistentFlags())
	run := accountsRunner(&sf)
	cmd.AddCommand(userAddCommand(run), userListCommand(run))
	cmd.AddCommand(userChangeCommands(run)...)
	return cmd
}

// accountsAction is a user subcommand's work on the store's accounts.
type accountsAction func(ctx context.Context, acc *accounts.Service, st *store.Store, cmd *cobra.Command, args []string) error

// accountsRunner opens the store of sf for each run of an action.
func accountsRunner(sf *storeFlags) func(accountsAction) func(*cobra.Command, []string) error {
	return func(fn accountsAction) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			st, err := sf.open()
			if err != nil {
				return err
			}
			defer st.Close()
			acc, err := accounts.New(accounts.Config{Store: st})
			if err != nil {
				return err
			}
			return fn(cmd.Context(), acc, st, cmd, args)
		}
	}
}

func userAddCommand(run func(accountsAction) func(*cobra.Command, []string) error) *cobra.Command {
	var role string
	var passwordFile string
	add := &cobra.Command{
		Use:   "add NAME --role user|approver|admin",
		Short: "Add an active account; its password is read from standard input or a file",
		Example: `  printf '%s\n' "$PASSWORD" | arbiter user add alice --role approver --data /var/lib/arbiter
  arbiter user add bob --password-file bob.pw --data /var/lib/arbiter`,
		Args: cobra.ExactArgs(1),
		RunE: run(func(ctx context.Context, acc *accounts.Service, _ *store.Store, cmd *cobra.Command, args []string) error {
			r, err := accounts.ParseRole(role)
			if err != nil {
				return usageError("--role: %v", err)
			}
			pw, err := readPassword(cmd.InOrStdin(), passwordFile)
			if err != nil {
				return err
			}
			if err := acc.Add(ctx, operator(), args[0], pw, r); err != nil {
				return accountError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account %s added, role %s\n", args[0], r)
			return nil
		}),
	}
	add.Flags().StringVar(&role, "role", "user", "user, approver or admin")
	add.Flags().StringVar(&passwordFile, "password-file", "", "read the password from this file's first line instead of standard input")

	return add
}

func userListCommand(run func(accountsAction) func(*cobra.Command, []string) error) *cobra.Command {
	var jsonOut bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the accounts",
		Args:  cobra.NoArgs,
		RunE: run(func(ctx context.Context, acc *accounts.Service, _ *store.Store, cmd *cobra.Command, _ []string) error {
			us, err := acc.List(ctx, operator())
			if err != nil {
				return accountError(err)
			}
			if jsonOut {
				type row struct {
					Name      string    `json:"name"`
					Role      string    `json:"role"`
					State     string    `json:"state"`
					CreatedAt time.Time `json:"created_at"`
					DecidedBy string    `json:"decided_by,omitempty"`
				}
				out := []row{}
				for _, u := range us {
					out = append(out, row{u.Name, string(u.Role), u.State, u.CreatedAt.UTC(), u.DecidedBy})
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tSTATE\tSINCE\tDECIDED BY")
			for _, u := range us {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Name, u.Role, u.State, u.CreatedAt.UTC().Format(time.DateTime), dash(u.DecidedBy))
			}
			return tw.Flush()
		}),
	}
	list.Flags().BoolVar(&jsonOut, "json", false, "print JSON")

	return list
}

// userChangeCommands are approve, role, disable and enable: each sets an
// account's role and state from its current ones.
func userChangeCommands(run func(accountsAction) func(*cobra.Command, []string) error) []*cobra.Command {
	// change sets role and/or state from the current account.
	change := func(use, short string, args cobra.PositionalArgs, to func(a accounts.Account, args []string) (accounts.Role, string, error)) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args,
			RunE: run(func(ctx context.Context, acc *accounts.Service, st *store.Store, cmd *cobra.Command, args []string) error {
				a, err := acc.Get(ctx, args[0])
				if err != nil {
					return accountError(err)
				}
				r, state, err := to(a, args)
				if err != nil {
					return err
				}
				if err := acc.Change(ctx, operator(), a.Name, r, state); err != nil {
					return accountError(err)
				}
				if state == store.UserDisabled {
					if err := revokeTokensOf(ctx, st, a.Name); err != nil {
						return err
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "account %s: role %s, %s\n", a.Name, r, state)
				return nil
			})}
	}
	approve := change("approve NAME", "Approve a pending sign-up", cobra.ExactArgs(1), func(a accounts.Account, _ []string) (accounts.Role, string, error) {
		if a.State != store.UserPending {
			return "", "", usageError("account %s is %s, not pending", a.Name, a.State)
		}
		return a.Role, store.UserActive, nil
	})
	roleCmd := change("role NAME user|approver|admin", "Change an account's role", cobra.ExactArgs(2), func(a accounts.Account, args []string) (accounts.Role, string, error) {
		r, err := accounts.ParseRole(args[1])
		if err != nil {
			return "", "", usageError("%v", err)
		}
		state := a.State
		if state == store.UserPending {
			state = store.UserActive // a role given is an approval
		}
		return r, state, nil
	})
	disable := change("disable NAME", "Disable an account: its sessions end at once, its tokens are revoked", cobra.ExactArgs(1), func(a accounts.Account, _ []string) (accounts.Role, string, error) {
		return a.Role, store.UserDisabled, nil
	})
	enable := change("enable NAME", "Enable a disabled account (its revoked tokens stay revoked)", cobra.ExactArgs(1), func(a accounts.Account, _ []string) (accounts.Role, string, error) {
		return a.Role, store.UserActive, nil
	})
	return []*cobra.Command{approve, roleCmd, disable, enable}
}

// revokeTokensOf revokes the stored tokens of a disabled account. A
// running coordinator refuses them already (it checks their account's
// state, accounts.Service.Active); revoked, they stay refused if the
// account is enabled again.
func revokeTokensOf(ctx context.Context, st *store.Store, owner string) error {
	creds, err := st.Credentials(ctx)
	if err != nil {
		return err
	}
	for _, c := range creds {
		if c.Owner == owner && c.RevokedAt.IsZero() {
			if err := st.RevokeCredential(ctx, c.Name, time.Now()); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if err := st.Audit(ctx, store.AuditEntry{At: time.Now(), Actor: operator().Name, Action: "credential.revoke", Target: c.Name,
				Detail: "account " + owner + " disabled"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// readPassword reads a password's first line from file or in.
func readPassword(in io.Reader, file string) (string, error) {
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return "", usageError("--password-file: %v", err)
		}
		defer f.Close()
		in = f
	}
	line, err := bufio.NewReader(io.LimitReader(in, accounts.MaxPasswordLen+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", usageError("no password: give it on standard input or with --password-file")
	}
	return pw, nil
}

// accountError turns bad input into a usage error (exit 2).
func accountError(err error) error {
	var fe *accounts.FieldError
	if errors.As(err, &fe) {
		return usageError("%s", fe.Error())
	}
	var ae *apierr.Error
	if errors.As(err, &ae) && (ae.Code == apierr.InvalidArgument || ae.Code == apierr.NotFound) {
		return usageError("%s", ae.Msg)
	}
	return err
}

func newAuditCommand() *cobra.Command {
	var sf storeFlags
	var f store.AuditFilter
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print the audit log: approvals, refusals, changes, cancels, account and credential actions",
		Long: `The audit log records who approved, refused, changed, cancelled or blocked
what, and every account and credential action, with when. It is kept in
the coordinator's store (--data, or --store for PostgreSQL), newest first;
the pages show it at /audit to admins and approvers.`,
		Example: `  arbiter audit --data /var/lib/arbiter
  arbiter audit --action test.approve --json
  arbiter audit --actor alice --limit 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Limit < 1 || f.Limit > 1000 {
				return usageError("--limit %d: want 1 to 1000", f.Limit)
			}
			if f.Before < 0 {
				return usageError("--before %d: want an entry number", f.Before)
			}
			st, err := sf.open()
			if err != nil {
				return err
			}
			defer st.Close()
			es, err := st.AuditLog(cmd.Context(), f)
			if err != nil {
				return err
			}
			if jsonOut {
				type row struct {
					ID     int64     `json:"id"`
					At     time.Time `json:"at"`
					Actor  string    `json:"actor"`
					Action string    `json:"action"`
					Target string    `json:"target"`
					Detail string    `json:"detail,omitempty"`
				}
				out := []row{}
				for _, e := range es {
					out = append(out, row{e.ID, e.At.UTC(), e.Actor, e.Action, e.Target, e.Detail})
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "#\tWHEN (UTC)\tWHO\tACTION\tON\tDETAIL")
			for _, e := range es {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.At.UTC().Format(time.DateTime), e.Actor, e.Action, dash(e.Target), e.Detail)
			}
			return tw.Flush()
		},
	}
	sf.add(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&f.Actor, "actor", "", "only the entries of this account or identity")
	fl.StringVar(&f.Action, "action", "", "only this action (test.approve, test.refuse, job.cancel, job.priority, user.approve, credential.create, ...)")
	fl.StringVar(&f.Target, "target", "", "only the entries about this job, account or credential")
	fl.IntVar(&f.Limit, "limit", 100, "at most this many entries (1 to 1000)")
	fl.Int64Var(&f.Before, "before", 0, "only the entries older than entry number N (the next page)")
	fl.BoolVar(&jsonOut, "json", false, "print JSON")
	return cmd
}
