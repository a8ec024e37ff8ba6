// mx.rs - the Rust workloads of the reference matrix (bench/matrix.rows).
use std::collections::HashMap;
use std::fs;
use std::thread;

fn main() {
    let w = std::env::args().nth(1).unwrap_or_default();
    match w.as_str() {
        "hello" => println!("hello from rust"),
        "compute" => {
            let s: u64 = (1..=1_000_000u64).map(|i| i * i % 7).sum();
            println!("sum {}", s);
        }
        "threads" => {
            let hs: Vec<_> = (0..4u64)
                .map(|i| thread::spawn(move || (0..100_000u64).map(|k| k ^ i).sum::<u64>()))
                .collect();
            let total: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
            println!("threads total {}", total);
        }
        "order" => {
            let hs: Vec<_> = (0..3)
                .map(|i| thread::spawn(move || println!("thread {} ran", i)))
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        }
        "hashmap" => {
            let mut m = HashMap::new();
            for i in 0..10 {
                m.insert(format!("key{}", i), i);
            }
            let order: Vec<_> = m.keys().cloned().collect();
            println!("{}", order.join(" "));
        }
        "file" => {
            fs::write("mx-rs.tmp", b"rust file io\n").unwrap();
            print!("{}", fs::read_to_string("mx-rs.tmp").unwrap());
            fs::remove_file("mx-rs.tmp").unwrap();
            println!("removed {}", !std::path::Path::new("mx-rs.tmp").exists());
        }
        _ => {
            eprintln!("mx: unknown workload '{}'", w);
            std::process::exit(2);
        }
    }
}
