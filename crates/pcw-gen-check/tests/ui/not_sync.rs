// A publisher that is not `Sync`: PCW calls the callback from any thread at once.
use core::cell::Cell;
use core::ops::ControlFlow;

use pcw_gen_check::fabrikam_v2::fab_driver as set;
use pcw_rt::{Publish, Visitor};

struct Counted(Cell<u32>);

impl Publish<set::Set> for Counted {
    fn visit(&self, visitor: &mut Visitor<'_, set::Set>) -> ControlFlow<()> {
        self.0.set(self.0.get() + 1);
        visitor.instance(&[], 0, |_| set::Values::default())
    }
}

fn main() {
    let counted: &'static Counted = Box::leak(Box::new(Counted(Cell::new(0))));
    let _registration = set::register_publisher(counted);
}
