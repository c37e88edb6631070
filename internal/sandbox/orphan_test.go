package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestChildEndsWithKilledParent: a nodmix killed outright (SIGKILL, a crash) cannot kill its
// children, and a child inside one native call (a regexp backtracking) never sees its watchdog's
// interrupt: it must still end, not burn a CPU for hours.
func TestChildEndsWithKilledParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs Linux: only there does a child get a signal when its parent dies")
	}
	host := exec.Command(os.Args[0], hostArg, `return /^(?=a)(a+)+$/.test("a".repeat(60) + "b");`)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	pidRE := regexp.MustCompile(`msg="sandbox: run" .*pid=(\d+)`)
	var pid int
	for sc := bufio.NewScanner(out); pid == 0 && sc.Scan(); {
		if m := pidRE.FindStringSubmatch(sc.Text()); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
	}
	if pid == 0 {
		t.Fatal("the host started no run")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	time.Sleep(100 * time.Millisecond) // into the backtracking
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	deadline := time.Now().Add(10 * time.Second) // a hang guard
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still runs 10 s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	m := regexp.MustCompile(`\) (\S)`).FindSubmatch(stat)
	return m != nil && string(m[1]) != "Z"
}
