// SPDX-License-Identifier: MIT OR Apache-2.0
//! The code pcw-gen generates for user-mode manifests, compiled and run against pcw-sim's
//! simulated Perflib: the golden files themselves are included, so what is reviewed is what
//! runs. (pcw-gen's golden test keeps them equal to the generator's output.)

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use pcw_sim::usermode;

include!("../../pcw-gen/tests/golden/tidal_user.rs");
include!("../../pcw-gen/tests/golden/estuary_user.rs");

#[test]
fn tidal_publishes_what_the_service_sets() {
    use tidal_user::{tidal_harbors as harbors, tidal_moon as moon};
    let provider = tidal_user::start().unwrap();
    let north = harbors::Instance::create(&provider, "North", 1).unwrap();
    let south = harbors::Instance::create(&provider, "South", 2).unwrap();
    north.set_water_level(120).unwrap();
    north.increment_water_level(5).unwrap();
    north.set_ships_moored(3).unwrap();
    south.set_water_level(80).unwrap();
    south.decrement_water_level(10).unwrap();
    let the_moon = moon::Instance::create(&provider).unwrap();
    the_moon.set_pull(40).unwrap();
    the_moon.set_phase(7).unwrap();
    the_moon.set_full_pull(50).unwrap();
    the_moon.set_pull_fraction(40).unwrap();
    // A second single instance is refused by Perflib's rules.
    assert!(moon::Instance::create(&provider).is_err());

    let harbors_now = usermode::collect(harbors::GUID).unwrap();
    let level = |name: &str| harbors_now.iter().find(|i| i.name == name).unwrap().values[&1];
    assert_eq!((level("North"), level("South")), (125, 70));
    let moon_now = &usermode::collect(moon::GUID).unwrap()[0];
    assert_eq!(moon_now.name, "_Default");
    assert_eq!(moon_now.values[&moon::ids::PULL], 40);
    assert_eq!(moon_now.values[&moon::ids::FULL_PULL], 50);
    // Reference counters follow the atomics without another Perflib call.
    the_moon.pull().unwrap().fetch_add(2, Ordering::Relaxed);
    assert_eq!(usermode::collect(moon::GUID).unwrap()[0].values[&1], 42);

    // The template: the base (declared before its fraction) is registered right after it.
    let order: Vec<u32> = moon::INFO.counters.iter().map(|c| c.id).collect();
    assert_eq!(order, [1, 2, 4, 3]);
    let registered = usermode::counter_sets();
    let set = registered.iter().find(|s| s.guid == moon::GUID).unwrap();
    assert_eq!(set.provider, tidal_user::PROVIDER_GUID);
    assert_eq!(set.instance_type, 0);
    assert_eq!(set.counters[0].attrib & pcw_um::ATTRIB_BY_REFERENCE, 1);
    assert_eq!(
        set.counters[3].attrib & pcw_um::ATTRIB_NO_DISPLAYABLE,
        2,
        "the base is noDisplay"
    );

    south.delete().unwrap();
    assert_eq!(usermode::collect(harbors::GUID).unwrap().len(), 1);
    drop((north, the_moon));
    drop(provider);
    assert!(usermode::collect(moon::GUID).is_none());
}

#[derive(Default)]
struct Seen(Mutex<Vec<pcw_um::Request>>);

impl pcw_um::Notifications for Seen {
    fn notify(&self, request: pcw_um::Request) -> u32 {
        self.0.lock().unwrap().push(request);
        0
    }
}

#[test]
fn estuary_routes_custom_callbacks() {
    use estuary_user::estuary_flow as flow;
    let seen = Arc::new(Seen::default());
    let provider = estuary_user::start_with(seen.clone()).unwrap();
    let here = flow::Instance::create(&provider, "process-1", 1).unwrap();
    here.set_inflow(9).unwrap();
    here.set_capacity(10).unwrap();
    here.fill().unwrap().store(5, Ordering::Relaxed);
    assert_eq!(usermode::notify(flow::GUID, true, flow::ids::FILL), Some(0));
    let now = usermode::collect(flow::GUID).unwrap();
    assert_eq!(now[0].values[&flow::ids::INFLOW], 9);
    assert_eq!(now[0].values[&flow::ids::FILL], 5);
    assert_eq!(
        seen.0.lock().unwrap()[..],
        [
            pcw_um::Request::AddCounter {
                set: flow::GUID,
                counter: 4
            },
            pcw_um::Request::CollectStart { set: flow::GUID },
            pcw_um::Request::CollectEnd { set: flow::GUID },
        ]
    );
}
