package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/boombuler/barcode/qr"
	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"golang.org/x/term"
)

// userCmd manages the built-in user store (security module): svc user add|passwd|disable|
// enable|list|roles|totp|set-department|set-superior. It opens the primary data source of the configuration and applies
// the security migrations first, so it works on a fresh database.
func userCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "user", Short: "Manage the built-in users (login, roles, TOTP)"}
	var displayName, roles string
	var fromStdin bool
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Create a user; the password is prompted for (or read from stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			pw, err := readPassword(cmd, fromStdin, true)
			if err != nil {
				return err
			}
			u, err := st.store.Create(cmd.Context(), args[0], displayName, pw, splitRoles(roles))
			if err != nil {
				return st.explain(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "user %s created (id %s)\n", u.Username, u.ID)
			return nil
		}),
	}
	add.Flags().StringVar(&displayName, "display-name", "", "name shown to the user (default: the user name)")
	add.Flags().StringVar(&roles, "roles", "", "comma-separated roles (permissions come from svc.security.roles)")
	add.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of stdin")

	passwd := &cobra.Command{
		Use:   "passwd NAME",
		Short: "Set a user's password (tokens issued before stop working)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			pw, err := readPassword(cmd, fromStdin, true)
			if err != nil {
				return err
			}
			if err := st.store.SetPassword(cmd.Context(), args[0], pw); err != nil {
				return st.explain(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "password of %s changed\n", security.NormalizeUsername(args[0]))
			return nil
		}),
	}
	passwd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of stdin")

	c.AddCommand(add, passwd, enableCmd(g, "disable", true), enableCmd(g, "enable", false), listCmd(g), rolesCmd(g), totpCmd(g),
		setDepartmentCmd(g), setSuperiorCmd(g))
	return c
}

func enableCmd(g *globalFlags, verb string, disabled bool) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a user (disabling also refuses its tokens)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			if err := st.store.SetDisabled(cmd.Context(), args[0], disabled); err != nil {
				return st.explain(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "user %s %sd\n", security.NormalizeUsername(args[0]), verb)
			return nil
		}),
	}
}

func listCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the users",
		Args:  cobra.NoArgs,
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, _ []string) error {
			users, err := st.store.List(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tDISPLAY NAME\tROLES\tDISABLED\tTOTP\tPASSWORD CHANGED")
			for _, u := range users {
				fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%t\t%s\n", u.Username, u.DisplayName, strings.Join(u.Roles, ","),
					u.Disabled, u.HasTOTP(), u.PasswordChangedAt.Format(time.RFC3339))
			}
			return w.Flush()
		}),
	}
}

func rolesCmd(g *globalFlags) *cobra.Command {
	var clear bool
	c := &cobra.Command{
		Use:   "roles NAME [ROLE...]",
		Short: "Show a user's roles, or replace them with the ROLEs given",
		Args:  cobra.MinimumNArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			ctx := cmd.Context()
			if len(args) > 1 || clear {
				if err := st.store.SetRoles(ctx, args[0], args[1:]); err != nil {
					return st.explain(err)
				}
			}
			u, err := st.store.LookupUser(ctx, args[0])
			if err != nil {
				return st.explain(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", u.Username, strings.Join(u.Roles, " "))
			for _, r := range u.Roles {
				if _, ok := st.cfg.Security.Roles[r]; !ok {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: role %q grants nothing: it is not in svc.security.roles\n", r)
				}
			}
			return nil
		}),
	}
	c.Flags().BoolVar(&clear, "clear", false, "remove every role")
	return c
}

func totpCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "totp", Short: "Enroll, verify or remove a user's TOTP authenticator"}
	c.AddCommand(&cobra.Command{
		Use:   "enroll NAME",
		Short: "Start TOTP enrollment: print the otpauth URI and a QR code, then ask for a code to activate it",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			en, err := st.store.BeginTOTP(cmd.Context(), args[0], st.cfg.App.Name)
			if err != nil {
				return st.explain(err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Scan this code with an authenticator app, or enter the URI by hand:\n\n")
			if err := printQR(out, en.URI); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: cannot draw the QR code: %v\n", err)
			}
			fmt.Fprintf(out, "\n%s\n\nEnter the 6-digit code the app shows to activate it: ", en.URI)
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read the code: %w (the enrollment stays pending: run `svc user totp verify %s CODE`)",
					err, security.NormalizeUsername(args[0]))
			}
			code := strings.TrimSpace(line)
			if code == "" {
				fmt.Fprintf(out, "\nnot activated yet: run `svc user totp verify %s CODE`\n", security.NormalizeUsername(args[0]))
				return nil
			}
			return confirmTOTP(cmd, st, args[0], code)
		}),
	})
	c.AddCommand(&cobra.Command{
		Use:   "verify NAME CODE",
		Short: "Activate a pending TOTP enrollment with a code from the app",
		Args:  cobra.ExactArgs(2),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			return confirmTOTP(cmd, st, args[0], args[1])
		}),
	})
	c.AddCommand(&cobra.Command{
		Use:   "disable NAME",
		Short: "Remove a user's TOTP secret (login no longer asks for a code)",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(g, func(cmd *cobra.Command, st *userEnv, args []string) error {
			if err := st.store.DisableTOTP(cmd.Context(), args[0]); err != nil {
				return st.explain(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "TOTP removed for %s\n", security.NormalizeUsername(args[0]))
			return nil
		}),
	})
	return c
}

func confirmTOTP(cmd *cobra.Command, st *userEnv, name, code string) error {
	if err := st.store.ConfirmTOTP(cmd.Context(), name, code); err != nil {
		return st.explain(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nTOTP activated for %s: login now asks for a code\n", security.NormalizeUsername(name))
	return nil
}

// userEnv is what every user subcommand works with.
type userEnv struct {
	cfg   *config.Config
	db    *db.DB
	store *security.Store
	msgs  *i18n.Catalog
}

// explain turns store and policy errors into readable messages (policy rules are rendered from
// the message catalog in the configured language).
func (u *userEnv) explain(err error) error {
	if e, ok := rpc.AsError(err); ok {
		return errors.New(u.msgs.T(e.Key, e.Args))
	}
	return err
}

// withStore loads the configuration, opens the primary data source, applies the security
// migrations and runs fn with the built-in store.
func withStore(g *globalFlags, fn func(cmd *cobra.Command, st *userEnv, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := load(g, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
		defer cancel()
		d, err := openSecurityDB(ctx, cfg)
		if err != nil {
			return err
		}
		defer d.Close()
		msgs, err := i18n.New(cfg.I18n.Language, security.Messages())
		if err != nil {
			return err
		}
		cmd.SetContext(ctx)
		st := &userEnv{cfg: cfg, db: d, store: security.OpenStore(d, cfg.Security, security.HashParams{}, time.Now), msgs: msgs}
		return fn(cmd, st, args)
	}
}

func splitRoles(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// readPassword reads a password: the first line of stdin with --password-stdin or when stdin
// is not a terminal, otherwise prompted twice without echo.
func readPassword(cmd *cobra.Command, fromStdin, confirm bool) (string, error) {
	in := cmd.InOrStdin()
	f, isFile := in.(*os.File)
	if fromStdin || !isFile || !term.IsTerminal(int(f.Fd())) {
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		pw := strings.TrimRight(line, "\r\n")
		if pw == "" {
			return "", errors.New("empty password")
		}
		return pw, nil
	}
	prompt := func(label string) (string, error) {
		fmt.Fprint(cmd.ErrOrStderr(), label)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		return string(b), err
	}
	pw, err := prompt("Password: ")
	if err != nil {
		return "", err
	}
	if pw == "" {
		return "", errors.New("empty password")
	}
	if confirm {
		again, err := prompt("Repeat password: ")
		if err != nil {
			return "", err
		}
		if again != pw {
			return "", errors.New("the passwords do not match")
		}
	}
	return pw, nil
}

// printQR draws text as a QR code with half-block characters, two modules per character row,
// light modules drawn (for the usual dark terminal background) inside a quiet zone.
func printQR(w io.Writer, text string) error {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return err
	}
	const quiet = 2
	b := code.Bounds()
	dark := func(x, y int) bool {
		if x < b.Min.X || y < b.Min.Y || x >= b.Max.X || y >= b.Max.Y {
			return false
		}
		r, _, _, _ := code.At(x, y).RGBA()
		return r < 0x8000
	}
	var sb strings.Builder
	for y := b.Min.Y - quiet; y < b.Max.Y+quiet; y += 2 {
		for x := b.Min.X - quiet; x < b.Max.X+quiet; x++ {
			top, bottom := !dark(x, y), !dark(x, y+1)
			switch {
			case top && bottom:
				sb.WriteString("█")
			case top:
				sb.WriteString("▀")
			case bottom:
				sb.WriteString("▄")
			default:
				sb.WriteString(" ")
			}
		}
		sb.WriteString("\n")
	}
	_, err = io.WriteString(w, sb.String())
	return err
}
