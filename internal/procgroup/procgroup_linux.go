package procgroup

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// startLocked starts cmd from a goroutine locked to its OS thread and keeps that goroutine, and
// so the thread, parked until the child has exited. The death signal is tied to the thread that
// forked the child: while the child lives, that thread runs nothing else, so no goroutine can
// lock it and take it down with it, and the signal can only come from nodmix itself dying. The
// goroutine's life is the child's: it returns once the child has exited, reaped or not.
func startLocked(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		pid := cmd.Process.Pid
		started <- nil
		awaitExit(pid)
	}()
	return <-started
}

// awaitExit blocks until process pid has exited, without reaping it: its owner's Wait does that.
// A child already reaped (ECHILD) has exited too.
func awaitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
