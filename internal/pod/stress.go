package pod

import (
	"io"
	"time"
)

// StressCommand is `dbperf-runner stress`: a noisy neighbour's workers
// (internal/runner/stress), run by the stress pod straight from the
// runner's image (InstallerPath), for Duration.
type StressCommand struct {
	CPUWorkers  int
	MemoryBytes int
	DiskWorkers int
	// Dir is where the disk workers write (the pod's scratch volume).
	Dir      string
	Duration time.Duration
	// SummaryFile receives the report (the termination message).
	SummaryFile string
}

// CommandStress is the stress command's name.
const CommandStress = "stress"

// StressDir is where a stress pod mounts its scratch volume.
const StressDir = "/scratch"

func (c *StressCommand) bind(t *flagTable) {
	t.integer(&c.CPUWorkers, flagCPUWorkers, 0, "workers spinning on a core each")
	t.integer(&c.MemoryBytes, flagMemoryBytes, 0, "bytes allocated and kept touched")
	t.integer(&c.DiskWorkers, flagDiskWorkers, 0, "workers each writing and fsyncing a file in --dir")
	t.str(&c.Dir, flagDir, StressDir, "where the disk workers write")
	t.duration(&c.Duration, flagDuration, time.Minute, "how long the workers run")
	t.str(&c.SummaryFile, flagSummaryFile, TerminationLog, "where the report goes")
}

// Args is the stress pod's command line, from InstallerPath.
func (c StressCommand) Args() []string {
	var t flagTable
	c.bind(&t)
	return append([]string{InstallerPath, CommandStress}, t.render()...)
}

// ParseStress reads stress's arguments (after "stress").
func ParseStress(args []string, output io.Writer) (StressCommand, error) {
	var c StressCommand
	t := flagTable{parsing: true}
	c.bind(&t)
	_, err := t.parse(CommandStress, args, output)
	return c, err
}
