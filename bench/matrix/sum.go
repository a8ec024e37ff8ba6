// sum.go - the Go workloads of the reference matrix (bench/matrix.rows).
package main

import (
	"fmt"
	"os"
	"sync"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "goroutines" {
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				s := 0
				for i := 0; i < 100000; i++ {
					s += (i ^ g) % 13
				}
				mu.Lock()
				total += s
				mu.Unlock()
			}(g)
		}
		wg.Wait()
		m := map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
		for k := range m {
			fmt.Print(k)
		}
		fmt.Println()
		fmt.Println("total", total)
		return
	}
	s := 0
	for i := 0; i < 100; i++ {
		s += i
	}
	fmt.Println("go sum:", s)
}
