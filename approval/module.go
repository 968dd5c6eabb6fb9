package approval

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval/design"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

//go:embed migrations
var migrationFiles embed.FS

//go:embed messages
var messageFiles embed.FS

// EventPattern is the routing pattern of the module's events: every approval.* event is
// published inside the transaction of its change, so it must be routed to a transactional
// transport (outbox or tx_memory); the module refuses to build otherwise, and the composition
// root gives the pattern to event.WithTransactionalRoutes.
const EventPattern = "approval.*"

// Migrations returns the module's migrations, creating the apv_* tables (wire-approval §3).
func Migrations() *db.Migrations { return db.EmbeddedMigrations("approval", migrationFiles) }

// Messages returns the module's message catalog: messages/<lang>/approval.json and package
// design's approval_form_field_* messages.
func Messages() fs.FS {
	return i18n.Union(i18n.MustSub(messageFiles, "messages"), design.Messages())
}

// Options are what the host plugs into the module. Directory parts left nil fall back to
// Directory; the composition root sets Directory to the built-in user store's directory and
// Tables to the schema module's inspector when the host leaves them nil.
type Options struct {
	// Directory is the organisation the assignees, names and departments come from.
	Directory Directory
	// Assignees replaces Directory's superior, department-leader and role lookups.
	Assignees AssigneeService
	// Users replaces Directory's user-name resolution.
	Users UserInfoResolver
	// Departments replaces Directory's user-department resolution.
	Departments DepartmentResolver
	// Tables inspects the host's tables for business bindings.
	Tables TableInspector
	// Notifier receives the pushes of approval.task.created, approval.task.urged,
	// approval.task.deadline_warning and approval.cc.notified (docs/approval.md); the
	// composition root builds the push module first and gives it here when the host left this
	// nil. Nil: nothing is pushed (the module does not subscribe).
	Notifier Notifier
	// LifecycleHooks are told about every instance creation and status change, inside the
	// command's transaction (an error rolls it back).
	LifecycleHooks []InstanceLifecycleHook
	// InstanceNoGenerator replaces the built-in instance number.
	InstanceNoGenerator InstanceNoGenerator
	// GlobalsResolver fills an instance's globals at start.
	GlobalsResolver InstanceGlobalsResolver
	// BusinessRefProvider supplies a business flow's businessRef when start carries none.
	BusinessRefProvider BusinessRefProvider
}

// Service is the approval module.
type Service struct {
	cfg         config.Approval
	db          *db.DB
	events      app.EventBus
	clock       func() time.Time
	log         *slog.Logger
	assignees   AssigneeService
	users       UserInfoResolver
	departments DepartmentResolver
	tables      TableInspector
	i18n        *i18n.Catalog
	notifier    Notifier // nil: nothing is pushed
	ext         extensions
	graphs      sync.Map // version id → *graph (versions never change once deployed)
	published   sync.Map // publishedKey → version id (a flow's current version number never changes its version)
	// oneDirectory: names and departments come from Options.Directory alone, so the department
	// ResolveUsers answers is the user's department (no second lookup through UserDepartment).
	oneDirectory bool
	// writesAtOnce makes a run execute each write when queued instead of batching it
	// (writeBatch): the unbatched baseline BenchmarkDecide compares against; off in service.
	writesAtOnce atomic.Bool
}

// New builds the module from svc.approval, the primary database and the event bus. It does no
// I/O. It fails when approval.* events are not routed to a transactional transport
// (event.ErrTxRequired / event.ErrNoRouteMatched, naming the rule) or when no directory is given.
func New(deps app.Platform, opts Options) (*Service, error) {
	if deps.Config == nil || deps.DB == nil || deps.Events == nil {
		return nil, errors.New("approval: the configuration, the primary database and the event bus are required")
	}
	if err := deps.Events.RequireTransactional(EventPattern); err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	s := &Service{cfg: deps.Config.Approval, db: deps.DB, events: deps.Events, clock: deps.Clock,
		log: deps.Logger.With(slog.String("module", "approval")), tables: opts.Tables, i18n: deps.I18n,
		assignees: opts.Assignees, users: opts.Users, departments: opts.Departments, ext: extensionsOf(opts),
		notifier: opts.Notifier}
	s.oneDirectory = opts.Directory != nil && opts.Users == nil && opts.Departments == nil
	if d := opts.Directory; d != nil {
		s.assignees = or[AssigneeService](s.assignees, d)
		s.users = or[UserInfoResolver](s.users, d)
		s.departments = or[DepartmentResolver](s.departments, d)
	}
	if s.assignees == nil || s.users == nil || s.departments == nil {
		return nil, errors.New("approval: a directory is required (Options.Directory or each of Assignees, Users, Departments)")
	}
	if err := s.subscribePush(deps.Events); err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	if err := s.registerMetrics(deps.Metrics); err != nil {
		return nil, fmt.Errorf("approval: metrics: %w", err)
	}
	return s, nil
}

func or[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}

// Module lists what the module adds: the approval/* resources of part 1, the migrations
// (svc.approval.auto_migrate or `svc migrate`) and the messages.
func (s *Service) Module() app.Module {
	q := queries{s}
	return app.Module{
		Name: "approval",
		Resources: []rpc.Resource{s.categoryResource(), s.delegationResource(), s.flowResource(), s.instanceResource(),
			q.myResource(), {Name: "approval/admin", Ops: append(append(append(s.AdminOps(), q.adminQueryOps()...), q.adminDetailOp()), s.projectionOps()...)}},
		Messages:    Messages(),
		Workers:     s.workers(),
		Migrations:  Migrations(),
		AutoMigrate: s.cfg.AutoMigrate,
	}
}

// Assignees returns the assignee lookups the module uses (the engine of part 2 resolves through
// them).
func (s *Service) Assignees() AssigneeService { return s.assignees }

// Users returns the user-name resolver the module uses.
func (s *Service) Users() UserInfoResolver { return s.users }

// Departments returns the user-department resolver the module uses.
func (s *Service) Departments() DepartmentResolver { return s.departments }
