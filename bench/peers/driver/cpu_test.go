package main

import (
	"os"
	"testing"
	"time"
)

// TestCPUTimeCountsTheProcess: cpuTime reads the CPU a process used from
// /proc, so the driver's CPU per turn grows with the work the peer does.
func TestCPUTimeCountsTheProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	pids := []int{os.Getpid()}
	before := cpuTime(pids)
	// Burn CPU until /proc says at least 100 ms more were used (the machine
	// may be shared: wall time says little).
	deadline := time.Now().Add(30 * time.Second)
	x := 0
	for cpuTime(pids)-before < 100*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("cpuTime grew %v in 30 s of busy loop, want >= 100ms", cpuTime(pids)-before)
		}
		for i := 0; i < 1_000_000; i++ {
			x += i
		}
	}
	if got := cpuTime([]int{-1}); got != 0 {
		t.Errorf("cpuTime of no process = %v, want 0", got)
	}
	_ = x
}
