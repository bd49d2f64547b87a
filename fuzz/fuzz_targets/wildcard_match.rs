// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fuzzes PCW instance-mask matching (`pcw_core::wildcard`): for any mask and name, the linear
//! matcher agrees with the obvious recursive definition (kept small so the reference stays
//! fast), and no input makes it panic or run away.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcw_core::wildcard;

const STAR: u16 = b'*' as u16;
const QUESTION: u16 = b'?' as u16;

/// `*` matches any run, `?` one unit, others compare by `upcase`: the specification.
fn reference(p: &[u16], n: &[u16]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some((&STAR, rest)) => (0..=n.len()).any(|i| reference(rest, &n[i..])),
        Some((&c, rest)) => n.split_first().is_some_and(|(&x, tail)| {
            (c == QUESTION || wildcard::upcase(c) == wildcard::upcase(x)) && reference(rest, tail)
        }),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    // A small alphabet (a, A, b, ß, é, É, *, ?) so that matches actually happen.
    const ALPHABET: [u16; 8] = [0x61, 0x41, 0x62, 0xDF, 0xE9, 0xC9, STAR, QUESTION];
    let units: Vec<u16> = rest.iter().map(|b| ALPHABET[usize::from(b % 8)]).collect();
    let at = usize::from(split).min(units.len());
    let (mask, name) = units.split_at(at);
    let name: Vec<u16> = name.iter().copied().filter(|u| *u != STAR && *u != QUESTION).collect();
    let got = wildcard::matches(mask, &name);
    // The reference is exponential in the number of stars: only check small cases.
    if mask.iter().filter(|u| **u == STAR).count() <= 6 && name.len() <= 24 {
        assert_eq!(got, reference(mask, &name), "mask {mask:?} name {name:?}");
    }
});
