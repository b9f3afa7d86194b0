//! The harness of `kernel_ab.sh`: two builds of `gf256` (crates `gf_old` and `gf_new`) timed in
//! one process, sample after sample alternately, so that the host's noise, which moves a whole
//! run by ±20 % on this VM, hits both sides alike. Each sample is `PER_SAMPLE` calls of
//! `dot_products` over 32 inputs of 987 bytes (an erasure shard of a Merkle shred) into `outputs`
//! outputs, each call on the next of `sets` input sets: `sets` 1 keeps everything in L1/L2, 200
//! (6.3 MB) leaves the inputs in L3 as a decoder's pool does when a set is recovered.
//!
//! Usage (through the script): `kernel_ab <sets> <outputs>`; prints p10 and p50 ns per 32-byte
//! multiply-add for each side and the ratio new/old of the p50s.

use std::time::Instant;

type Kernel = fn(&[u8], &[&[u8]], &mut [&mut [u8]]);

const TERMS: usize = 32;
const SHARD_LEN: usize = 987;
const PER_SAMPLE: usize = 8;
const SAMPLES: usize = 3000;

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let (Some(Ok(sets)), Some(Ok(outputs))) = (args.next(), args.next()) else {
        eprintln!("usage: kernel_ab <sets> <outputs>");
        std::process::exit(2);
    };
    if sets == 0 || outputs == 0 || outputs > TERMS {
        eprintln!("sets must be at least 1, outputs 1 to {TERMS}");
        std::process::exit(2);
    }
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut byte = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 24) as u8
    };
    let inputs: Vec<Vec<Vec<u8>>> = (0..sets)
        .map(|_| (0..TERMS).map(|_| (0..SHARD_LEN).map(|_| byte()).collect()).collect())
        .collect();
    let coefficients: Vec<u8> = (0..outputs * TERMS).map(|_| byte() | 1).collect();
    let mut products = vec![vec![vec![0_u8; SHARD_LEN]; outputs]; sets];
    let kernels: [(&str, Kernel); 2] = [
        ("old", |c, i, o| gf_old::dot_products(c, i, o).expect("shape")),
        ("new", |c, i, o| gf_new::dot_products(c, i, o).expect("shape")),
    ];
    let mut samples = [Vec::with_capacity(SAMPLES), Vec::with_capacity(SAMPLES)];
    let mut set = 0;
    for round in 0..SAMPLES {
        for k in [round % 2, 1 - round % 2] {
            let started = Instant::now();
            for _ in 0..PER_SAMPLE {
                set = (set + 1) % sets;
                let ins: Vec<&[u8]> = inputs[set].iter().map(Vec::as_slice).collect();
                let mut outs: Vec<&mut [u8]> =
                    products[set].iter_mut().map(Vec::as_mut_slice).collect();
                (kernels[k].1)(&coefficients, &ins, &mut outs);
            }
            samples[k].push(started.elapsed().as_secs_f64());
        }
    }
    let multiply_adds = (PER_SAMPLE * outputs * TERMS * SHARD_LEN) as f64 / 32.0;
    let mut p50 = [0.0; 2];
    for (k, (name, _)) in kernels.iter().enumerate() {
        let side = &mut samples[k];
        side.sort_by(f64::total_cmp);
        let at = |q: f64| side[((side.len() - 1) as f64 * q) as usize] / multiply_adds * 1e9;
        p50[k] = at(0.5);
        println!("{name}: sets {sets} outputs {outputs}: p10 {:.3} p50 {:.3} ns per 32-byte multiply-add", at(0.1), at(0.5));
    }
    println!("new/old (p50): {:.3}", p50[1] / p50[0]);
}
