package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procStats is what /proc tells of a process: CPU time used and resident memory.
type procStats struct {
	CPU     time.Duration
	RSS     int64 // bytes, now
	PeakRSS int64 // bytes, the high-water mark
	// RSSFile is the part of RSS backed by files (the binary's pages touched so far, which
	// the kernel can drop and read again); RSSAnon is the rest: the heap, stacks and the
	// runtime's own memory.
	RSSFile, RSSAnon int64
}

// readProc reads /proc/<pid>/stat and /proc/<pid>/status.
func readProc(pid int) (procStats, error) {
	var st procStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, err
	}
	// The command name may hold spaces: fields start after its closing parenthesis.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return st, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	st.CPU = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			st.RSS = kb << 10
		case "VmHWM":
			st.PeakRSS = kb << 10
		case "RssFile":
			st.RSSFile = kb << 10
		case "RssAnon":
			st.RSSAnon = kb << 10
		}
	}
	return st, nil
}

// controlPlaneCPU is the CPU time used so far by the control planes this harness started:
// its kube-apiserver and etcd child processes. A system's cost to the apiserver is part of
// what it costs: the two share the machine's cores.
func controlPlaneCPU() (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := strconv.Itoa(os.Getpid())
	var total time.Duration
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone meanwhile
		}
		open, end := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		if open < 0 || end < open {
			continue
		}
		comm := string(stat[open+1 : end])
		fields := strings.Fields(string(stat[end+1:])) // state, ppid, ...
		if len(fields) < 2 || fields[1] != self || (comm != "kube-apiserver" && comm != "etcd") {
			continue
		}
		st, err := readProc(pid)
		if err != nil {
			continue
		}
		total += st.CPU
	}
	return total, nil
}
