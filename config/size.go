package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a byte count written in configuration as a number or with a unit: "512", "10kb",
// "10kib", "32mib", "1gib" (units are case-insensitive; kb/mb/gb are decimal, kib/mib/gib binary).
type Size int64

// Common sizes.
const (
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
)

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// ParseSize parses a size string.
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative size %q", s)
	}
	if n > 0 && mult > (1<<63-1)/n {
		return 0, fmt.Errorf("size %q overflows", s)
	}
	return Size(n * mult), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// String renders the size in the largest binary unit that divides it.
func (s Size) String() string {
	switch {
	case s != 0 && s%GiB == 0:
		return strconv.FormatInt(int64(s/GiB), 10) + "gib"
	case s != 0 && s%MiB == 0:
		return strconv.FormatInt(int64(s/MiB), 10) + "mib"
	case s != 0 && s%KiB == 0:
		return strconv.FormatInt(int64(s/KiB), 10) + "kib"
	}
	return strconv.FormatInt(int64(s), 10)
}
