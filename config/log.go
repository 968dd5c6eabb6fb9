package config

import (
	"fmt"
	"log/slog"
	"strings"
)

// LogLevel is the minimum level of the process log.
type LogLevel string

// Log levels (SVC_LOG_LEVEL).
const (
	LogDebug LogLevel = "debug"
	LogInfo  LogLevel = "info"
	LogWarn  LogLevel = "warn"
	LogError LogLevel = "error"
)

// Languages of the message catalogs (SVC_I18N_LANGUAGE). English is svc's default
// (spec/README.md: a deliberate difference from the original's zh-CN).
const (
	LanguageEnglish = "en"
	LanguageChinese = "zh-CN"
)

// Log is the svc.log section. It is not in the spec's key list: its one key comes from the
// common environment variable SVC_LOG_LEVEL, which the generic override rule maps to
// svc.log.level, so the file may set it too.
type Log struct {
	// Level is svc.log.level / SVC_LOG_LEVEL: debug, info (default), warn or error; case is
	// ignored and "warning" is accepted for warn.
	Level LogLevel `toml:"level"`
}

func (l *Log) applyDefaults() {
	lv := LogLevel(strings.ToLower(strings.TrimSpace(string(l.Level))))
	if lv == "warning" {
		lv = LogWarn
	}
	l.Level = orDefault(lv, LogInfo)
}

func (l *Log) validate() []error {
	switch l.Level {
	case "", LogDebug, LogInfo, LogWarn, LogError:
		return nil
	}
	return []error{fmt.Errorf("svc.log.level %q: %w", l.Level, ErrInvalidLogLevel)}
}

// Slog returns the log/slog level of l; an unknown level maps to info.
func (l LogLevel) Slog() slog.Level {
	switch l {
	case LogDebug:
		return slog.LevelDebug
	case LogWarn:
		return slog.LevelWarn
	case LogError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// I18n is the svc.i18n section. Like Log it is not in the spec's key list: its key comes from
// SVC_I18N_LANGUAGE (mapped to svc.i18n.language), and the file may set it too.
type I18n struct {
	// Language is svc.i18n.language / SVC_I18N_LANGUAGE: the process-wide message language,
	// "en" (default) or "zh-CN". The spellings en-US, en-GB, zh, zh_CN, zh-cn and zh-Hans are
	// accepted and normalised.
	Language string `toml:"language"`
}

func (i *I18n) applyDefaults() {
	if norm, ok := normalizeLanguage(i.Language); ok {
		i.Language = norm
	}
}

func (i *I18n) validate() []error {
	if _, ok := normalizeLanguage(i.Language); ok {
		return nil
	}
	return []error{fmt.Errorf("svc.i18n.language %q: %w", i.Language, ErrInvalidLanguage)}
}

// normalizeLanguage maps an accepted spelling to en or zh-CN ("" is English). It mirrors
// i18n.Normalize, which config may not import (config imports nothing of svc).
func normalizeLanguage(lang string) (string, bool) {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(lang), "_", "-")) {
	case "", "en", "en-us", "en-gb":
		return LanguageEnglish, true
	case "zh", "zh-cn", "zh-hans":
		return LanguageChinese, true
	}
	return "", false
}
