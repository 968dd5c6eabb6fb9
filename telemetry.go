package svc

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
)

// newTelemetry builds the operations module (svc.metrics, svc.tracing, svc.pprof) and, with
// tracing on, adds the span hooks to every data source and the kv store client. It runs first
// in build: the bus, the engine and every module take their metrics registerer and tracer from
// it.
func (s *Server) newTelemetry() (*ops.Telemetry, error) {
	tel, err := ops.New(s.cfg, s.logger, s.opts.telemetry)
	if err != nil {
		return nil, err
	}
	if tp := tel.TracerProvider(); tp != nil {
		for name, d := range s.dbs {
			// Every module shares this handle; WithQueryHook would return a copy none of them
			// holds. TODO(#32): hooks given when the handle is opened.
			//lint:ignore SA1019 see above
			d.AddQueryHook(ops.NewDBHook(tp, dbSystem(s.cfg.DataSources[name].Type), name))
		}
		if s.kv != nil {
			s.kv.AddHook(ops.NewRedisHook(tp))
		}
	}
	return tel, nil
}

// wireMetrics registers the collectors that read what the modules already keep, at scrape time
// (ARCHITECTURE.md: modules do not import each other; the composition root joins them here):
// the bus's counters and stream lag, the outbox's row counts, storage's claims and delete queue,
// counters of the storage events and, for the modules the host included (nil otherwise), the
// integration module's invocation counters and approval's open tasks and instances. Security's
// login counters wrap its event sink (secOpts).
func wireMetrics(reg prometheus.Registerer, bus *event.Bus, st *storage.Service, itg *integration.Service, apv *approval.Service) error {
	cs := []prometheus.Collector{ops.BusCollector(bus), ops.OutboxCollector(bus), storageCollector(st)}
	if itg != nil {
		cs = append(cs, integrationCollector(itg.Stats()))
	}
	if apv != nil {
		cs = append(cs, approvalCollector(apv))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return subscribeStorageMetrics(reg, bus)
}

// storageCollector reports storage.Stats: active upload claims and the delete-queue depth.
func storageCollector(st *storage.Service) prometheus.Collector {
	claims := prometheus.NewDesc("svc_storage_active_claims", "Upload claims pending and not expired.", nil, nil)
	depth := prometheus.NewDesc("svc_storage_delete_queue_depth", "Objects waiting in the delete queue (sys_storage_pending_delete).", nil, nil)
	return ops.NewCollector(func(ctx context.Context, ch chan<- prometheus.Metric) {
		stats, err := st.Stats(ctx)
		if err != nil {
			return // left out of this scrape: absent, never a guessed zero
		}
		ch <- prometheus.MustNewConstMetric(claims, prometheus.GaugeValue, float64(stats.ActiveClaims))
		ch <- prometheus.MustNewConstMetric(depth, prometheus.GaugeValue, float64(stats.DeleteQueueDepth))
	}, claims, depth)
}

// integrationCollector reports integration.Stats, this node's invocation counters since start:
// calls by outcome (failure "none" for successes, else the failure kind) and their summed
// duration, per system, contract and direction. Inbound deliveries refused before a contract
// was resolved count under contract "".
func integrationCollector(stats *integration.Stats) prometheus.Collector {
	labels := []string{"system", "contract", "direction"}
	calls := prometheus.NewDesc("svc_integration_invocations_total",
		"Integration invocations on this node by system, contract, direction and failure kind (none = success).",
		append(labels, "failure"), nil)
	seconds := prometheus.NewDesc("svc_integration_invocation_seconds_total",
		"Summed duration of the invocations counted by svc_integration_invocations_total.", labels, nil)
	return ops.NewCollector(func(_ context.Context, ch chan<- prometheus.Metric) {
		for _, st := range stats.InvocationStats() {
			ch <- prometheus.MustNewConstMetric(calls, prometheus.CounterValue, float64(st.Successes), st.System, st.Contract, st.Direction, "none")
			for kind, n := range st.Failures {
				ch <- prometheus.MustNewConstMetric(calls, prometheus.CounterValue, float64(n), st.System, st.Contract, st.Direction, kind)
			}
			ch <- prometheus.MustNewConstMetric(seconds, prometheus.CounterValue, st.TotalDuration.Seconds(), st.System, st.Contract, st.Direction)
		}
	}, calls, seconds)
}

// approvalCollector reports approval.Stats: live tasks and open instances by status.
func approvalCollector(apv *approval.Service) prometheus.Collector {
	tasks := prometheus.NewDesc("svc_approval_tasks", "Live approval tasks by status (pending, waiting), all tenants.", []string{"status"}, nil)
	instances := prometheus.NewDesc("svc_approval_instances", "Open approval instances by status (running, returned), all tenants.", []string{"status"}, nil)
	return ops.NewCollector(func(ctx context.Context, ch chan<- prometheus.Metric) {
		stats, err := apv.Stats(ctx)
		if err != nil {
			return // left out of this scrape: absent, never a guessed zero
		}
		for status, n := range stats.Tasks {
			ch <- prometheus.MustNewConstMetric(tasks, prometheus.GaugeValue, float64(n), status)
		}
		for status, n := range stats.Instances {
			ch <- prometheus.MustNewConstMetric(instances, prometheus.GaugeValue, float64(n), status)
		}
	}, tasks, instances)
}

// metricsGroup is the consumer group of the metrics subscriptions: on an at-least-once route
// each event is counted once across the nodes (sum the series over instances).
const metricsGroup = "svc-ops-metrics"

// subscribeStorageMetrics counts uploaded bytes and delete dead letters from storage's events,
// which are delivered after their transaction commits, so a rolled-back upload is not counted.
func subscribeStorageMetrics(reg prometheus.Registerer, bus *event.Bus) error {
	uploads := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_storage_uploads_total",
		Help: "Files registered by complete_upload (or the sweeper's recovery) on this node."})
	bytes := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_storage_upload_bytes_total",
		Help: "Bytes of the files counted by svc_storage_uploads_total."})
	dead := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_storage_delete_dead_letters_total",
		Help: "Objects the delete worker gave up on after svc.storage.delete_max_attempts."})
	for _, c := range []prometheus.Collector{uploads, bytes, dead} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	if _, err := event.SubscribeTyped(bus, func(_ context.Context, _ *event.Envelope, f storage.FileUploaded) error {
		uploads.Inc()
		bytes.Add(float64(max(f.Size, 0)))
		return nil
	}, event.WithGroup(metricsGroup)); err != nil {
		return err
	}
	_, err := event.SubscribeTyped(bus, func(context.Context, *event.Envelope, storage.DeleteDeadLetter) error {
		dead.Inc()
		return nil
	}, event.WithGroup(metricsGroup))
	return err
}

// loginMetrics wraps the security module's event sink with the login counters:
// svc_security_logins_total{result} and svc_security_lockouts_total. The login type is not a
// label: it comes from the request and would let a client create series.
func loginMetrics(reg prometheus.Registerer, inner security.EventSink) (security.EventSink, error) {
	logins := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_security_logins_total",
		Help: "Login attempts by result (success, failure)."}, []string{"result"})
	locks := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_security_lockouts_total",
		Help: "Accounts locked by the lockout rule."})
	for _, c := range []prometheus.Collector{logins, locks} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	ok, failed := logins.WithLabelValues("success"), logins.WithLabelValues("failure")
	return security.EventSinkFunc(func(ctx context.Context, e security.Event) {
		switch e.Type {
		case security.EventLoginSucceeded:
			ok.Inc()
		case security.EventLoginFailed:
			failed.Inc()
		case security.EventAccountLocked:
			locks.Inc()
		}
		if inner != nil {
			inner.Emit(ctx, e)
		}
	}), nil
}

// dbSystem is the OpenTelemetry db.system.name of a data source type.
func dbSystem(k config.DBKind) string {
	if k == config.Postgres {
		return "postgresql"
	}
	return string(k)
}
