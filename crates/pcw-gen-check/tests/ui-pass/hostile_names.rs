// pcw-gen's output for a manifest whose names collide with generated items, parameters and
// Rust keywords (crates/pcw-gen/tests/manifests/hostile_names.man) compiles and works: the
// colliding names were renamed (`SetValues`, `self_`, `ids_2`) or escaped (`r#type`).
use core::ops::ControlFlow;

use pcw_gen_check::fake_pcw;
use pcw_rt::{Publish, Visitor};

include!("../../../pcw-gen/tests/golden/hostile_names.rs");

use hostile_names::{ids, ids_2, r#type, register, registration};

struct Three;

impl Publish<registration::Set> for Three {
    fn visit(&self, visitor: &mut Visitor<'_, registration::Set>) -> ControlFlow<()> {
        let name = [u16::from(b'x')];
        visitor.instance(&name, 1, |_| {
            (
                registration::SetValues { r#type: 1 },
                registration::RegistrationValues { self_: 2 },
                registration::Values { self_: 3 },
            )
        })
    }
}

struct Single;

impl Publish<register::Set> for Single {
    fn visit(&self, visitor: &mut Visitor<'_, register::Set>) -> ControlFlow<()> {
        visitor.instance(&[], 0, |_| register::Values {
            crate_: 1,
            super_: 2,
            values: 3,
            add: 4,
        })
    }
}

static THREE: Three = Three;
static SINGLE: Single = Single;

fn main() {
    fake_pcw::reset();
    let a = registration::register_publisher(&THREE).expect("registered");
    let b = register::register_publisher(&SINGLE).expect("registered");
    // SAFETY: no callback, so no context to keep alive.
    let c = unsafe { ids::register(None, core::ptr::null_mut()) }.expect("registered");
    // SAFETY: as above.
    let d = unsafe { ids_2::register(None, core::ptr::null_mut()) }.expect("registered");
    // SAFETY: as above.
    let e = unsafe { r#type::register(None, core::ptr::null_mut()) }.expect("registered");
    let names: Vec<String> = fake_pcw::recorder()
        .registers
        .iter()
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(names, ["Registration", "register", "ids", "IDS set", "type"]);
    assert_eq!(registration::ids::IDS, 1);
    assert_eq!(registration::ids::SELF, 3);
    assert_eq!(register::ids::ADD, 3);
    drop((a, b, c, d, e));
}
