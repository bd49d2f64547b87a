// SPDX-License-Identifier: MIT OR Apache-2.0
//! The user-mode comparison compares like with like: pcw-um's provider and the C baseline of
//! `c/um.c`, both run against pcw-sim's simulated Perflib and given the same updates, publish the
//! same instances with the same values.

use pcw_bench::um;
use pcw_sim::usermode;

#[test]
fn pcw_um_and_the_c_baseline_publish_the_same_values() {
    let provider = um::start();
    let ours = um::instances(&provider, 3);
    let mut c = um::CProvider::start(3);
    let handle = c.handle();
    for (k, (instance, (block, refs))) in ours.iter().zip(&mut c.instances).enumerate() {
        let k = u32::try_from(k).unwrap();
        for round in 0..=k {
            assert!(um::update_ours(instance, 10 + k, u64::from(round) << 33));
            // SAFETY: the C provider's live handle and one of its instances.
            assert!(unsafe { um::update_c(handle, *block, 10 + k, u64::from(round) << 33) });
        }
        assert!(um::store_looked_up(instance, 100 * k));
        um::store_c(refs, 100 * k);
    }
    let ours = usermode::collect(um::SET.guid).expect("pcw-um's set");
    let theirs = usermode::collect(um::C_SET).expect("the C set");
    assert_eq!(ours.len(), 3);
    assert_eq!(ours, theirs);
    assert_eq!(
        ours[2].values.values().copied().collect::<Vec<_>>(),
        [12, 2 << 33, 3, 200]
    );
}
