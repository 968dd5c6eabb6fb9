package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/push"
)

// pushCmd sends pushes from the command line: svc push send --user ID [--role R] [--broadcast]
// --type T [--payload JSON]. This process holds no sockets: it publishes on the cross-node
// relay (svc:push:relay:<db>:<svc.app.name>) and every running node delivers to its own
// connections. Without the key-value store there is no relay and the command fails with
// push.ErrRelayRequired rather than pretending to deliver; host code in the server process uses
// the Notifier (svc.Running.Push) instead.
func pushCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "push", Short: "Send WebSocket pushes to connected clients (needs svc.kvstore for the relay)"}
	var users, roles []string
	var broadcast bool
	var typ, payload string
	send := &cobra.Command{
		Use:   "send --type T (--user ID... | --role R... | --broadcast) [--payload JSON]",
		Short: "Push one message to the connections of users, roles or everybody on every node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			msg := push.NewMessage(typ, nil)
			if payload != "" {
				if !json.Valid([]byte(payload)) {
					return errors.New("--payload is not valid JSON")
				}
				msg.Payload = json.RawMessage(payload)
			}
			var targets []push.Target
			if len(users) > 0 {
				targets = append(targets, push.ToUsers(users...))
			}
			if len(roles) > 0 {
				targets = append(targets, push.ToRoles(roles...))
			}
			if broadcast {
				targets = append(targets, push.Broadcast())
			}
			cfg, err := load(g, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			client, err := kv.Open(ctx, cfg.KVStore)
			if err != nil {
				return err
			}
			if client != nil {
				defer client.Close()
			}
			id, err := push.Send(ctx, cfg, client, msg, targets...)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "push %s published\n", id)
			return nil
		},
	}
	send.Flags().StringSliceVar(&users, "user", nil, "principal id to push to (repeatable)")
	send.Flags().StringSliceVar(&roles, "role", nil, "role whose holders get the push (repeatable)")
	send.Flags().BoolVar(&broadcast, "broadcast", false, "push to every connection")
	send.Flags().StringVar(&typ, "type", "", "message type (required)")
	send.Flags().StringVar(&payload, "payload", "", "message payload as JSON")
	c.AddCommand(send)
	return c
}
