package svc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
)

// greetParams are the params of shop/greeting.say.
type greetParams struct {
	Name string `json:"name"`
}

// Validate requires a name (400/1400 otherwise).
func (p *greetParams) Validate() error {
	var c rpc.Check
	c.Required("name", p.Name != "")
	return c.Err()
}

// errShopClosed is a host business error; its message key is in the module's own catalog.
var errShopClosed = rpc.NewError(2000, 200, "shop_closed")

// shopModule is a host module: built from the server's dependencies, it adds a resource and its
// messages (<lang>/*.json, merged into the process catalog at build).
func shopModule(d app.Deps) (app.Module, error) {
	say := func(ctx context.Context, c rpc.Call, p greetParams) (string, error) {
		d.Logger.DebugContext(ctx, "greeting", slog.String("name", p.Name))
		return "hello, " + p.Name, nil
	}
	closed := func(context.Context, rpc.Call, rpc.NoParams) (any, error) { return nil, errShopClosed }
	return app.Module{
		Name: "shop",
		Resources: []rpc.Resource{{Name: "shop/greeting", Ops: []rpc.Op{
			rpc.Handle("say", say, rpc.RequiredPermission("shop.greeting.say")),
			rpc.Handle("closed", closed, rpc.Public()),
		}}},
		Messages: fstest.MapFS{
			"en/shop.json":    {Data: []byte(`{"shop_closed":"The shop is closed"}`)},
			"zh-CN/shop.json": {Data: []byte(`{"shop_closed":"商店已关闭"}`)},
		},
	}, nil
}

// exampleConfig is a code-built configuration on a temporary SQLite database; cleanup removes it.
func exampleConfig() (*config.Config, func()) {
	dir, err := os.MkdirTemp("", "svc-example")
	if err != nil {
		panic(err)
	}
	cfg := config.Default()
	cfg.App.Port = 8080 // required; Start does not listen (Run does)
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: {Type: config.SQLite, Path: filepath.Join(dir, "svc.db")}}
	cfg.Security.Secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	return cfg, func() { os.RemoveAll(dir) }
}

// A host application adds its own module with WithModule, after the built-in ones, and calls its
// operations in process through the engine (as cron jobs and the MCP endpoint do).
func ExampleWithModule() {
	cfg, cleanup := exampleConfig()
	defer cleanup()

	srv, err := svc.New(cfg, svc.WithLogger(slog.New(slog.DiscardHandler)), svc.WithModule(shopModule))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	running, err := srv.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer srv.Stop(ctx)

	out, err := running.Engine().Call(ctx, rpc.System(), "shop/greeting", "say", "v1", json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(out, err)
	_, err = running.Engine().Call(ctx, nil, "shop/greeting", "say", "v1", json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(err)
	_, err = running.Engine().Call(ctx, nil, "shop/greeting", "closed", "v1", nil)
	fmt.Println(err)
	// Output:
	// hello, Ada <nil>
	// rpc error 1000 (security_unauthenticated)
	// rpc error 2000 (shop_closed)
}

// orderPlaced is a host event; its EventType names it on the bus.
type orderPlaced struct {
	OrderID string `json:"orderId"`
}

// EventType returns the event's type.
func (orderPlaced) EventType() string { return "shop.order.placed" }

// A host module subscribes while it is built, through app.Deps.Events: the bus starts before the
// modules and keeps these subscriptions. Storage events work the same way
// (event.SubscribeTyped with storage.FileUploaded, and event.WithGroup: they come through the
// outbox, an at-least-once route). Publishing is for after Start: from requests,
// workers or, as here, host code through Running.Events.
func ExampleWithModule_subscribe() {
	cfg, cleanup := exampleConfig()
	defer cleanup()

	placed := make(chan string, 1)
	notifier := func(d app.Deps) (app.Module, error) {
		_, err := event.SubscribeTyped(d.Events, func(_ context.Context, _ *event.Envelope, o orderPlaced) error {
			placed <- o.OrderID
			return nil
		})
		return app.Module{Name: "notifier"}, err
	}
	srv, err := svc.New(cfg, svc.WithLogger(slog.New(slog.DiscardHandler)), svc.WithModule(notifier))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	running, err := srv.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer srv.Stop(ctx)

	if err := running.Events().Publish(ctx, orderPlaced{OrderID: "A-1"}); err != nil {
		panic(err)
	}
	fmt.Println("placed", <-placed)
	// Output: placed A-1
}
