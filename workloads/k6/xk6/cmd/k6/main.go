package main

import (
	k6cmd "go.k6.io/k6/cmd"

	_ "github.com/dbperf-io/dbperf-operator/workloads/k6/xk6"
)

func main() { k6cmd.Execute() }
