//! lost_update: two threads, started together, each read and write back a
//! shared counter 300 000 times (relaxed atomics: no data race in Rust's
//! sense, but the read-modify-write is not one step); natively updates are
//! lost in most runs. Under hvrun one thread runs at a time and none is cut
//! inside the loop: no update is lost, every run.
//! fast_enough: a 1 ms sleep must take under 1.2 ms; natively the host's
//! wake-up latency fails it now and then, under hvrun time is logical.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

#[test]
fn plain() {
    assert!(std::env::var_os("SAMPLE_FAIL").is_none(), "failing as asked");
    assert_eq!(hvrun_sample::triangle(100), 5050);
}

#[test]
fn lost_update() {
    let counter = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (c, b) = (counter.clone(), start.clone());
            thread::spawn(move || {
                b.wait();
                for _ in 0..300_000 {
                    let v = c.load(Ordering::Relaxed);
                    c.store(v + 1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(counter.load(Ordering::Relaxed), 600_000);
}

#[test]
fn fast_enough() {
    let begin = Instant::now();
    thread::sleep(Duration::from_millis(1));
    assert!(begin.elapsed() < Duration::from_micros(1200));
}
