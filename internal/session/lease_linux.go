package session

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// hostID is the host name, the boot and the pid namespace: a pid means one process only within
// one namespace of one boot, and containers on one kernel may share a host name. "" when /proc
// cannot tell, so that no lease is taken for dead on a reading of /proc that fails.
func hostID() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	name, _ := os.Hostname()
	return name + " " + strings.TrimSpace(string(boot)) + " " + ns
}

// processStart is the process's start time in clock ticks since boot (field 22 of
// /proc/PID/stat); "" if it cannot be read.
func processStart(pid int) string {
	_, start, err := procStat(pid)
	if err != nil {
		return ""
	}
	return start
}

// processGone reports whether pid is no process, a process that has exited (a zombie its
// parent has not reaped), or a process that started at another time than start.
func processGone(pid int, start string) bool {
	state, now, err := procStat(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	case state == "Z" || state == "X":
		return true
	}
	return start != "" && now != start
}

// procStat reads a process's state and start time from /proc/PID/stat.
func procStat(pid int) (state, start string, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", err
	}
	// The command name (field 2) is in parentheses and may hold spaces and parentheses itself:
	// the fields after it start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", "", errors.New("stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 { // fields 3 (state) to 22 (starttime)
		return "", "", errors.New("stat: too few fields")
	}
	return f[0], f[19], nil
}
