// A publisher of the per-queue counterset whose values closure returns the driver-wide
// counterset's values.
use core::ops::ControlFlow;

use pcw_gen_check::fabrikam_v2::{fab_queue, fab_driver};
use pcw_rt::{Publish, Visitor};

struct Queues;

impl Publish<fab_queue::Set> for Queues {
    fn visit(&self, visitor: &mut Visitor<'_, fab_queue::Set>) -> ControlFlow<()> {
        let name = [u16::from(b'q')];
        visitor.instance(&name, 1, |_| fab_driver::Values::default())
    }
}

fn main() {
    let _ = Queues;
}
