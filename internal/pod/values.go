package pod

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The kinds of field a flag can stand for. Each renders nothing when the
// field is zero; String is safe on a zero value, as the flag package's
// help calls it on one.

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string {
	if v == nil {
		return ""
	}
	return string(*v)
}

func (v *stringValue) args(name string) []string {
	if *v == "" {
		return nil
	}
	return flagArgs(name, string(*v))
}

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	*v = intValue(n)
	return err
}

func (v *intValue) String() string {
	if v == nil {
		return "0"
	}
	return strconv.Itoa(int(*v))
}

func (v *intValue) args(name string) []string {
	if *v == 0 {
		return nil
	}
	return flagArgs(name, v.String())
}

type floatValue float64

func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	*v = floatValue(f)
	return err
}

func (v *floatValue) String() string {
	if v == nil {
		return "0"
	}
	return formatFloat(float64(*v))
}

func (v *floatValue) args(name string) []string {
	if *v == 0 {
		return nil
	}
	return flagArgs(name, v.String())
}

// formatFloat writes a number as the runner's flags take it: 90, 0.5.
func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// setFloat is a float the operator always writes, zero included (a
// threshold whose zero disables it): nil is the runner's default.
type setFloat struct{ p **float64 }

func (v setFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	*v.p = &f
	return err
}

func (v setFloat) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return formatFloat(**v.p)
}

func (v setFloat) args(name string) []string {
	if *v.p == nil {
		return nil
	}
	return flagArgs(name, v.String())
}

type durationValue time.Duration

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	*v = durationValue(d)
	return err
}

func (v *durationValue) String() string {
	if v == nil {
		return "0s"
	}
	return time.Duration(*v).String()
}

func (v *durationValue) args(name string) []string {
	if *v == 0 {
		return nil
	}
	return flagArgs(name, v.String())
}

type boolValue bool

func (v *boolValue) IsBoolFlag() bool { return true }
func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	*v = boolValue(b)
	return err
}

func (v *boolValue) String() string {
	if v == nil {
		return "false"
	}
	return strconv.FormatBool(bool(*v))
}

func (v *boolValue) args(name string) []string {
	if !*v {
		return nil
	}
	return []string{"--" + name}
}

// listValue is a repeatable flag, one element per occurrence, each
// written and read by the element's own format and parse.
type listValue[T any] struct {
	p      *[]T
	format func(T) string
	parse  func(string) (T, error)
}

func (v listValue[T]) Set(s string) error {
	e, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = append(*v.p, e)
	return nil
}

func (v listValue[T]) String() string {
	if v.p == nil {
		return ""
	}
	parts := make([]string, 0, len(*v.p))
	for _, e := range *v.p {
		parts = append(parts, v.format(e))
	}
	return strings.Join(parts, ",")
}

func (v listValue[T]) args(name string) []string {
	var out []string
	for _, e := range *v.p {
		out = append(out, flagArgs(name, v.format(e))...)
	}
	return out
}

// pairsValue is a repeatable NAME=VALUE flag, written in the order of the
// names.
type pairsValue struct{ p *map[string]string }

func (v pairsValue) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE")
	}
	if *v.p == nil {
		*v.p = map[string]string{}
	}
	(*v.p)[k] = val
	return nil
}

func (v pairsValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(v.pairs(), ",")
}

func (v pairsValue) pairs() []string {
	keys := make([]string, 0, len(*v.p))
	for k := range *v.p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+(*v.p)[k])
	}
	return out
}

func (v pairsValue) args(name string) []string {
	var out []string
	for _, kv := range v.pairs() {
		out = append(out, flagArgs(name, kv)...)
	}
	return out
}

// Address is a HOST:PORT flag's value.
type Address struct {
	Host string
	Port int
}

// String is HOST:PORT (brackets around an IPv6 host).
func (a Address) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) }

type addressValue Address

func (v *addressValue) Set(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("the port must be a number between 1 and 65535")
	}
	*v = addressValue{Host: host, Port: n}
	return nil
}

func (v *addressValue) String() string {
	if v == nil || *v == (addressValue{}) {
		return ""
	}
	return Address(*v).String()
}

func (v *addressValue) args(name string) []string {
	if *v == (addressValue{}) {
		return nil
	}
	return flagArgs(name, v.String())
}
