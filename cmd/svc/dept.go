package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/security"
)

// deptCmd manages the built-in directory's departments (docs/approval.md): svc dept add|list|
// set-leader. Like `svc user` it opens the primary data source and applies the security
// migrations first.
func deptCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "dept", Short: "Manage the built-in departments (approval assignees: leaders, superiors)"}
	var name, parent string
	add := &cobra.Command{
		Use:   "add CODE",
		Short: "Create a department (a unique code, a name, optionally under a parent department)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			d, err := st.directory().AddDepartment(cmd.Context(), args[0], name, parent)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "department %s created (id %s)\n", d.Code, d.ID)
			return nil
		}),
	}
	add.Flags().StringVar(&name, "name", "", "display name (default: the code)")
	add.Flags().StringVar(&parent, "parent", "", "code of the parent department")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the departments with their parents and leaders",
		Args:  cobra.NoArgs,
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, _ []string) error {
			depts, err := st.directory().Departments(cmd.Context())
			if err != nil {
				return err
			}
			codes := map[string]string{}
			for _, d := range depts {
				codes[d.ID] = d.Code
			}
			names, err := st.userNames(cmd)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CODE\tNAME\tPARENT\tLEADERS\tID")
			for _, d := range depts {
				leaders := make([]string, len(d.LeaderIDs))
				for i, id := range d.LeaderIDs {
					leaders[i] = names[id]
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", d.Code, d.Name, codes[d.ParentID], strings.Join(leaders, ","), d.ID)
			}
			return w.Flush()
		}),
	}

	var clear bool
	leader := &cobra.Command{
		Use:   "set-leader CODE USER...",
		Short: "Replace the leaders of a department with the users given (--clear removes them all)",
		Args:  cobra.MinimumNArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			if len(args) == 1 && !clear {
				return fmt.Errorf("name at least one user, or pass --clear")
			}
			if err := st.directory().SetLeaders(cmd.Context(), args[0], args[1:]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "leaders of %s: %s\n", args[0], strings.Join(args[1:], " "))
			return nil
		}),
	}
	leader.Flags().BoolVar(&clear, "clear", false, "remove every leader")
	c.AddCommand(add, list, leader)
	return c
}

// setDepartmentCmd is `svc user set-department NAME DEPT` (--clear: no department).
func setDepartmentCmd(g *globalFlags) *cobra.Command {
	var clear bool
	c := &cobra.Command{
		Use:   "set-department NAME [DEPT]",
		Short: "Put a user in a department (by code), or take it out with --clear",
		Args:  cobra.RangeArgs(1, 2),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			dept, err := oneOrClear(args, clear, "a department code")
			if err != nil {
				return err
			}
			if err := st.directory().SetUserDepartment(cmd.Context(), args[0], dept); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "department of %s: %s\n", security.NormalizeUsername(args[0]), orNone(dept))
			return nil
		}),
	}
	c.Flags().BoolVar(&clear, "clear", false, "remove the user from its department")
	return c
}

// setSuperiorCmd is `svc user set-superior NAME SUPERIOR` (--clear: no superior).
func setSuperiorCmd(g *globalFlags) *cobra.Command {
	var clear bool
	c := &cobra.Command{
		Use:   "set-superior NAME [SUPERIOR]",
		Short: "Set a user's superior (another user), or remove it with --clear",
		Args:  cobra.RangeArgs(1, 2),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			sup, err := oneOrClear(args, clear, "the superior's user name")
			if err != nil {
				return err
			}
			if err := st.directory().SetSuperior(cmd.Context(), args[0], sup); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "superior of %s: %s\n", security.NormalizeUsername(args[0]), orNone(sup))
			return nil
		}),
	}
	c.Flags().BoolVar(&clear, "clear", false, "remove the user's superior")
	return c
}

// oneOrClear is the second argument, "" with --clear; exactly one of them must be given.
func oneOrClear(args []string, clear bool, what string) (string, error) {
	switch {
	case len(args) == 2 && !clear:
		return args[1], nil
	case len(args) == 1 && clear:
		return "", nil
	}
	return "", fmt.Errorf("give %s or --clear", what)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// directory is the built-in directory over the store's database.
func (u *userEnv) directory() *security.Directory { return security.NewDirectory(u.db, nil) }

// userNames maps every user id to its user name.
func (u *userEnv) userNames(cmd *cobra.Command) (map[string]string, error) {
	users, err := u.store.List(cmd.Context())
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(users))
	for _, usr := range users {
		names[usr.ID] = usr.Username
	}
	return names, nil
}
