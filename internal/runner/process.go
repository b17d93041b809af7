package runner

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// supervisor runs the tool in a process group of its own, so that stopping
// it also stops what it started (a shell's children, HammerDB's tclsh):
// otherwise an orphan holding the output pipe keeps the runner waiting.
type supervisor struct {
	cmd   *exec.Cmd
	dog   *progress // nil: no watchdog
	poll  time.Duration
	grace time.Duration
	// note prints a runner line between the tool's lines.
	note func(format string, args ...any)
}

// run starts the tool and waits for it. It stops the tool (SIGTERM to the
// group, SIGKILL after the grace period) when ctx ends or the watchdog
// fires, and forwards SIGTERM and SIGINT to the group: a pod's termination
// is meant for everything in it. It returns the wait error and, when the
// watchdog stopped the tool, why.
func (s *supervisor) run(ctx context.Context) (why string, err error) {
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// After the tool exits, a child it left behind may hold the output pipe.
	s.cmd.WaitDelay = s.grace
	if err := s.cmd.Start(); err != nil {
		return "", err
	}
	pgid := s.cmd.Process.Pid
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()

	var tick <-chan time.Time
	if s.dog != nil {
		t := time.NewTicker(s.poll)
		defer t.Stop()
		tick = t.C
	}
	var kill <-chan time.Time
	stop := func() {
		signalGroup(pgid, syscall.SIGTERM)
		kill = time.After(s.grace)
	}
	ctxDone := ctx.Done()
	for {
		select {
		case sig := <-sigs:
			signalGroup(pgid, sig.(syscall.Signal))
		case <-ctxDone:
			ctxDone = nil
			s.note("stopping the tool: %v", context.Cause(ctx))
			stop()
		case <-tick:
			if why = s.dog.expired(); why != "" {
				tick = nil
				s.note("stopping the tool (SIGTERM to its process group, SIGKILL after %s): %s", s.grace, why)
				stop()
			}
		case <-kill:
			s.note("the tool did not exit within %s of SIGTERM: SIGKILL", s.grace)
			signalGroup(pgid, syscall.SIGKILL)
		case err := <-done:
			// Nothing the tool started may outlive it and skew the next step.
			signalGroup(pgid, syscall.SIGKILL)
			return why, err
		}
	}
}

// signalGroup signals every process of the group; one that is gone already
// is not an error worth reporting.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}
