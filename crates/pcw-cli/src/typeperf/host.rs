// SPDX-License-Identifier: MIT OR Apache-2.0
//! The providers `pcw typeperf` and `pcw list` sample: a driver under the simulated kernel —
//! any driver's cross-built `.sys` with its manifest (`--image`, `--manifest`), run by the
//! loader through pcw-harness, or the bundled reference driver's host build or image with the
//! dynamic queues `--sim-queue` asks for — and the catalogs of their manifests and of the
//! bundled example service's.

use std::fmt::Write as _;
use std::path::Path;

use pcw_pdh::Catalog;
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Clock, Kernel};

use super::Error;

/// Why a bundled provider is not there: this `pcw` was built without its cargo feature.
#[cfg(any(not(feature = "reference-driver"), not(feature = "example-service")))]
fn not_bundled(what: &str, feature: &str, instead: &str) -> Error {
    Error::Usage(format!(
        "this pcw was built without {what} (cargo feature `{feature}`): {instead}"
    ))
}

/// The reference driver's countersets (`pcw_driver::MANIFEST`).
///
/// # Errors
/// [`Error::Query`] when the manifest does not compile; [`Error::Usage`] when this `pcw` does
/// not bundle the reference driver.
pub(crate) fn driver_catalog() -> Result<Catalog, Error> {
    #[cfg(feature = "reference-driver")]
    return Ok(Catalog::from_manifest(
        "pcw_driver.man",
        pcw_driver::MANIFEST,
    )?);
    #[cfg(not(feature = "reference-driver"))]
    Err(not_bundled(
        "the reference driver",
        "reference-driver",
        "name a driver with `--image X.sys --manifest X.man`",
    ))
}

/// The reference driver's manifest, inspected (for `pcw list`).
///
/// # Errors
/// As [`driver_catalog`].
pub(crate) fn driver_inspect() -> Result<pcw_gen::model::Inspect, Error> {
    #[cfg(feature = "reference-driver")]
    return Ok(pcw_gen::Config::new()
        .inspect(&pcw_gen::Input::new("pcw_driver.man", pcw_driver::MANIFEST))?);
    #[cfg(not(feature = "reference-driver"))]
    Err(not_bundled(
        "the reference driver",
        "reference-driver",
        "name a driver with `--image X.sys --manifest X.man`",
    ))
}

/// A manifest's countersets, for `--manifest`: the file read as every command reads a
/// manifest (bounded, any supported encoding), its layout and the catalog made from it.
///
/// # Errors
/// [`Error::Input`] when it cannot be read, [`Error::Manifest`] when it does not compile.
pub(crate) fn manifest_catalog(path: &Path) -> Result<(pcw_gen::model::Inspect, Catalog), Error> {
    let bytes = pcw_io::input::read(path, pcw_io::input::MANIFEST)?;
    let inspect = pcw_gen::Config::new().inspect(&pcw_gen::Input::new(path, &bytes))?;
    let catalog = Catalog::from_inspect(inspect.clone());
    Ok((inspect, catalog))
}

/// The example user-mode service's countersets (`pcw_tidal::MANIFEST`).
///
/// # Errors
/// [`Error::Query`] when the manifest does not compile; [`Error::Usage`] when this `pcw` does
/// not bundle the example service.
pub(crate) fn tidal_catalog() -> Result<Catalog, Error> {
    #[cfg(feature = "example-service")]
    return Ok(Catalog::from_manifest(
        "tidal_service.man",
        pcw_tidal::MANIFEST,
    )?);
    #[cfg(not(feature = "example-service"))]
    Err(not_bundled(
        "the example service",
        "example-service",
        "`-provider tidal` is not available",
    ))
}

/// The driver to sample: which one, and from where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target<'a> {
    /// `--image`: a cross-built `.sys`; `None` for the reference driver's host build.
    pub image: Option<&'a str>,
    /// `--manifest`: the driver's countersets; `None` for the reference driver's.
    pub manifest: Option<&'a Path>,
    /// `--sim-queue`: dynamic queues to create in the reference driver first.
    pub queues: &'a [String],
}

/// The driver under sampling.
enum Loaded {
    /// The reference driver's host build.
    #[cfg(feature = "reference-driver")]
    Host,
    /// An image run by the loader, and the reference driver's queues created in it.
    #[cfg(all(target_arch = "x86_64", unix))]
    Image(Box<pcw_harness::Loaded>, Vec<u32>),
}

fn load(target: &Target<'_>) -> Result<Loaded, Error> {
    let Some(path) = target.image else {
        #[cfg(feature = "reference-driver")]
        {
            pcw_driver::lifecycle::load().map_err(|status| Error::Load(status.cast_unsigned()))?;
            return Ok(Loaded::Host);
        }
        #[cfg(not(feature = "reference-driver"))]
        return Err(not_bundled(
            "the reference driver",
            "reference-driver",
            "name a driver with `--image X.sys --manifest X.man`",
        ));
    };
    #[cfg(all(target_arch = "x86_64", unix))]
    {
        let failed = |reason: String| Error::Image {
            path: path.to_owned(),
            reason,
        };
        let driver = pcw_harness::Driver::image_file(path).map_err(|e| failed(e.to_string()))?;
        let loaded = driver.load().map_err(|e| failed(e.to_string()))?;
        let status = loaded.entry();
        if status < 0 {
            return Err(Error::Load(status.cast_unsigned()));
        }
        Ok(Loaded::Image(Box::new(loaded), Vec::new()))
    }
    #[cfg(not(all(target_arch = "x86_64", unix)))]
    Err(Error::Image {
        path: path.to_owned(),
        reason: "the image loader runs on x86-64 Linux only".into(),
    })
}

/// Closes the queues, unloads and checks what the driver left: an image through the harness
/// (which tears the kernel down), the host build by the kernel's teardown report.
fn unload(loaded: Loaded, kernel: Kernel) -> Result<(), Error> {
    match loaded {
        #[cfg(feature = "reference-driver")]
        Loaded::Host => {
            pcw_driver::queues::close_all();
            pcw_driver::lifecycle::unload();
            let report = kernel.teardown();
            if !report.is_clean() {
                return Err(Error::Teardown(report));
            }
            Ok(())
        }
        #[cfg(all(target_arch = "x86_64", unix))]
        Loaded::Image(driver, ids) => {
            #[cfg(feature = "reference-driver")]
            for id in ids {
                driver.ioctl(
                    pcw_driver::control::IOCTL_PCW_CLOSE_QUEUE,
                    &id.to_le_bytes(),
                    0,
                );
            }
            #[cfg(not(feature = "reference-driver"))]
            let _ = ids;
            driver
                .unload(kernel)
                .map_err(|unclean| Error::ImageCheck(unclean.to_string()))
        }
    }
}

/// Boots the simulated kernel on the real clock, loads the driver `target` names, creates its
/// queues (dynamic queue instances of the reference driver), runs `f` with the driver's
/// catalog, then closes the queues, unloads and checks what the driver left.
///
/// # Errors
/// [`Error::Usage`] for a target this `pcw` cannot sample, [`Error::Load`], [`Error::Image`],
/// [`Error::Queue`], `f`'s error, [`Error::ImageCheck`], [`Error::Teardown`].
pub(crate) fn with_driver<R>(
    target: &Target<'_>,
    f: impl FnOnce(&Kernel, &Catalog) -> Result<R, Error>,
) -> Result<R, Error> {
    let catalog = match target.manifest {
        Some(path) => manifest_catalog(path)?.1,
        None => driver_catalog()?,
    };
    if target.manifest.is_some() && !target.queues.is_empty() {
        return Err(Error::Usage(
            "`--sim-queue` creates queues in the reference driver; with `--manifest` the driver \
             is another one"
                .to_owned(),
        ));
    }
    let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Real);
    let mut loaded = load(target)?;
    // Another driver's manifest: what it says and what the driver registered may differ.
    let warned = if target.manifest.is_some() {
        let mut text = String::new();
        for w in catalog.mismatches(&kernel) {
            let _ = writeln!(text, "warning: {w}");
        }
        pcw_io::console::err(&text).map_err(Error::from)
    } else {
        Ok(())
    };
    let ran = warned
        .and_then(|()| create_queues(&mut loaded, target.queues))
        .and_then(|()| f(&kernel, &catalog));
    let unloaded = unload(loaded, kernel);
    let value = ran?;
    unloaded?;
    Ok(value)
}

/// Creates the dynamic queue instances `--sim-queue` names: directly in the host build, through
/// `IOCTL_PCW_CREATE_QUEUE` in an image (closed again by [`unload`]).
fn create_queues(loaded: &mut Loaded, queues: &[String]) -> Result<(), Error> {
    for name in queues {
        let wide = || name.encode_utf16().collect::<Vec<u16>>();
        let refused = match loaded {
            #[cfg(feature = "reference-driver")]
            Loaded::Host => pcw_driver::queues::create(&wide()).err().map(|e| match e {
                pcw_driver::queues::QueueError::NameTaken => {
                    "a queue of that name exists (names compare without regard to case)".to_owned()
                }
                pcw_driver::queues::QueueError::BadName => {
                    "a queue name has 1 to 1023 utf-16 units".to_owned()
                }
                other => format!("NTSTATUS 0x{:08X}", other.status().cast_unsigned()),
            }),
            #[cfg(all(target_arch = "x86_64", unix, feature = "reference-driver"))]
            Loaded::Image(driver, ids) => {
                let input: Vec<u8> = wide().iter().flat_map(|u| u.to_le_bytes()).collect();
                let r = driver.ioctl(pcw_driver::control::IOCTL_PCW_CREATE_QUEUE, &input, 4);
                if let (true, Ok(id)) = (r.ok, <[u8; 4]>::try_from(r.output.as_slice())) {
                    ids.push(u32::from_le_bytes(id));
                }
                (!r.ok).then(|| {
                    format!(
                        "the image's IOCTL_PCW_CREATE_QUEUE returned NTSTATUS 0x{:08X}",
                        r.status.cast_unsigned()
                    )
                })
            }
            #[cfg(all(target_arch = "x86_64", unix, not(feature = "reference-driver")))]
            Loaded::Image(..) => {
                let _ = wide;
                Some("this pcw was built without the reference driver".to_owned())
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
