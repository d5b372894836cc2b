//! franz-go, as a worker: `clients/franz-go/`, built with `go build` by its own `build`
//! script into `.cache/workers/`, started as the built binary. Go 1.26 or newer is franz-go
//! v1.22.3's own minimum (its go.mod); the script finds one (`clients/franz-go/find-go`:
//! `KAFKABENCH_GO`, `go` on PATH, /usr/local/go, or the toolchain scripts/setup put in
//! .cache/go) and otherwise says in one line that Debian bookworm's `golang-go` (1.19) is too
//! old and what to install, which is why no `Tool` is listed here: `go` need not be on PATH.

use crate::run::worker::Launcher;

/// The franz-go release kafkabench pins (clients/franz-go/go.mod); another is built from a
/// copy of the folder against that module version from the Go module proxy.
pub(crate) const DEFAULT_VERSION: &str = "v1.22.3";

pub(crate) const LAUNCHER: Launcher = Launcher {
    client: "franz-go",
    folder: "franz-go",
    needs: &[],
    default_version: DEFAULT_VERSION,
};
