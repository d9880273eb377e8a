package main

// The binary the Dockerfile builds must run on scratch: no dynamic loader, no shared libraries.

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
)

// CheckStatic reports whether the ELF file at path is statically linked.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := readInterp(p)
			return fmt.Errorf("%s: dynamically linked (interpreter %s); build it with CGO_ENABLED=0", path, interp)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s: needs shared libraries %s", path, strings.Join(libs, ", "))
	}
	return nil
}

func readInterp(p *elf.Prog) (string, error) {
	buf := make([]byte, min(p.Filesz, 4096))
	if _, err := p.ReadAt(buf, 0); err != nil {
		return "", err
	}
	return strings.TrimRight(string(buf), "\x00"), nil
}
