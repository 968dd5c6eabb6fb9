package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// FileName is the configuration file looked for in the search path.
const FileName = "application.toml"

// SourceEmbedded is Config.Source when LoadOptions.Embedded was used.
const SourceEmbedded = "embedded"

// LoadOptions tell Load where to read from. The zero value reads application.toml from the
// spec's search path and the process environment.
type LoadOptions struct {
	// Path is an explicit file to read (for example from a --config flag). When set the search
	// path is not consulted and a missing file is an error.
	Path string
	// Env looks up an environment variable; nil means os.LookupEnv. Tests pass a map lookup.
	Env func(string) (string, bool)
	// Dirs replaces the search directories (tests); nil means SearchPath's directories.
	Dirs []string
	// Embedded is the file content used when no file is found in the search path, for example
	// the binary's built-in default. The environment still overrides it.
	Embedded []byte
}

// SearchPath returns the files Load tries, in order (spec §8.3): ./configs, the directory in
// SVC_CONFIG_PATH, the working directory, ../configs. SVC_CONFIG_PATH may also name the file
// itself when it ends in .toml.
func SearchPath(env func(string) (string, bool)) []string {
	if env == nil {
		env = os.LookupEnv
	}
	var files []string
	add := func(dir string) { files = append(files, filepath.Join(dir, FileName)) }
	add("configs")
	if p, ok := env("SVC_CONFIG_PATH"); ok && strings.TrimSpace(p) != "" {
		if strings.HasSuffix(p, ".toml") {
			files = append(files, p)
		} else {
			add(p)
		}
	}
	add(".")
	add(filepath.Join("..", "configs"))
	return files
}

// Load reads the configuration: the first application.toml of the search path (or opts.Path),
// overlaid with the environment, decoded into the typed sections, and completed with the
// defaults. The warnings name unknown keys ("unknown key svc.storage.max_uplod_size"). Errors
// name the key and wrap ErrInvalidValue; finding no file is an error (ErrConfigNotFound) only
// when the environment does not give SVC_APP_PORT either. Load does not validate: call Validate.
func Load(opts LoadOptions) (*Config, []string, error) {
	env := opts.Env
	if env == nil {
		env = os.LookupEnv
	}
	data, source, err := readFile(opts, env)
	if err != nil {
		return nil, nil, err
	}
	root := map[string]any{}
	if err := toml.Unmarshal(data, &root); err != nil {
		var derr *toml.DecodeError
		if errors.As(err, &derr) {
			row, col := derr.Position()
			return nil, nil, fmt.Errorf("config: %s:%d:%d: %w", source, row, col, err)
		}
		return nil, nil, fmt.Errorf("config: %s: %w", source, err)
	}
	var warnings []string
	svc := map[string]any{}
	for _, k := range sortedKeys(root) {
		if k != "svc" {
			warnings = append(warnings, "unknown key "+k)
			continue
		}
		m, ok := root[k].(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("svc: %w: want a table, got %s", ErrInvalidValue, describe(root[k]))
		}
		svc = m
	}
	applyEnv(svc, env)

	cfg := base()
	d := &decoder{}
	d.decodeStruct("svc", svc, reflect.ValueOf(cfg).Elem())
	warnings = append(warnings, d.warnings...)
	if len(d.errs) > 0 {
		return nil, warnings, errors.Join(d.errs...)
	}
	cfg.applyDefaults()
	cfg.Source = source
	return cfg, warnings, nil
}

// readFile returns the file content and its source name; nil content with an empty source
// means the environment alone configures.
func readFile(opts LoadOptions, env func(string) (string, bool)) ([]byte, string, error) {
	if opts.Path != "" {
		data, err := os.ReadFile(opts.Path)
		if err != nil {
			return nil, "", fmt.Errorf("config: %w", err)
		}
		return data, opts.Path, nil
	}
	files := SearchPath(env)
	if opts.Dirs != nil {
		files = files[:0:0]
		for _, dir := range opts.Dirs {
			files = append(files, filepath.Join(dir, FileName))
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			return data, f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("config: %w", err)
		}
	}
	if len(opts.Embedded) > 0 {
		return opts.Embedded, SourceEmbedded, nil
	}
	if p, ok := env(EnvName("svc.app.port")); ok && strings.TrimSpace(p) != "" {
		return nil, "", nil
	}
	return nil, "", fmt.Errorf("config: no %s in %s and no SVC_APP_PORT in the environment: %w",
		FileName, strings.Join(files, ", "), ErrConfigNotFound)
}
