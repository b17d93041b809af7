package custom

import (
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	paramName  = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,31}$`)
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:.]{0,127}$`)
	fileName   = regexp.MustCompile(`^[a-zA-Z0-9_-][a-zA-Z0-9._-]{0,127}$`)
)

// Validate re-checks what the schema checks, with every placeholder named
// at its index, and what it cannot check: the size of the sweep.
func (Custom) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	c := spec.Custom
	p := path.Child("custom")
	if c == nil {
		return field.ErrorList{field.Required(p, "custom settings are required")}
	}
	var errs field.ErrorList
	if spec.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), "custom has no default image: name the image holding the tool its command runs"))
	}
	errs = append(errs, validateParameters(c, p.Child("parameters"))...)
	errs = append(errs, validateTemplates(c, p)...)
	errs = append(errs, validatePrepare(c.Prepare, p.Child("prepare"))...)
	return append(errs, validateResults(c, p)...)
}

// validateTemplates checks the command, args and env of a measurement,
// where the parameters' placeholders go.
func validateTemplates(c *benchv1.CustomWorkload, p *field.Path) field.ErrorList {
	var known []string
	for _, prm := range c.Parameters {
		if !slices.Contains(known, prm.Name) {
			known = append(known, prm.Name)
		}
	}
	var errs field.ErrorList
	if len(c.Command) == 0 {
		errs = append(errs, field.Required(p.Child("command"), "the command of a measurement"))
	}
	for i, a := range c.Command {
		errs = append(errs, checkTemplate(a, known, p.Child("command").Index(i))...)
	}
	for i, a := range c.Args {
		errs = append(errs, checkTemplate(a, known, p.Child("args").Index(i))...)
	}
	seen := map[string]bool{}
	for i, e := range c.Env {
		ep := p.Child("env").Index(i)
		switch {
		case !envName.MatchString(e.Name):
			errs = append(errs, field.Invalid(ep.Child("name"), e.Name, "not an environment variable name (letters, digits and _)"))
		case strings.HasPrefix(e.Name, pod.EnvPrefix):
			errs = append(errs, field.Invalid(ep.Child("name"), e.Name, pod.EnvPrefix+" variables are set by the operator"))
		case seen[e.Name]:
			errs = append(errs, field.Duplicate(ep.Child("name"), e.Name))
		}
		seen[e.Name] = true
		errs = append(errs, checkTemplate(e.Value, known, ep.Child("value"))...)
	}
	return errs
}

// validatePrepare: the prepare step runs once, so it has no placeholders.
func validatePrepare(prep *benchv1.CustomPrepare, p *field.Path) field.ErrorList {
	if prep == nil {
		return nil
	}
	var errs field.ErrorList
	if len(prep.Command) == 0 {
		errs = append(errs, field.Required(p.Child("command"), "the command of the prepare step"))
	}
	for i, a := range prep.Command {
		if err := checkNoTemplate(a, p.Child("command").Index(i)); err != nil {
			errs = append(errs, err)
		}
	}
	for i, a := range prep.Args {
		if err := checkNoTemplate(a, p.Child("args").Index(i)); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func validateParameters(c *benchv1.CustomWorkload, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, prm := range c.Parameters {
		ip := path.Index(i)
		switch {
		case !paramName.MatchString(prm.Name):
			errs = append(errs, field.Invalid(ip.Child("name"), prm.Name, "must start with a lower-case letter, then letters and digits (at most 32)"))
		case seen[prm.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), prm.Name))
		}
		seen[prm.Name] = true
		if len(prm.Values) == 0 {
			errs = append(errs, field.Required(ip.Child("values"), "at least one value"))
		}
		values := map[int32]bool{}
		for j, v := range prm.Values {
			switch {
			case v < 0:
				errs = append(errs, field.Invalid(ip.Child("values").Index(j), v, "must not be negative"))
			case values[v]:
				// Two steps of one name: status keys steps by name.
				errs = append(errs, field.Duplicate(ip.Child("values").Index(j), v))
			}
			values[v] = true
		}
	}
	if n := sweepSize(c); n > maxSteps {
		errs = append(errs, field.TooMany(path, n, maxSteps))
	}
	return errs
}

func validateResults(c *benchv1.CustomWorkload, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch c.Format {
	case benchv1.CustomResultJSON, benchv1.CustomLines, benchv1.CustomOpenMetrics:
	default:
		errs = append(errs, field.NotSupported(p.Child("format"), c.Format,
			[]benchv1.CustomResultFormat{benchv1.CustomResultJSON, benchv1.CustomLines, benchv1.CustomOpenMetrics}))
	}
	if c.ResultFile != "" && !fileName.MatchString(c.ResultFile) {
		errs = append(errs, field.Invalid(p.Child("resultFile"), c.ResultFile, "a file name in the output directory, such as results.txt (no directory)"))
	}
	if !metricName.MatchString(c.PrimaryMetric.Name) {
		errs = append(errs, field.Invalid(p.Child("primaryMetric", "name"), c.PrimaryMetric.Name, "the name of a metric of the results, such as opsPerSecond"))
	}
	seen := map[string]bool{}
	for i, m := range c.Metrics {
		mp := p.Child("metrics").Index(i)
		switch {
		case !metricName.MatchString(m.Name):
			errs = append(errs, field.Invalid(mp.Child("name"), m.Name, "the name of a metric of the results"))
		case seen[m.Name]:
			errs = append(errs, field.Duplicate(mp.Child("name"), m.Name))
		}
		seen[m.Name] = true
		if m.Unit == "" && m.Direction == "" {
			errs = append(errs, field.Required(mp, "a declaration gives a unit, a direction or both"))
		}
		switch m.Direction {
		case "", results.HigherIsBetter, results.LowerIsBetter, results.Neutral:
		default:
			errs = append(errs, field.NotSupported(mp.Child("direction"), m.Direction, directions))
		}
	}
	switch c.Database {
	case "", benchv1.CustomPostgres, benchv1.CustomMySQL, benchv1.CustomValkey, benchv1.CustomMongoDB, benchv1.CustomOpenSearch:
	default:
		errs = append(errs, field.NotSupported(p.Child("database"), c.Database, []benchv1.CustomDatabase{
			benchv1.CustomPostgres, benchv1.CustomMySQL, benchv1.CustomValkey, benchv1.CustomMongoDB, benchv1.CustomOpenSearch}))
	}
	return errs
}

var directions = []string{string(results.HigherIsBetter), string(results.LowerIsBetter), string(results.Neutral)}
