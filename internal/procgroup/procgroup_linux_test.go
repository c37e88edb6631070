package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes the test binary a stand-in for nodmix: it starts `sleep 300` with Start,
// prints its pid and waits to be killed.
const parentEnv = "PROCGROUP_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(parentEnv) == "1" {
		cmd := exec.Command("sleep", "300")
		if err := Start(cmd); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		_ = cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestChildDiesWithParent: a parent killed with SIGKILL, which can clean nothing up, does not
// leave its command behind: the kernel kills it within a second.
func TestChildDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), parentEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("the parent did not report its child: %v", err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(line))
	if child <= 0 || !alive(child) {
		t.Fatalf("child %q is not running", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	killed := time.Now()
	for alive(child) {
		if time.Since(killed) > time.Second {
			t.Fatalf("sleep %d still runs a second after its parent was killed", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartSurvivesThreadExit: the death signal follows the thread that forked the child. A
// child started with Start lives on when the goroutine that asked for it exits while locked to
// its thread (which ends that thread); one started with Own and a plain cmd.Start from such a
// goroutine is killed, which is what Start is for.
func TestStartSurvivesThreadExit(t *testing.T) {
	startFrom := func(start func(*exec.Cmd) error) *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		errc := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			errc <- start(cmd)
			// Returning while locked ends this goroutine's thread, unless it is the process's
			// main thread, which Go parks for good instead.
		}()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	viaStart := startFrom(Start)
	t.Cleanup(func() {
		_ = Kill(viaStart.Process.Pid)
		_ = viaStart.Wait()
	})

	// Two plain children: at most one of their goroutines can have run on the main thread.
	died := make(chan *exec.Cmd, 2)
	for range 2 {
		plain := startFrom(func(cmd *exec.Cmd) error { Own(cmd); return cmd.Start() })
		go func() {
			_ = plain.Wait()
			died <- plain
		}()
		t.Cleanup(func() { _ = Kill(plain.Process.Pid) })
	}
	select {
	case plain := <-died:
		ws, _ := plain.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("a plain child ended without the death signal: %v", plain.ProcessState)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the plain children outlived their threads: the death signal is not set")
	}
	if !alive(viaStart.Process.Pid) {
		t.Fatal("a child started with Start died when the goroutine that asked for it exited")
	}
}
