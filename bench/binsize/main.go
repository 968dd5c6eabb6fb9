// Command binsize says what a Go binary's size buys: it sums the symbol sizes of
// `go tool nm -size` by module (from the binary's own build information, `go version -m`), and
// svc's own packages one by one, code (text) and data (read-only and writable) apart.
//
//	go build -o .cache/bin/svc ./cmd/svc && go run ./bench/binsize .cache/bin/svc
//	go run ./bench/binsize -top 40 -markdown .cache/bin/svc
//
// The symbols cover the code, the read-only data and the variables; the rest of the file is the
// runtime's tables (pclntab: function names, line tables) and headers, printed as one line. Only
// the pages a process touches count in its resident set: a module that is linked but not called
// costs disk, not RSS.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// svcModule is the module whose packages are listed one by one.
const svcModule = "github.com/svc-framework/svc"

// size is a group's bytes in the file: code (.text) and data (read-only data, type and function
// tables, initialised variables). Zeroed variables (.bss, .noptrbss) take no room in the file
// and no memory until written; they are summed apart.
type size struct{ text, data, bss int64 }

func (s size) total() int64 { return s.text + s.data }

func main() {
	top := flag.Int("top", 30, "rows to print (the rest are summed in one row)")
	markdown := flag.Bool("markdown", false, "print a Markdown table")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: binsize [-top N] [-markdown] BINARY")
	}
	bin := flag.Arg(0)
	mods, err := modules(bin)
	if err != nil {
		log.Fatal(err)
	}
	bss, err := bssRanges(bin)
	if err != nil {
		log.Fatal(err)
	}
	groups, err := symbolSizes(bin, mods, bss)
	if err != nil {
		log.Fatal(err)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		log.Fatal(err)
	}
	tables, err := sectionSizes(bin)
	if err != nil {
		log.Fatal(err)
	}
	print(groups, tables, fi.Size(), *top, *markdown)
}

// modules lists the module paths of the binary's build information, the main module first.
func modules(bin string) ([]string, error) {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go version -m: %w", err)
	}
	var mods []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && (f[0] == "mod" || f[0] == "dep") {
			mods = append(mods, f[1])
		}
	}
	// Longest first: a nested module (bun/dialect/pgdialect) wins over its parent (bun).
	slices.SortFunc(mods, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return mods, sc.Err()
}

// symbolSizes sums go tool nm -size by group: svc's packages one by one, other modules whole,
// the standard library as "std" plus its biggest packages.
func symbolSizes(bin string, mods []string, bss [][2]uint64) (map[string]size, error) {
	out, err := exec.Command("go", "tool", "nm", "-size", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool nm: %w", err)
	}
	groups := map[string]size{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		// address size type name...
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || n == 0 {
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			continue
		}
		g := group(pkgOf(strings.Join(f[3:], " ")), mods)
		s := groups[g]
		switch {
		case f[2] == "T" || f[2] == "t":
			s.text += n
		case slices.ContainsFunc(bss, func(r [2]uint64) bool { return addr >= r[0] && addr < r[1] }):
			s.bss += n
		default:
			s.data += n
		}
		groups[g] = s
	}
	return groups, sc.Err()
}

// bssRanges are the address ranges of the binary's zeroed sections.
func bssRanges(bin string) ([][2]uint64, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]uint64
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS {
			out = append(out, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	return out, nil
}

// sectionSizes sums the sections no symbol covers: the runtime's function and line tables
// (.gopclntab, mapped and read by stack walks and the collector) and the debug information
// (.debug_*, .symtab, .strtab: in the file only, never mapped).
func sectionSizes(bin string) (map[string]int64, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	for _, s := range f.Sections {
		switch {
		case s.Name == ".gopclntab":
			out["runtime tables (.gopclntab)"] += int64(s.FileSize)
		case strings.HasPrefix(s.Name, ".debug_") || s.Name == ".symtab" || s.Name == ".strtab":
			out["debug information and symbol table (not mapped)"] += int64(s.FileSize)
		}
	}
	return out, nil
}

// pkgOf is the package path of a symbol name: up to the first dot after the last slash
// ("type:", "go:" and similar prefixes are the linker's own).
func pkgOf(sym string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "go:itab.*", "go:itab."} {
		sym = strings.TrimPrefix(sym, p)
	}
	if strings.HasPrefix(sym, "type:") || strings.HasPrefix(sym, "go:") || strings.HasPrefix(sym, "runtime.") {
		if strings.HasPrefix(sym, "runtime.") {
			return "runtime"
		}
		return "(linker: types, itabs, strings)"
	}
	sym = strings.TrimPrefix(sym, "*")
	// pkg.F[args] (a generic instantiation), "T,I" (an itab: counted to the type's package),
	// "struct { ... }" (an anonymous type).
	if i := strings.IndexAny(sym, "[, {"); i >= 0 {
		sym = sym[:i]
	}
	if sym == "" || sym == "struct" || sym == "func" || sym == "interface" || strings.HasPrefix(sym, "go.shape") {
		return "(linker: types, itabs, strings)"
	}
	slash := strings.LastIndex(sym, "/")
	dot := strings.Index(sym[slash+1:], ".")
	if dot < 0 {
		return sym
	}
	return sym[:slash+1+dot]
}

// group maps a package to its row.
func group(pkg string, mods []string) string {
	if pkg == svcModule || strings.HasPrefix(pkg, svcModule+"/") {
		rest := strings.TrimPrefix(strings.TrimPrefix(pkg, svcModule), "/")
		if rest == "" {
			return "svc (root: boot)"
		}
		// svc/security/internal/x counts under svc/security.
		if i := strings.Index(rest, "/"); i > 0 && rest[:i] != "internal" && rest[:i] != "cmd" {
			rest = rest[:i]
		}
		return "svc/" + rest
	}
	for _, m := range mods {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	if strings.HasPrefix(pkg, "(") {
		return pkg
	}
	// Standard library: its top-level package (crypto, net, encoding, ...).
	if i := strings.Index(pkg, "/"); i > 0 && !strings.Contains(pkg[:i], ".") {
		pkg = pkg[:i]
	}
	if strings.Contains(pkg, ".") {
		return pkg // vendored or unknown
	}
	return "std " + pkg
}

func print(groups map[string]size, tables map[string]int64, file int64, top int, md bool) {
	type row struct {
		name string
		size
	}
	var rows []row
	var sum size
	for k, v := range groups {
		rows = append(rows, row{k, v})
		sum.text += v.text
		sum.data += v.data
		sum.bss += v.bss
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.total(), a.total()) })
	if len(rows) > top {
		var rest size
		for _, r := range rows[top:] {
			rest.text += r.text
			rest.data += r.data
			rest.bss += r.bss
		}
		rows = append(rows[:top], row{fmt.Sprintf("(%d more groups)", len(rows)-top), rest})
	}
	rows = append(rows, row{"all symbols", sum})
	rest := file - sum.total()
	for _, k := range slices.Sorted(maps.Keys(tables)) {
		rows = append(rows, row{k, size{data: tables[k]}})
		rest -= tables[k]
	}
	rows = append(rows, row{"headers, padding, other sections", size{data: rest}}, row{"file", size{data: file}})
	mib := func(n int64) string { return fmt.Sprintf("%.2f", float64(n)/(1<<20)) }
	if md {
		fmt.Println("| module or svc package | in the file, MiB | code | data | % of the symbols | zeroed variables (not in the file), MiB |")
		fmt.Println("|---|---:|---:|---:|---:|---:|")
	} else {
		fmt.Printf("%-52s %8s %8s %8s %6s %8s\n", "module or svc package", "MiB", "code", "data", "%", "bss")
	}
	for _, r := range rows {
		pct := fmt.Sprintf("%.1f", 100*float64(r.total())/float64(sum.total()))
		if md {
			fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.name, mib(r.total()), mib(r.text), mib(r.data), pct, mib(r.bss))
		} else {
			fmt.Printf("%-52s %8s %8s %8s %6s %8s\n", r.name, mib(r.total()), mib(r.text), mib(r.data), pct, mib(r.bss))
		}
	}
}
