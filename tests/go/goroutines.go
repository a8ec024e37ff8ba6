// goroutines.go - Go's runtime under hvrun: goroutines on several OS
// threads, and map iteration, whose order the runtime randomises from
// fastrand, seeded from the TSC (runtime.cputicks: RDTSC/RDTSCP, in a
// binary without unwind info). Natively the map order differs from run to
// run; under hvrun every run prints the same bytes.
package main

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	results := make([]int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s := 0
			for i := 0; i < 1000000; i++ {
				s += i % (g + 3)
			}
			results[g] = s
		}(g)
	}
	wg.Wait()
	fmt.Println(results)
	m := map[int]int{}
	for i := 0; i < 10; i++ {
		m[i] = i
	}
	for k := range m {
		fmt.Print(k, " ")
	}
	fmt.Println()
}
