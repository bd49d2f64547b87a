// A publisher of the driver-wide counterset registered as the per-queue counterset.
use core::ops::ControlFlow;

use pcw_gen_check::fabrikam_v2::{fab_queue, fab_driver};
use pcw_rt::{Publish, Visitor};

struct DriverTotals;

impl Publish<fab_driver::Set> for DriverTotals {
    fn visit(&self, visitor: &mut Visitor<'_, fab_driver::Set>) -> ControlFlow<()> {
        visitor.instance(&[], 0, |_| fab_driver::Values::default())
    }
}

static TOTALS: DriverTotals = DriverTotals;

fn main() {
    let _registration = fab_queue::register_publisher(&TOTALS);
}
