//! A worker built on first use from its folder under `clients/`, by the folder's own `build`
//! script, into `.cache/workers/<client>-<version>-<hash>/`: the hash covers every file of the
//! folder and the shared test vectors, so changed sources are a new build and an old build is
//! never run against them. Two processes building at once build once (a lock file).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::super::error::WorkerError;

/// A tool a worker's build or run needs, and what to install when it is missing.
pub(crate) struct Tool {
    /// The command, run with `probe` to see that it works.
    pub command: &'static str,
    pub probe: &'static [&'static str],
    /// One line: what to install.
    pub install: &'static str,
}

/// How one client's worker is built and started: its folder under `clients/`, what its
/// build needs, and the client version it builds against unless the scenario names one.
pub(crate) struct Launcher {
    /// The client's name (`ClientKind::name`).
    pub client: &'static str,
    /// Its folder under `clients/`, which holds an executable `build` (clients/README.md).
    pub folder: &'static str,
    pub needs: &'static [Tool],
    pub default_version: &'static str,
}

/// A worker ready to start: its start script.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    pub client: &'static str,
    /// The client release it was built against.
    pub version: String,
    pub run: PathBuf,
}

impl Launcher {
    fn refused(&self, what: String) -> WorkerError {
        WorkerError {
            client: self.client,
            what,
            log: Vec::new(),
        }
    }

    /// The worker for `version` (the launcher's default when None), built if it is not yet.
    pub(crate) fn ensure(&self, version: Option<&str>) -> Result<Built, WorkerError> {
        let version = version.unwrap_or(self.default_version);
        let clients = clients_dir().ok_or_else(|| {
            self.refused(
                "has no sources: kafkabench's clients/ folder was not found (set \
                 KAFKABENCH_CLIENTS to it)"
                    .into(),
            )
        })?;
        let folder = clients.join(self.folder);
        let mut hash = Fnv::default();
        hash.add(version.as_bytes());
        for dir in [folder.clone(), clients.join("vectors")] {
            hash_tree(&dir, &dir, &mut hash)
                .map_err(|e| self.refused(format!("cannot read {}: {e}", dir.display())))?;
        }
        let cache = cache_dir(&clients).join("workers");
        let name = format!("{}-{version}-{:016x}", self.folder, hash.0);
        let dir = cache.join(&name);
        let built = Built {
            client: self.client,
            version: version.to_string(),
            run: dir.join("run"),
        };
        if dir.join(".complete").exists() {
            return Ok(built);
        }
        for t in self.needs {
            let works = Command::new(t.command)
                .args(t.probe)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !works {
                return Err(self.refused(format!(
                    "cannot be built: `{}` was not found; {}",
                    t.command, t.install
                )));
            }
        }
        fs::create_dir_all(&cache)
            .map_err(|e| self.refused(format!("cannot create {}: {e}", cache.display())))?;
        let _lock = Lock::take(&cache.join(format!("{}.lock", self.folder)))
            .map_err(|e| self.refused(format!("cannot lock its build: {e}")))?;
        if dir.join(".complete").exists() {
            return Ok(built); // built by another process while this one waited
        }
        let tmp = cache.join(format!("{name}.tmp"));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp)
            .map_err(|e| self.refused(format!("cannot create {}: {e}", tmp.display())))?;
        let out = Command::new(folder.join("build"))
            .arg(&tmp)
            .arg(version)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.refused(format!("cannot run {}/build: {e}", folder.display())))?;
        if !out.status.success() {
            let mut log: Vec<String> = String::from_utf8_lossy(&out.stderr)
                .lines()
                .chain(String::from_utf8_lossy(&out.stdout).lines())
                .map(str::to_string)
                .collect();
            let keep = log.len().saturating_sub(12);
            log.drain(..keep);
            return Err(WorkerError {
                client: self.client,
                what: format!("could not be built ({}/build {version})", folder.display()),
                log,
            });
        }
        let _ = fs::remove_dir_all(&dir);
        fs::rename(&tmp, &dir)
            .and_then(|()| fs::write(dir.join(".complete"), b""))
            .map_err(|e| self.refused(format!("cannot keep its build: {e}")))?;
        Ok(built)
    }
}

/// The `clients/` folder: `KAFKABENCH_CLIENTS`, else beside the binary's checkout (a
/// `target/<profile>/kafkabench` two levels below it), else where it was built.
pub(crate) fn clients_dir() -> Option<PathBuf> {
    let has = |d: &Path| d.join("PROTOCOL.md").is_file();
    if let Some(d) = std::env::var_os("KAFKABENCH_CLIENTS").map(PathBuf::from) {
        return has(&d).then_some(d);
    }
    let exe = std::env::current_exe().ok();
    let beside = exe
        .as_deref()
        .into_iter()
        .flat_map(Path::ancestors)
        .map(|a| a.join("clients"))
        .find(|d| has(d));
    beside.or_else(|| {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients");
        has(&d).then_some(d)
    })
}

/// Where builds are kept: `KAFKABENCH_CACHE`, else the checkout's `.cache/`.
fn cache_dir(clients: &Path) -> PathBuf {
    std::env::var_os("KAFKABENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| clients.parent().unwrap_or(clients).join(".cache"))
}

/// FNV-1a, 64 bits: stable across builds of kafkabench (std's hasher is not).
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// Every file below `dir`, in name order: its path from `root` and its bytes.
fn hash_tree(root: &Path, dir: &Path, h: &mut Fnv) -> std::io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let kind = e.file_type()?;
        if kind.is_dir() {
            hash_tree(root, &path, h)?;
        } else if kind.is_file() {
            h.add(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .as_os_str()
                    .as_encoded_bytes(),
            );
            let mut bytes = Vec::new();
            fs::File::open(&path)?.read_to_end(&mut bytes)?;
            h.add(&bytes);
        }
    }
    Ok(())
}

/// An exclusive lock on a file, released when dropped (the descriptor closes).
struct Lock {
    _file: fs::File,
}

impl Lock {
    fn take(path: &Path) -> std::io::Result<Lock> {
        use std::os::fd::AsRawFd;
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Lock { _file: f });
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}
