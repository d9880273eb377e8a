//go:build unix

package builtin

import (
	"io/fs"
	"syscall"
)

// hardLinks is the number of names the file has (its link count).
func hardLinks(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
