//go:build linux

package platform

import (
	"os"
	"strconv"
	"strings"
)

// procStat returns the state letter and process group of pid from
// /proc/<pid>/stat; ok is false when it cannot be read.
func procStat(pid string) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat") //replay:door kernel file, not a run's, project's or user's file
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may hold spaces: the fields
	// after the last ')' are state, ppid, pgrp, ...
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(fields[2])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}

// zombie reports whether pid is known to have exited and only waits to be
// reaped (state Z or X).
func zombie(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return ok && (state == 'Z' || state == 'X')
}

// onlyZombies reports whether every process of group pgid is known to be a
// zombie; false when /proc cannot tell (the caller then treats the group as
// alive).
func onlyZombies(pgid int) bool {
	d, err := os.Open("/proc") //replay:door kernel directory, not a run's, project's or user's file
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	found := false
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		state, pgrp, ok := procStat(name)
		if !ok || pgrp != pgid {
			continue
		}
		if state != 'Z' && state != 'X' {
			return false
		}
		found = true
	}
	return found
}
