package upstream

import (
	"bytes"
	"os"
	"strconv"
)

// treeWork measures the work done so far by the processes that carry tag:
// their CPU time and bytes read and written. A change says the tree is
// doing something.
func treeWork(tag string) uint64 {
	var sum uint64
	for _, pid := range taggedProcesses(func(t string) bool { return t == tag }) {
		sum += procCPU(pid) + procIO(pid)
	}
	return sum
}

// procCPU is pid's utime, stime, cutime and cstime from /proc/<pid>/stat,
// in clock ticks.
func procCPU(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if i < 0 {
		return 0
	}
	fields := bytes.Fields(b[i+1:])
	var sum uint64
	for _, f := range fields[min(11, len(fields)):min(15, len(fields))] { // fields 14 to 17 of stat(5)
		n, _ := strconv.ParseUint(string(f), 10, 64)
		sum += n
	}
	return sum
}

// procIO is the bytes pid read and wrote (rchar, wchar) from
// /proc/<pid>/io; 0 where it cannot be read.
func procIO(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	var sum uint64
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if bytes.HasPrefix(line, []byte("rchar: ")) || bytes.HasPrefix(line, []byte("wchar: ")) {
			n, _ := strconv.ParseUint(string(line[len("rchar: "):]), 10, 64)
			sum += n
		}
	}
	return sum
}
