package kubelet

import (
	"sort"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

const (
	nanos     = 1e-9 // core-nanoseconds per second → cores
	cpuCores  = "cpuCores"
	netRx     = "networkReceiveBytesPerSecond"
	netTx     = "networkTransmitBytesPerSecond"
	wsBytes   = "memoryWorkingSetBytes"
	bytesUnit = "bytes"
	rateUnit  = "bytes/s"
)

// podResult is what the target's sum needs of one pod.
type podResult struct {
	pod            Pod
	cpu, rx, tx    []interval
	workingSet     []reading
	workingSetMax  float64
	haveWorkingSet bool
}

// pod adds one pod's figures from the polls of its node.
func (r report) pod(pod Pod, polls []Poll) podResult {
	s := pod.Subject()
	var rd podReadings
	read := 0
	for _, p := range polls {
		if p.Err != nil || p.Summary == nil {
			continue // the node's warning says so
		}
		read++
		found := false
		for i := range p.Summary.Pods {
			ps := &p.Summary.Pods[i]
			if ps.PodRef.Namespace == pod.Namespace && ps.PodRef.Name == pod.Name {
				rd.record(p, ps)
				found = true
				break
			}
		}
		if !found {
			rd.missing++
		}
	}
	if rd.missing > 0 {
		r.warn("pod %s/%s (%s) was missing from %d of %d summaries of node %s", pod.Namespace, pod.Name, s.Label(), rd.missing, read, pod.Node)
	}
	res := podResult{pod: pod}
	res.cpu = r.counter(cpuCores, s, "cores", rd.cpu, nanos, true)
	if res.cpu != nil && pod.CPULimitCores > 0 {
		r.figure("cpuLimitPercent", s, 100*mean(res.cpu)*nanos/pod.CPULimitCores, "%")
	}
	if res.cpu != nil && pod.NodeAllocatableCores > 0 {
		r.figure("cpuNodeAllocatablePercent", s, 100*mean(res.cpu)*nanos/pod.NodeAllocatableCores, "%")
	}
	if len(rd.cpu) == 0 && read > 0 && rd.missing < read {
		r.warn("no CPU statistics for %s in the summaries of node %s", s.Label(), pod.Node)
	}
	if samples := gaugeSamples(rd.workingSet); len(samples) > 0 {
		res.workingSet, res.haveWorkingSet = rd.workingSet, true
		res.workingSetMax = telemetry.NearestRank(telemetry.SampleValues(samples), 100)
		r.figure(wsBytes+"Max", s, res.workingSetMax, bytesUnit)
		r.series(wsBytes, s, bytesUnit, samples)
	}
	// Pod network is absent where pods share the host's network (hostNetwork,
	// the test kubelet): no warning, the node's interfaces carry it.
	res.rx = r.counter(netRx, s, rateUnit, rd.rx, 1, false)
	res.tx = r.counter(netTx, s, rateUnit, rd.tx, 1, false)
	return res
}

var targetSum = telemetry.Subject{Role: telemetry.RoleTarget}

// targetSum adds the figures summed over the target's pods: means add up,
// series add up round by round, the working set's maxima add up (as the
// Prometheus source does).
func (r report) targetSum(pods []podResult) {
	cpu := make([][]interval, 0, len(pods))
	var rx, tx [][]interval
	var limit, ws float64
	limited, haveWS := true, false
	var wsRounds [][]reading
	for _, p := range pods {
		if p.cpu != nil {
			cpu = append(cpu, p.cpu)
		}
		rx, tx = appendIf(rx, p.rx), appendIf(tx, p.tx)
		limit += p.pod.CPULimitCores
		limited = limited && p.pod.CPULimitCores > 0
		if p.haveWorkingSet {
			ws, haveWS = ws+p.workingSetMax, true
			wsRounds = append(wsRounds, p.workingSet)
		}
	}
	if len(cpu) > 0 {
		total := sumMeans(cpu) * nanos
		r.figure(cpuCores, targetSum, total, "cores")
		samples := sumRounds(cpu, nanos)
		r.figure(cpuCores+"P95", targetSum, telemetry.NearestRank(telemetry.SampleValues(samples), 95), "cores")
		r.series(cpuCores, targetSum, "cores", samples)
		if limited && len(cpu) == len(pods) {
			r.figure("cpuLimitPercent", targetSum, 100*total/limit, "%")
		}
	}
	if haveWS {
		r.figure(wsBytes+"Max", targetSum, ws, bytesUnit)
		r.series(wsBytes, targetSum, bytesUnit, sumGaugeRounds(wsRounds))
	}
	for _, q := range []struct {
		name string
		ivs  [][]interval
	}{{netRx, rx}, {netTx, tx}} {
		if len(q.ivs) > 0 {
			r.figure(q.name, targetSum, sumMeans(q.ivs), rateUnit)
			r.series(q.name, targetSum, rateUnit, sumRounds(q.ivs, 1))
		}
	}
}

func appendIf(all [][]interval, ivs []interval) [][]interval {
	if ivs == nil {
		return all
	}
	return append(all, ivs)
}

func sumMeans(all [][]interval) float64 {
	var sum float64
	for _, ivs := range all {
		sum += mean(ivs)
	}
	return sum
}

// point is one subject's value in one round of polls.
type point struct {
	round int
	t     time.Time
	v     float64
}

func ratePoints(ivs []interval, scale float64) []point {
	out := make([]point, len(ivs))
	for i, iv := range ivs {
		out[i] = point{iv.round, iv.end, iv.rate * scale}
	}
	return out
}

func gaugePoints(rs []reading) []point {
	out := make([]point, len(rs))
	for i, rd := range rs {
		out[i] = point{rd.round, rd.at, rd.v}
	}
	return out
}

// sumRounds adds the pods' rates of each round of polls, stamped at the
// latest of their instants.
func sumRounds(all [][]interval, scale float64) []telemetry.Sample {
	var pts [][]point
	for _, ivs := range all {
		pts = append(pts, ratePoints(ivs, scale))
	}
	return sumPoints(pts)
}

func sumGaugeRounds(all [][]reading) []telemetry.Sample {
	var pts [][]point
	for _, rs := range all {
		pts = append(pts, gaugePoints(rs))
	}
	return sumPoints(pts)
}

// sumPoints adds the subjects' points round by round, in round order.
func sumPoints(all [][]point) []telemetry.Sample {
	byRound := map[int]*point{}
	for _, pts := range all {
		for _, p := range pts {
			a := byRound[p.round]
			if a == nil {
				a = &point{round: p.round}
				byRound[p.round] = a
			}
			a.v += p.v
			if p.t.After(a.t) {
				a.t = p.t
			}
		}
	}
	sums := make([]*point, 0, len(byRound))
	for _, a := range byRound {
		sums = append(sums, a)
	}
	sort.Slice(sums, func(i, j int) bool { return sums[i].round < sums[j].round })
	out := make([]telemetry.Sample, len(sums))
	for i, a := range sums {
		out[i] = telemetry.Sample{Time: a.t.UTC(), Value: a.v}
	}
	return out
}
