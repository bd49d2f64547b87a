// SPDX-License-Identifier: MIT OR Apache-2.0
//! The providers `pcw typeperf` samples: the driver under the simulated kernel — its host build,
//! or the cross-built `.sys` run by the loader — with the dynamic queues `--sim-queue` asks for,
//! and the catalogs of the driver's and the example service's manifests.

use pcw_pdh::Catalog;
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Clock, Kernel};

use super::Error;

/// The driver's countersets ([`pcw_driver::MANIFEST`]).
///
/// # Errors
/// [`Error::Query`] when the manifest does not compile.
pub fn driver_catalog() -> Result<Catalog, Error> {
    Ok(Catalog::from_manifest(
        "pcw_driver.man",
        pcw_driver::MANIFEST,
    )?)
}

/// A manifest's countersets, for `--manifest`: the file read as every command reads a
/// manifest (bounded, any supported encoding), its layout and the catalog made from it.
///
/// # Errors
/// [`Error::Input`] when it cannot be read, [`Error::Manifest`] when it does not compile.
pub fn manifest_catalog(path: &std::path::Path) -> Result<(pcw_gen::Inspect, Catalog), Error> {
    let bytes = pcw_io::input::read(path, pcw_io::input::MANIFEST)?;
    let inspect = pcw_gen::Config::new().inspect(path, &bytes)?;
    let catalog = Catalog::from_inspect(inspect.clone());
    Ok((inspect, catalog))
}

/// The example user-mode service's countersets ([`pcw_tidal::MANIFEST`]).
///
/// # Errors
/// [`Error::Query`] when the manifest does not compile.
pub fn tidal_catalog() -> Result<Catalog, Error> {
    Ok(Catalog::from_manifest(
        "tidal_service.man",
        pcw_tidal::MANIFEST,
    )?)
}

/// The driver under sampling: the host build of its code, or the shipped image run by the
/// loader.
enum Loaded {
    Host,
    /// The loaded image and the queues `--sim-queue` created in it.
    #[cfg(all(target_arch = "x86_64", unix))]
    Image(pcw_loader::LoadedDriver, std::sync::Mutex<Vec<u32>>),
}

fn load(image: Option<&str>) -> Result<Loaded, Error> {
    let Some(path) = image else {
        pcw_driver::lifecycle::load().map_err(|status| Error::Load(status.cast_unsigned()))?;
        return Ok(Loaded::Host);
    };
    #[cfg(all(target_arch = "x86_64", unix))]
    {
        let failed = |reason: String| Error::Image {
            path: path.to_owned(),
            reason,
        };
        let bytes = pcw_io::input::read(std::path::Path::new(path), pcw_io::input::IMAGE)?;
        let driver = pcw_loader::LoadedDriver::load(&bytes).map_err(|e| failed(e.to_string()))?;
        let status = driver.entry();
        if status < 0 {
            return Err(Error::Load(status.cast_unsigned()));
        }
        Ok(Loaded::Image(driver, std::sync::Mutex::default()))
    }
    #[cfg(not(all(target_arch = "x86_64", unix)))]
    Err(Error::Image {
        path: path.to_owned(),
        reason: "the image loader runs on x86-64 Linux only".into(),
    })
}

fn unload(loaded: Loaded) -> Result<(), Error> {
    match loaded {
        Loaded::Host => {
            pcw_driver::queues::close_all();
            pcw_driver::lifecycle::unload();
            Ok(())
        }
        #[cfg(all(target_arch = "x86_64", unix))]
        Loaded::Image(driver, ids) => {
            let ids = ids
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for id in ids {
                driver.ioctl(
                    pcw_driver::control::IOCTL_PCW_CLOSE_QUEUE,
                    &id.to_le_bytes(),
                    0,
                );
            }
            driver.unload();
            let leaks = pcw_loader::ntos::leaks();
            let violations = pcw_loader::ntos::violations();
            if !leaks.is_empty() {
                return Err(Error::ImageCheck(format!(
                    "left behind at unload: {leaks:?}"
                )));
            }
            if let Some(v) = violations.first() {
                return Err(Error::ImageCheck(format!("broke a kernel rule: {v}")));
            }
            Ok(())
        }
    }
}

/// Boots the simulated kernel on the real clock, loads the driver (its host build, or with
/// `image` the cross-built `.sys` through the loader), creates `queues` (dynamic queue
/// instances), runs `f`, then closes the queues, unloads and checks the teardown.
///
/// # Errors
/// [`Error::Load`], [`Error::Image`], [`Error::Queue`], `f`'s error, [`Error::ImageCheck`],
/// [`Error::Teardown`].
pub fn with_driver<R>(
    image: Option<&str>,
    queues: &[String],
    f: impl FnOnce(&Kernel, &Catalog) -> Result<R, Error>,
) -> Result<R, Error> {
    let catalog = driver_catalog()?;
    let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Real);
    let result = load(image).and_then(|loaded| {
        let ran = create_queues(&loaded, queues).and_then(|()| f(&kernel, &catalog));
        let unloaded = unload(loaded);
        let value = ran?;
        unloaded?;
        Ok(value)
    });
    let report = kernel.teardown();
    let value = result?;
    if !report.is_clean() {
        return Err(Error::Teardown(report));
    }
    Ok(value)
}

/// Creates the dynamic queue instances `--sim-queue` names: directly in the host build, through
/// `IOCTL_PCW_CREATE_QUEUE` in an image (closed again by [`unload`]).
fn create_queues(loaded: &Loaded, queues: &[String]) -> Result<(), Error> {
    for name in queues {
        let wide: Vec<u16> = name.encode_utf16().collect();
        let refused = match loaded {
            Loaded::Host => pcw_driver::queues::create(&wide).err().map(|e| match e {
                pcw_driver::queues::QueueError::NameTaken => {
                    "a queue of that name exists (names compare without regard to case)".to_owned()
                }
                pcw_driver::queues::QueueError::BadName => {
                    "a queue name has 1 to 1023 utf-16 units".to_owned()
                }
                other => format!("NTSTATUS 0x{:08X}", other.status().cast_unsigned()),
            }),
            #[cfg(all(target_arch = "x86_64", unix))]
            Loaded::Image(driver, ids) => {
                let input: Vec<u8> = wide.iter().flat_map(|u| u.to_le_bytes()).collect();
                let r = driver.ioctl(pcw_driver::control::IOCTL_PCW_CREATE_QUEUE, &input, 4);
                if let (true, Ok(id)) = (r.ok, <[u8; 4]>::try_from(r.output.as_slice())) {
                    ids.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(u32::from_le_bytes(id));
                }
                (!r.ok).then(|| {
                    format!(
                        "the image's IOCTL_PCW_CREATE_QUEUE returned NTSTATUS 0x{:08X}",
                        r.status.cast_unsigned()
                    )
                })
            }
        };
        if let Some(reason) = refused {
            return Err(Error::Queue {
                name: name.clone(),
                reason,
            });
        }
    }
    Ok(())
}
