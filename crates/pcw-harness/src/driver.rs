// SPDX-License-Identifier: MIT OR Apache-2.0
//! A driver under test: its host build or its cross-built image ([`Driver`]), loaded and
//! started ([`Loaded`]): requests to its device as the I/O manager sends them, and an unload
//! that fails on anything left behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pcw_loader::driver::{IRP_MJ_CLOSE, IRP_MJ_CREATE};
use pcw_loader::{LoadedDriver, ntos};
use pcw_sim::kernel_pcw::Kernel;

pub use pcw_loader::IoResult;

use crate::unclean::Unclean;

/// Why a driver could not be loaded or started. `Debug` prints the same text as `Display`.
#[derive(thiserror::Error)]
pub enum Error {
    /// The image file could not be read.
    #[error(transparent)]
    Read(#[from] pcw_io::InputError),
    /// An environment variable names an image that is not there.
    #[error("{var}={value}: no such file (looked for {tried})")]
    Missing {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
        /// The paths tried, backticked.
        tried: String,
    },
    /// The loader refused the image (malformed, an import it does not implement, or another
    /// driver loaded in this process).
    #[error("{what}: {source}")]
    Load {
        /// The host build or the image's path.
        what: String,
        /// Why.
        source: pcw_loader::LoadError,
    },
    /// `DriverEntry` failed.
    #[error("{what}: DriverEntry failed with NTSTATUS {status:#010X}")]
    Entry {
        /// The host build or the image's path.
        what: String,
        /// What it returned.
        status: u32,
    },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[derive(Clone, Debug)]
enum Code {
    /// A host build's `DriverEntry`.
    Host(usize),
    /// An image's bytes.
    Image(Vec<u8>),
}

/// A driver to load: its host build or a cross-built image. Cheap to keep and reuse; each
/// [`Driver::load`] maps a fresh copy (an image) or makes a fresh driver object (a host
/// build).
#[derive(Clone, Debug)]
pub struct Driver {
    code: Code,
    what: String,
}

impl Driver {
    /// The host build: `entry` is the driver's `DriverEntry` compiled for the host, e.g.
    /// `Driver::host(my_driver::driver_entry)`. Its kernel calls resolve to this crate's
    /// [`host`](crate::host) routines and pcw-sim's PCW.
    pub fn host<D, R>(entry: unsafe extern "system" fn(*mut D, *const R) -> i32) -> Self {
        Self {
            code: Code::Host(entry as usize),
            what: "the host build".to_owned(),
        }
    }

    /// A cross-built image's bytes.
    pub fn image(bytes: Vec<u8>) -> Self {
        Self {
            code: Code::Image(bytes),
            what: "the image".to_owned(),
        }
    }

    /// A cross-built image read from `path` (bounded as every image the tools read).
    ///
    /// # Errors
    /// [`Error::Read`].
    pub fn image_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let bytes = pcw_io::input::read(path, pcw_io::input::IMAGE)?;
        Ok(Self {
            code: Code::Image(bytes),
            what: format!("the image `{}`", path.display()),
        })
    }

    /// The image the environment variable `var` names, or `None` when it is not set. A
    /// relative path is looked up from the current directory (the package's, under `cargo
    /// test`) and then from each directory above it, so a path relative to the workspace root
    /// works from any of its packages.
    ///
    /// # Errors
    /// [`Error::Missing`] when no such file exists, [`Error::Read`] when it cannot be read.
    pub fn image_from_env(var: &str) -> Result<Option<Self>, Error> {
        let Some(value) = std::env::var_os(var) else {
            return Ok(None);
        };
        let given = PathBuf::from(&value);
        let candidates: Vec<PathBuf> = if given.is_absolute() {
            vec![given]
        } else {
            let here = std::env::current_dir().unwrap_or_default();
            here.ancestors().map(|dir| dir.join(&given)).collect()
        };
        match candidates.iter().find(|p| p.is_file()) {
            Some(path) => Self::image_file(path).map(Some),
            None => Err(Error::Missing {
                var: var.to_owned(),
                value: value.to_string_lossy().into_owned(),
                tried: candidates
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The image's bytes; `None` for the host build.
    pub fn image_bytes(&self) -> Option<&[u8]> {
        match &self.code {
            Code::Image(bytes) => Some(bytes),
            Code::Host(_) => None,
        }
    }

    /// Whether this is a cross-built image (not the host build).
    pub fn is_image(&self) -> bool {
        matches!(self.code, Code::Image(_))
    }

    /// `the host build`, or `the image` with its path: how messages name it.
    pub fn describe(&self) -> &str {
        &self.what
    }

    /// Maps the image (binding every import) or makes the host build's driver object; does
    /// not run `DriverEntry`. One driver is loaded at a time per process: load it after
    /// booting the [`Kernel`] it runs against, which waits for other tests' to be torn down.
    ///
    /// # Errors
    /// [`Error::Load`].
    pub fn load(&self) -> Result<Loaded, Error> {
        let loaded = match &self.code {
            Code::Image(bytes) => LoadedDriver::load(bytes),
            // SAFETY: the address of a host `DriverEntry` with the signature `Driver::host`
            // takes, and a driver built for the host installs host routines.
            Code::Host(entry) => unsafe { LoadedDriver::host(*entry) },
        };
        let driver = loaded.map_err(|source| Error::Load {
            what: self.what.clone(),
            source,
        })?;
        Ok(Loaded {
            driver,
            what: self.what.clone(),
        })
    }

    /// Loads the driver and runs its `DriverEntry`, which must succeed: how most tests start.
    ///
    /// # Errors
    /// [`Error::Load`], [`Error::Entry`].
    pub fn start(&self) -> Result<Loaded, Error> {
        let loaded = self.load()?;
        let status = loaded.entry();
        if status < 0 {
            return Err(Error::Entry {
                what: self.what.clone(),
                status: status.cast_unsigned(),
            });
        }
        Ok(loaded)
    }
}

/// A loaded driver: its device receives requests as from a `DeviceIoControl` caller, and
/// [`Loaded::unload`] checks what it leaves.
#[derive(Debug)]
pub struct Loaded {
    driver: LoadedDriver,
    what: String,
}

impl Loaded {
    /// Runs `DriverEntry` and returns its status.
    pub fn entry(&self) -> i32 {
        self.driver.entry()
    }

    /// `CreateFile` on the driver's device: an `IRP_MJ_CREATE`.
    pub fn create(&self) -> IoResult {
        self.driver.send(IRP_MJ_CREATE)
    }

    /// `CloseHandle`: an `IRP_MJ_CLOSE`.
    pub fn close(&self) -> IoResult {
        self.driver.send(IRP_MJ_CLOSE)
    }

    /// `DeviceIoControl(code, input, output of output_len bytes)` on the driver's first
    /// device, `METHOD_BUFFERED`: what comes back is what the caller sees (the bytes copied
    /// back, `GetLastError()`), beside the IRP's status and `Information`.
    pub fn ioctl(&self, code: u32, input: &[u8], output_len: usize) -> IoResult {
        self.driver.ioctl(code, input, output_len)
    }

    /// Whether `DriverEntry` set a dispatch routine for `major` (`IRP_MJ_*`).
    pub fn handles(&self, major: u8) -> bool {
        self.driver.handles(major)
    }

    /// The names of the devices the driver created (`\Device\…`).
    pub fn devices(&self) -> Vec<String> {
        ntos::objects().0.into_iter().map(|d| d.name).collect()
    }

    /// The symbolic links it created: lower-case link name → target device.
    pub fn links(&self) -> BTreeMap<String, String> {
        ntos::objects().1
    }

    /// Calls of each kernel routine the loader implements, since the driver was loaded (the
    /// PCW routines of a host build go to the simulated kernel instead and are not counted).
    pub fn calls(&self) -> BTreeMap<&'static str, usize> {
        ntos::calls()
    }

    /// The import names of an image (`ntoskrnl.exe!IoCreateDevice` …); empty for a host build.
    pub fn imports(&self) -> Vec<String> {
        self.driver
            .image()
            .map(|image| image.imports().to_vec())
            .unwrap_or_default()
    }

    /// Where an image was mapped; `None` for a host build.
    pub fn image_base(&self) -> Option<usize> {
        self.driver.image().map(pcw_loader::MappedImage::base)
    }

    /// The loader's driver, for what this API does not cover.
    pub fn loader(&self) -> &LoadedDriver {
        &self.driver
    }

    /// Runs `DriverUnload`, then checks what a clean unload leaves: no pool block, device,
    /// symbolic link or registration, no kernel rule broken while the driver ran, and a
    /// simulated PCW with nothing registered or open, nothing it would have bugchecked on.
    /// `kernel` is torn down.
    ///
    /// # Errors
    /// [`Unclean`], naming each problem.
    pub fn unload(self, kernel: Kernel) -> Result<(), Unclean> {
        let mut unclean = Unclean::default();
        if !self.driver.unload() {
            unclean
                .problems
                .push(format!("{}: DriverEntry set no DriverUnload", self.what));
        }
        let registrations = leftovers(&mut unclean);
        // Unmapped before the kernel is handed to the next test.
        drop(self);
        tear_down(&mut unclean, registrations, kernel);
        unclean.into_result()
    }
}

/// Adds what `kernel`'s teardown reports to `unclean`, and the image's `registrations` left
/// registered (from [`leftovers`]) only when the simulated PCW named none of them itself.
pub(crate) fn tear_down(unclean: &mut Unclean, registrations: usize, kernel: Kernel) {
    let report = kernel.teardown();
    unclean.add_teardown(&report);
    if registrations > 0 && report.registrations.is_empty() {
        unclean.problems.push(format!(
            "{registrations} counterset registration(s) of the image were not unregistered"
        ));
    }
}

/// What the loader's kernel still holds, and every rule broken so far; returns how many
/// counterset registrations the image left, which [`tear_down`] reports.
pub(crate) fn leftovers(unclean: &mut Unclean) -> usize {
    let leaks = ntos::leaks();
    for (tag, size) in &leaks.pool {
        unclean.problems.push(format!(
            "pool block tagged `{tag}` ({size} bytes) is still allocated"
        ));
    }
    for device in &leaks.devices {
        unclean
            .problems
            .push(format!("device `{device}` was not deleted"));
    }
    for link in &leaks.links {
        unclean
            .problems
            .push(format!("symbolic link `{link}` was not deleted"));
    }
    for v in ntos::violations() {
        unclean.problems.push(format!("kernel rule broken: {v}"));
    }
    leaks.registrations
}
