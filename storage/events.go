package storage

import (
	"context"

	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// EventPattern matches every event the storage module publishes. They are published inside the
// transaction that makes them true, so they must be routed to a transactional transport (outbox
// or tx_memory; wire-core §7.8): the module refuses to build otherwise, and the composition root
// gives the pattern to event.WithTransactionalRoutes.
const EventPattern = "svc.storage.*"

// Names of the events the storage module publishes (wire-core §7.8, with the svc. prefix).
const (
	// EventFileUploaded: complete_upload (or the sweeper's recovery) registered a file.
	EventFileUploaded = "svc.storage.file.uploaded"
	// EventFileClaimed: host code adopted an uploaded file into a business record.
	EventFileClaimed = "svc.storage.file.claimed"
	// EventFileDeleted: the delete worker removed a queued object.
	EventFileDeleted = "svc.storage.file.deleted"
	// EventDeleteDeadLetter: the delete worker gave up on an object after delete_max_attempts.
	EventDeleteDeadLetter = "svc.storage.delete.dead_letter"
)

// Event is one storage event: its name and one of the payload types below.
type Event struct {
	Name    string
	Payload any
}

// FileUploaded is the payload of EventFileUploaded.
type FileUploaded struct {
	FileKey          string `json:"fileKey"`
	Size             int64  `json:"size"`
	ContentType      string `json:"contentType"`
	OriginalFilename string `json:"originalFilename"`
	UploadedBy       string `json:"uploadedBy"`
}

// FileClaimed is the payload of EventFileClaimed.
type FileClaimed struct {
	FileKey string `json:"fileKey"`
}

// FileDeleted is the payload of EventFileDeleted.
type FileDeleted struct {
	FileKey string `json:"fileKey"`
	Reason  string `json:"reason"`
}

// DeleteDeadLetter is the payload of EventDeleteDeadLetter. LastError is one of
// access_denied, bucket_not_found, session_not_found or transient.
type DeleteDeadLetter struct {
	PendingDeleteID string `json:"pendingDeleteId"`
	FileKey         string `json:"fileKey"`
	Reason          string `json:"reason"`
	Attempts        int    `json:"attempts"`
	LastError       string `json:"lastError"`
}

// EventType methods name each payload's event, so subscribers can use event.SubscribeTyped:
// event.SubscribeTyped(bus, func(ctx context.Context, env *event.Envelope, f storage.FileUploaded) error {...}).

// EventType returns EventFileUploaded.
func (FileUploaded) EventType() string { return EventFileUploaded }

// EventType returns EventFileClaimed.
func (FileClaimed) EventType() string { return EventFileClaimed }

// EventType returns EventFileDeleted.
func (FileDeleted) EventType() string { return EventFileDeleted }

// EventType returns EventDeleteDeadLetter.
func (DeleteDeadLetter) EventType() string { return EventDeleteDeadLetter }

// Publisher is the event interface the event bus implements for the storage module.
//
// Publish is called inside the database transaction that makes the event true, with that
// transaction as tx. A transactional transport (the outbox) writes the event through tx, so
// the event and the change commit together or not at all; other transports may ignore tx. An
// error rolls the change back, so the caller can retry the whole operation. A transaction the
// database aborted as a deadlock victim is run again, so Publish may see the same event more than
// once; only the attempt that commits counts for a transactional transport.
type Publisher interface {
	Publish(ctx context.Context, tx bun.IDB, e Event) error
}

// publish sends e when a publisher is configured.
func (s *Service) publish(ctx context.Context, tx bun.IDB, name string, payload any) error {
	if s.events == nil {
		return nil
	}
	return s.events.Publish(ctx, tx, Event{Name: name, Payload: payload})
}

// BusPublisher returns the Publisher that writes storage events to the event bus inside the
// caller's transaction (event.InTx): the bus writes them through a transactional transport of
// their route (outbox or tx_memory), so a rolled-back attempt publishes nothing. The TxScope
// that runs the after-commit work (tx_memory delivery, waking the outbox relay) is the one inTx
// puts in ctx for each attempt.
func BusPublisher(p event.Publisher) Publisher { return busPublisher{bus: p} }

// busPublisher is the event bus as the storage module's Publisher.
type busPublisher struct{ bus event.Publisher }

var _ Publisher = busPublisher{}

// Publish implements Publisher.
func (b busPublisher) Publish(ctx context.Context, tx bun.IDB, e Event) error {
	return b.bus.Publish(ctx, event.Named{Type: e.Name, Payload: e.Payload}, event.InTx(tx))
}
