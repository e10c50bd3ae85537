//go:build linux

package main

import (
	"math"
	"sort"
)

// Stat summarises repeated trials of one figure, in the figure's unit.
type Stat struct {
	N      int
	Median float64
	P99    float64
	Mean   float64
}

// Summarize returns median, p99 (nearest rank) and mean of xs.
func Summarize(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Stat{N: len(s), Median: quantile(s, 0.5), P99: quantile(s, 0.99), Mean: sum / float64(len(s))}
}

// quantile is the nearest-rank quantile of sorted s: with fewer than 100 trials p99 is the maximum.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	if q == 0.5 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
