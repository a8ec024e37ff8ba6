// A Go package whose tests run under hvrun (tests/runners/run.sh):
//
//	go test -exec 'hvrun run --' .
//
// TestLostUpdate: two goroutines, started together on two threads, each
// add 1 to a shared counter 2 000 000 times without a lock; natively
// updates are lost in most runs. Under hvrun one thread runs at a time and
// none is cut inside the loop: no update is lost, every run.
// TestFastEnough: a 1 ms sleep must take under 1.2 ms; natively the host's
// wake-up latency fails it now and then, under hvrun time is logical.
package hvrunsample

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestPlain(t *testing.T) {
	if os.Getenv("SAMPLE_FAIL") != "" {
		t.Fatal("failing as asked")
	}
	if 6*7 != 42 {
		t.Fatal("arithmetic")
	}
}

var counter int64

func TestLostUpdate(t *testing.T) {
	runtime.GOMAXPROCS(2)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < 2000000; i++ {
				counter++
			}
		}()
	}
	close(start)
	wg.Wait()
	if counter != 4000000 {
		t.Fatalf("lost updates: counter %d of 4000000", counter)
	}
}

func TestFastEnough(t *testing.T) {
	begin := time.Now()
	time.Sleep(time.Millisecond)
	if d := time.Since(begin); d >= 1200*time.Microsecond {
		t.Fatalf("a 1 ms sleep took %v", d)
	}
}
