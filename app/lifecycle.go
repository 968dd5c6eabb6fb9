package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// StartModules starts modules in order. If one fails, the modules already started are stopped in
// reverse order and the error names the module that failed.
func StartModules(ctx context.Context, logger *slog.Logger, mods []Module) error {
	for i, m := range mods {
		if m.Start == nil {
			continue
		}
		if err := m.Start(ctx); err != nil {
			rollback := StopModules(context.WithoutCancel(ctx), logger, mods[:i])
			return errors.Join(fmt.Errorf("start module %s: %w", m.Name, err), rollback)
		}
		logger.Debug("module started", slog.String("module", m.Name))
	}
	return nil
}

// StopModules stops modules in reverse order. Every module is asked to stop even if an earlier
// one failed; the errors are joined.
func StopModules(ctx context.Context, logger *slog.Logger, mods []Module) error {
	var errs []error
	for i := len(mods) - 1; i >= 0; i-- {
		m := mods[i]
		if m.Stop == nil {
			continue
		}
		if err := m.Stop(ctx); err != nil {
			logger.Error("module stop failed", slog.String("module", m.Name), slog.Any("error", err))
			errs = append(errs, fmt.Errorf("stop module %s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// CollectWorkers lists the workers of all modules, names prefixed with the module name.
func CollectWorkers(mods []Module) []Worker {
	var ws []Worker
	for _, m := range mods {
		for _, w := range m.Workers {
			w.Name = m.Name + "." + w.Name
			ws = append(ws, w)
		}
	}
	return ws
}
