// A kernel-mode provider declared in Rust compiles and registers through pcw-rt's safe callback,
// as the manifest path's code does: `Publish`, `register_publisher`, the generated values struct
// with the declared field order, the GUID derived from the name.
use core::ops::ControlFlow;

use pcw_gen_check::fake_pcw;
use pcw_rt::{Publish, Visitor};

pcw_declare::counters! {
    #[provider(name = "Contoso Declared", kernel_mode, application_identity = "declared.sys")]
    pub mod declared {
        #[counterset(name = "Declared Queues", description = "Per queue", instances = multiple)]
        struct DeclaredQueues {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items waiting")]
            depth: u32,
            #[counter(id = 2, type = perf_counter_bulk_count, name = "Bytes/sec", description = "Bytes moved")]
            bytes: u64,
            #[counter(id = 3, type = perf_raw_fraction, name = "Fill", description = "Depth of capacity", base_id = 4)]
            fill: u32,
            #[counter(id = 4, type = perf_raw_base, no_display)]
            capacity: u32,
        }
    }
}

use declared::declared_queues as queues;

struct Two;

impl Publish<queues::Set> for Two {
    fn visit(&self, visitor: &mut Visitor<'_, queues::Set>) -> ControlFlow<()> {
        for (id, name) in [(1, "a"), (2, "b")] {
            let name: Vec<u16> = name.encode_utf16().collect();
            visitor.instance(&name, id, |_| queues::Values {
                depth: id,
                bytes: u64::from(id) << 32,
                fill: id,
                capacity: 10,
            })?;
        }
        ControlFlow::Continue(())
    }
}

static TWO: Two = Two;

fn main() {
    fake_pcw::reset();
    let registration = queues::register_publisher(&TWO).expect("registered");
    let names: Vec<String> = fake_pcw::recorder()
        .registers
        .iter()
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(names, ["Declared Queues"]);
    assert_eq!(queues::NAME, "Declared Queues");
    assert_eq!(queues::ids::CAPACITY, 4);
    // Fields in declaration order: depth (4), padding, bytes (8), fill, capacity.
    assert_eq!(core::mem::offset_of!(queues::Values, bytes), 8);
    assert_eq!(core::mem::size_of::<queues::Values>(), 24);
    drop(registration);
}
