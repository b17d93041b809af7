package pod

import "io"

// ParseCommand is `dbperf-runner parse`: a saved output parsed again, as
// exec parses and judges it, for a person (not a pod).
type ParseCommand struct {
	Workload string
	// Input is the tool's output or a JSON result document ("-": stdin).
	Input string
	// ExitCode is the tool's, when known.
	ExitCode string
	// MaxErrorPercent judges failed requests as exec does; negative: not.
	MaxErrorPercent float64
	Prepare         bool
	// ResultFiles are [NAME=]PATH: NAME is the base name the parser
	// looks the file up by (default: PATH's).
	ResultFiles  []string
	ParserConfig string
}

func (c *ParseCommand) bind(t *flagTable) {
	t.str(&c.Workload, flagWorkload, "", "the workload whose parser reads the output")
	t.str(&c.Input, flagInput, "-", "the tool's output (text, or a JSON result document); - is stdin")
	t.str(&c.ExitCode, flagExitCode, "", "the tool's exit code, when known")
	t.float(&c.MaxErrorPercent, flagMaxErrorPercent, -1, "judge failed requests as exec does (exec's default is 0); negative: do not judge")
	t.boolean(&c.Prepare, flagPrepare, "the output of a prepare step: judged as exec --"+flagPrepare+" judges it")
	t.list(&c.ResultFiles, flagResultFile, "[NAME=]PATH: a result file the tool wrote beside its output, found by the parser under NAME (default: PATH's base name, as exec hands files over) (repeatable)")
	t.str(&c.ParserConfig, flagParserConfig, "", "a file configuring the workload's parser, as exec takes it")
}

// Args is the command line after the runner's name.
func (c ParseCommand) Args() []string {
	var t flagTable
	c.bind(&t)
	return append([]string{CommandParse}, t.render()...)
}

// ParseParse reads parse's arguments (after "parse").
func ParseParse(args []string, output io.Writer) (ParseCommand, error) {
	var c ParseCommand
	t := flagTable{parsing: true}
	c.bind(&t)
	_, err := t.parse(CommandParse, args, output)
	return c, err
}

// ShowCommand is `dbperf-runner show`: the result block at the end of a
// runner's log as a table.
type ShowCommand struct {
	// Input is a dbperf-runner log ("-": stdin).
	Input string
	// All prints detail metrics too.
	All bool
}

func (c *ShowCommand) bind(t *flagTable) {
	t.str(&c.Input, flagInput, "-", "a dbperf-runner log; - is stdin")
	t.boolean(&c.All, flagAll, "also print detail metrics (per statement, per bucket)")
}

// Args is the command line after the runner's name.
func (c ShowCommand) Args() []string {
	var t flagTable
	c.bind(&t)
	return append([]string{CommandShow}, t.render()...)
}

// ParseShow reads show's arguments (after "show").
func ParseShow(args []string, output io.Writer) (ShowCommand, error) {
	var c ShowCommand
	t := flagTable{parsing: true}
	c.bind(&t)
	_, err := t.parse(CommandShow, args, output)
	return c, err
}
