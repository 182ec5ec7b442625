//! Third-party code — a registry package's installer and its server — run
//! apart from everything else on the machine, by a well-kept tool:
//! bubblewrap (`bwrap`, Flatpak's sandbox), with resource limits set by
//! util-linux's `prlimit` and, when mcpcert runs as root, an unprivileged
//! user of the sandbox's own set by `setpriv`. No namespace is made by hand
//! here: this module only writes the command line those tools run.
//!
//! What a sandboxed server sees:
//! - **environment**: PATH, a private HOME and TMPDIR, the locale and time
//!   zone, and the values its own `server.json` declares and was given;
//!   nothing else of mcpcert's environment (the command is spawned with a
//!   cleared environment);
//! - **files**: the system's folders and runtimes read-only (`/usr`, a
//!   few files of `/etc`, the prefixes of the Python and Node.js found on
//!   PATH), its own package folder read-only, the folders the operator
//!   shares with it (`--share`), and a private HOME and `/tmp` on tmpfs of
//!   a bounded size, gone when it ends; no other folder of the cache, the
//!   site, the working folder or any home;
//! - **network**: none (a loopback of its own);
//! - **processes**: its own pid namespace, a new session (no terminal to
//!   type into), killed with mcpcert; as root, a user id of its own.
//! - **resources**: address space written to (`RLIMIT_DATA`), processes of
//!   its user (`RLIMIT_NPROC`), CPU seconds per process, no core files.
//!
//! An installer gets the same, with the network (to reach its registry),
//! its package folder writable, and the installers' own settings
//! (`npm_config_*`, `PIP_*`, `UV_*`, proxies, CA files) passed through,
//! except any whose name looks secret.
//!
//! Where bubblewrap cannot run, `unshare` closes the network and the
//! environment is still cleared and the limits set, but the machine's
//! files stay visible: the last resort, and said as such. Where neither
//! can, [`find`] says how to get one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The private home inside the sandbox.
pub const HOME: &str = "/home/mcpcert";

/// What a sandboxed process may use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Bytes of memory a process may write to (`RLIMIT_DATA`).
    pub memory: u64,
    /// Processes (and threads) of the sandbox's user at once.
    pub processes: u64,
    /// CPU seconds per process.
    pub cpu_seconds: u64,
    /// Bytes of each private tmpfs (HOME, /tmp) of a server.
    pub tmpfs: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { memory: 2 << 30, processes: 256, cpu_seconds: 900, tmpfs: 256 << 20 }
    }
}

/// The tool that isolates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Bwrap,
    /// `unshare`: network and environment only.
    Unshare,
}

/// Isolation as this machine gives it.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub kind: Kind,
    /// The program that isolates (bwrap or unshare).
    tool: PathBuf,
    /// mcpcert runs as root: each package runs as a user id of its own.
    as_root: bool,
    /// Processes this user had when mcpcert started (not root: the
    /// process limit counts every process of the user).
    user_processes: u64,
    /// Runtime folders outside the system's, bound read-only.
    runtimes: Vec<PathBuf>,
    /// PATH inside.
    path: String,
    pub limits: Limits,
}

/// A command made to run in the sandbox: its argv, and the whole
/// environment to spawn it with (nothing else inherited).
#[derive(Debug, Clone, PartialEq)]
pub struct Wrapped {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The folder to start it in (outside the sandbox's own).
    pub cwd: Option<String>,
}

/// What runs: a server (no network, its folder read-only) or the
/// installer of its package (the network, its folder writable).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    Server,
    Installer,
}

/// Why no sandbox could be had here, and how to get one.
pub fn remedy(why: &str) -> String {
    format!(
        "no sandbox for third-party code on this machine ({why}). Install bubblewrap (Debian, Ubuntu: `apt-get install bubblewrap`; \
         Fedora: `dnf install bubblewrap`); on GitHub's ubuntu-24.04 runners also let it make user namespaces: \
         `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or run mcpcert as root, with sudo); in a container, \
         run it privileged or with a seccomp profile that allows namespaces. Or pass --no-sandbox to start packages with \
         this machine's files, network and environment (every report and page says so)"
    )
}

/// The sandbox this machine gives: bubblewrap when it runs here, else
/// `unshare` (network only), else why neither does.
pub fn find() -> Result<Sandbox, String> {
    let as_root = unsafe_free_euid() == 0;
    let (runtimes, path) = runtimes();
    let user_processes = if as_root { 0 } else { own_processes() };
    let mut why = Vec::new();
    let needs: &[&str] = if as_root { &["bwrap", "prlimit", "setpriv"] } else { &["bwrap", "prlimit"] };
    match needs.iter().find(|p| super::find_program(p).is_none()) {
        Some(p) => why.push(format!("no `{p}` on PATH")),
        None => {
            let tool = super::find_program("bwrap").unwrap_or_default();
            let sb = Sandbox {
                kind: Kind::Bwrap,
                tool,
                as_root,
                user_processes,
                runtimes: runtimes.clone(),
                path: path.clone(),
                limits: Limits::default(),
            };
            match sb.probe() {
                Ok(()) => return Ok(sb),
                Err(e) => why.push(format!("bubblewrap does not run here: {e}")),
            }
        }
    }
    if let (Some(tool), Some(_)) = (super::find_program("unshare"), super::find_program("prlimit"))
        && (!as_root || super::find_program("setpriv").is_some())
    {
        let sb = Sandbox { kind: Kind::Unshare, tool, as_root, user_processes, runtimes, path, limits: Limits::default() };
        if sb.probe().is_ok() {
            return Ok(sb);
        }
        why.push("`unshare` cannot make a network namespace either".into());
    } else {
        why.push("no `unshare` (and `prlimit`) to fall back on".into());
    }
    Err(remedy(&why.join("; ")))
}

impl Sandbox {
    /// One line: how packages are isolated.
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Bwrap => format!(
                "bubblewrap: no network, no environment but PATH, HOME, locale and its own declared values, its own package folder read-only, \
                 a private HOME and /tmp, the system's runtimes read-only{}; at most {} MiB of memory per process, {} processes, {} CPU s",
                if self.as_root { ", a user id of its own" } else { "" },
                self.limits.memory >> 20,
                self.limits.processes,
                self.limits.cpu_seconds
            ),
            Kind::Unshare => format!(
                "partial (unshare; bubblewrap is not available): no network, no environment but its own declared values, \
                 at most {} MiB of memory per process, {} processes; this machine's files stay visible",
                self.limits.memory >> 20,
                self.limits.processes
            ),
        }
    }

    /// The user id a package's processes run as (root only): one per
    /// package folder, so that one package's processes never count against
    /// another's limit.
    fn uid(&self, folder: &Path) -> u32 {
        use sha2::Digest;
        let d = sha2::Sha256::digest(folder.display().to_string().as_bytes());
        200_000 + u32::from_be_bytes([d[0], d[1], d[2], d[3]]) % 100_000
    }

    /// `argv` as a server (or installer) of the package in `folder`, with
    /// `env` (its declared values) and `shared` folders (read and write).
    /// `installer_env` are the installers' settings passed through
    /// (installer only).
    pub fn wrap(&self, role: Role, folder: &Path, shared: &[PathBuf], argv: &[String], env: &[(String, String)]) -> Wrapped {
        let uid = self.as_root.then(|| self.uid(folder));
        let mut full_env = self.base_env();
        let mut files: Vec<PathBuf> = Vec::new();
        if role == Role::Installer {
            for (k, v) in installer_settings(std::env::vars()) {
                if FILE_SETTINGS.iter().any(|f| f.eq_ignore_ascii_case(&k)) && Path::new(&v).is_absolute() && Path::new(&v).exists() {
                    files.push(PathBuf::from(&v));
                }
                full_env.push((k, v));
            }
        }
        if !shared.is_empty() {
            // A shared folder belongs to another user by construction: git
            // would refuse it as of "dubious ownership".
            full_env.extend(
                [("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "safe.directory"), ("GIT_CONFIG_VALUE_0", "*")]
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
        }
        for (k, v) in env {
            full_env.retain(|(e, _)| e != k);
            full_env.push((k.clone(), v.clone()));
        }
        let limits = self.limits;
        let processes = limits.processes + self.user_processes;
        let mut out: Vec<String> = vec![
            "prlimit".into(),
            format!("--nproc={processes}"),
            format!("--data={}", limits.memory),
            format!("--cpu={}", limits.cpu_seconds),
            "--core=0".into(),
            "--".into(),
        ];
        let mut cwd = None;
        match self.kind {
            Kind::Bwrap => out.extend(self.bwrap_args(role, folder, shared, &files, uid)),
            Kind::Unshare => {
                // The installer needs the network: no namespace for it.
                if role == Role::Server {
                    out.extend([self.tool.display().to_string(), if self.as_root { "-n" } else { "-rn" }.to_string(), "--".into()]);
                }
                cwd = Some(folder.display().to_string());
                let home = std::env::temp_dir().join(format!("mcpcert-home-{}", uid.unwrap_or(0)));
                if std::fs::create_dir_all(&home).is_ok()
                    && let Some(u) = uid
                {
                    let _ = std::os::unix::fs::chown(&home, Some(u), Some(u));
                }
                if let Some(h) = full_env.iter_mut().find(|(k, _)| k == "HOME") {
                    h.1 = home.display().to_string();
                }
            }
        }
        if let Some(u) = uid {
            out.extend([
                "setpriv".to_string(),
                format!("--reuid={u}"),
                format!("--regid={u}"),
                "--clear-groups".into(),
                "--inh-caps=-all".into(),
                "--bounding-set=-all".into(),
                "--no-new-privs".into(),
                "--".into(),
            ]);
        }
        out.extend(argv.iter().cloned());
        Wrapped { argv: out, env: full_env, cwd }
    }

    /// Get a package folder ready for its installer: as root, owned by
    /// the package's user (the only user that may write in it).
    pub fn prepare_folder(&self, folder: &Path) -> std::io::Result<()> {
        if let Some(u) = self.as_root.then(|| self.uid(folder)) {
            std::os::unix::fs::chown(folder, Some(u), Some(u))?;
        }
        Ok(())
    }

    fn base_env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_string(), self.path.clone()),
            ("HOME".into(), HOME.into()),
            ("TMPDIR".into(), "/tmp".into()),
            ("USER".into(), "mcpcert".into()),
            ("LOGNAME".into(), "mcpcert".into()),
        ];
        for k in ["LANG", "LC_ALL", "TZ"] {
            if let Ok(v) = std::env::var(k) {
                env.push((k.into(), v));
            }
        }
        if !env.iter().any(|(k, _)| k == "LANG") {
            env.push(("LANG".into(), "C.UTF-8".into()));
        }
        env
    }

    fn bwrap_args(&self, role: Role, folder: &Path, shared: &[PathBuf], files: &[PathBuf], uid: Option<u32>) -> Vec<String> {
        let mut a: Vec<String> = vec![self.tool.display().to_string()];
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        push(&["--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]);
        push(&["--hostname", "mcpcert-sandbox"]);
        if role == Role::Server {
            push(&["--unshare-net"]);
        }
        if !self.as_root {
            push(&["--unshare-user"]);
        }
        push(&["--ro-bind", "/usr", "/usr"]);
        for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            let p = Path::new(top);
            match std::fs::read_link(p) {
                Ok(target) => push(&["--symlink", &target.display().to_string(), top]),
                Err(_) if p.is_dir() => push(&["--ro-bind", top, top]),
                Err(_) => {}
            }
        }
        push(&["--perms", "0755", "--dir", "/etc"]);
        for f in ETC {
            push(&["--ro-bind-try", f, f]);
        }
        match uid.map(identity_files) {
            Some(Ok((passwd, group))) => {
                push(&["--ro-bind", &passwd.display().to_string(), "/etc/passwd"]);
                push(&["--ro-bind", &group.display().to_string(), "/etc/group"]);
            }
            _ => push(&["--ro-bind-try", "/etc/passwd", "/etc/passwd", "--ro-bind-try", "/etc/group", "/etc/group"]),
        }
        push(&["--proc", "/proc", "--dev", "/dev"]);
        let size = if role == Role::Server { self.limits.tmpfs } else { 4 << 30 }.to_string();
        push(&["--perms", "1777", "--size", &size, "--tmpfs", "/tmp"]);
        push(&["--perms", "0755", "--dir", "/home", "--perms", "0777", "--size", &size, "--tmpfs", HOME]);
        let mut made: Vec<PathBuf> = vec!["/".into(), "/tmp".into(), "/home".into(), HOME.into()];
        let mut bind = |a: &mut Vec<String>, flag: &str, p: &Path| {
            for anc in p.ancestors().collect::<Vec<_>>().into_iter().rev().skip(1) {
                if anc == p {
                    break;
                }
                if !made.iter().any(|m| m == anc) && !anc.starts_with("/usr") {
                    a.extend(["--perms".into(), "0755".into(), "--dir".into(), anc.display().to_string()]);
                    made.push(anc.to_path_buf());
                }
            }
            let s = p.display().to_string();
            a.extend([flag.to_string(), s.clone(), s]);
            made.push(p.to_path_buf());
        };
        for r in &self.runtimes {
            bind(&mut a, "--ro-bind", r);
        }
        for f in files {
            bind(&mut a, "--ro-bind", f);
        }
        bind(&mut a, if role == Role::Server { "--ro-bind" } else { "--bind" }, folder);
        for s in shared {
            bind(&mut a, "--bind", s);
        }
        let chdir = if role == Role::Server { HOME.to_string() } else { folder.display().to_string() };
        a.extend(["--chdir".into(), chdir, "--".into()]);
        a
    }

    /// Runs `true` in the sandbox: whether it works here.
    fn probe(&self) -> Result<(), String> {
        let dir = std::env::temp_dir();
        let w = self.wrap(Role::Server, &dir, &[], &["true".into()], &[]);
        let mut cmd = Command::new(&w.argv[0]);
        cmd.args(&w.argv[1..]).env_clear().envs(w.env.iter().cloned()).stdin(Stdio::null()).stdout(Stdio::null());
        if let Some(c) = &w.cwd {
            cmd.current_dir(c);
        }
        let out = cmd.stderr(Stdio::piped()).output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(err.lines().next().unwrap_or("it failed").trim().chars().take(200).collect())
        }
    }
}

/// Files of `/etc` a runtime or an installer reads: the loader's cache,
/// name resolution (an installer's), certificates, time zones.
const ETC: [&str; 16] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/crypto-policies",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/mime.types",
];

/// Installer settings that name a file the installer reads (bound
/// read-only when they do).
const FILE_SETTINGS: [&str; 8] = [
    "PIP_CONSTRAINT",
    "PIP_CERT",
    "UV_CONSTRAINT",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "npm_config_cafile",
];

/// The installers' own settings from `vars`, without any whose name looks
/// secret (a registry token is the operator's, not a stranger's install
/// script's).
pub fn installer_settings(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    const PREFIXES: [&str; 4] = ["npm_config_", "PIP_", "UV_", "PYTHONHASHSEED"];
    const PROXIES: [&str; 6] = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];
    vars.into_iter()
        .filter(|(k, _)| {
            PREFIXES.iter().any(|p| k.starts_with(p) || k.to_ascii_lowercase().starts_with(&p.to_ascii_lowercase()))
                || PROXIES.contains(&k.as_str())
                || FILE_SETTINGS.contains(&k.as_str())
        })
        .filter(|(k, _)| {
            let u = k.to_ascii_uppercase();
            !["TOKEN", "AUTH", "PASSWORD", "SECRET", "KEY", "CREDENTIAL", "USERCONFIG", "GLOBALCONFIG"].iter().any(|s| u.contains(s))
        })
        .collect()
}

/// `/etc/passwd` and `/etc/group` naming the sandbox's user (as root, its
/// id is in no file of the machine's), kept in the temp folder.
fn identity_files(uid: u32) -> std::io::Result<(PathBuf, PathBuf)> {
    let dir = std::env::temp_dir().join(format!("mcpcert-sandbox-{uid}"));
    std::fs::create_dir_all(&dir)?;
    let passwd = dir.join("passwd");
    let group = dir.join("group");
    if !passwd.is_file() || !group.is_file() {
        let p = format!(
            "root:x:0:0:root:/root:/usr/sbin/nologin\nmcpcert:x:{uid}:{uid}:mcpcert sandbox:{HOME}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        );
        let g = format!("root:x:0:\nmcpcert:x:{uid}:\nnogroup:x:65534:\n");
        std::fs::write(&passwd, p)?;
        std::fs::write(&group, g)?;
    }
    Ok((passwd, group))
}

fn unsafe_free_euid() -> u32 {
    // The owner of /proc/self is the process's effective user.
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap_or(u32::MAX)
}

/// How many processes this user has now (the process limit counts them).
fn own_processes() -> u64 {
    let me = unsafe_free_euid();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| e.metadata().is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == me))
        .count() as u64
}

/// The runtime folders outside the system's (the prefixes of the Python
/// and Node.js on PATH, and of npm and uv), and PATH inside the sandbox.
fn runtimes() -> (Vec<PathBuf>, String) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut bins: Vec<PathBuf> = Vec::new();
    let ask = |prog: &str, args: &[&str]| -> Option<Vec<String>> {
        let out = Command::new(prog).args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().to_string()).collect())
    };
    if let Some(lines) = ask("python3", &["-c", "import sys; print(sys.base_prefix); print(sys.executable)"])
        && let [prefix, exe, ..] = lines.as_slice()
    {
        dirs.push(PathBuf::from(prefix));
        if let Some(b) = std::fs::canonicalize(exe).ok().and_then(|p| p.parent().map(Path::to_path_buf)) {
            bins.push(b);
        }
    }
    if let Some(lines) = ask("node", &["-p", "process.execPath"])
        && let Some(exe) = lines.first().and_then(|e| std::fs::canonicalize(e).ok())
        && let Some(bin) = exe.parent()
    {
        bins.push(bin.to_path_buf());
        if let Some(prefix) = bin.parent() {
            dirs.push(prefix.to_path_buf());
        }
    }
    for prog in ["npm", "npx", "uv"] {
        if let Some(found) = super::find_program(prog) {
            if let Some(d) = found.parent() {
                bins.push(d.to_path_buf());
                dirs.push(d.to_path_buf());
            }
            // npm's own package: …/lib/node_modules/npm/bin/npm-cli.js.
            if let Ok(real) = std::fs::canonicalize(&found)
                && let Some(pkg) = real
                    .ancestors()
                    .find(|a| a.file_name().is_some_and(|n| n == prog) && a.parent().is_some_and(|p| p.ends_with("node_modules")))
            {
                dirs.push(pkg.to_path_buf());
            }
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let system = |p: &Path| ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/dev"].iter().any(|s| p.starts_with(s));
    let mut kept: Vec<PathBuf> = Vec::new();
    for d in dirs {
        // Never a home or the root itself (a runtime installed with a
        // prefix of ~ would bring all of it).
        let too_wide = d.parent().is_none() || home.as_ref().is_some_and(|h| h.starts_with(&d)) || d == Path::new("/tmp");
        if system(&d) || too_wide || !d.is_dir() || kept.iter().any(|k| d.starts_with(k)) {
            continue;
        }
        kept.retain(|k| !k.starts_with(&d));
        kept.push(d);
    }
    let mut path: Vec<String> = Vec::new();
    for b in bins.iter().map(|b| b.display().to_string()).chain(["/usr/local/bin", "/usr/bin", "/bin"].map(String::from)) {
        if !path.contains(&b) {
            path.push(b);
        }
    }
    (kept, path.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(as_root: bool) -> Sandbox {
        Sandbox {
            kind: Kind::Bwrap,
            tool: "/usr/bin/bwrap".into(),
            as_root,
            user_processes: 0,
            runtimes: vec!["/opt/python3.12".into()],
            path: "/opt/python3.12/bin:/usr/bin".into(),
            limits: Limits::default(),
        }
    }

    #[test]
    fn a_server_gets_no_network_its_folder_read_only_and_only_its_values() {
        let sb = sandbox(true);
        let folder = Path::new("/var/cache/mcpcert/npm/srv@1.0.0");
        let w = sb.wrap(
            Role::Server,
            folder,
            &[PathBuf::from("/srv/shared")],
            &["/x/bin/srv".into(), "--db".into()],
            &[("API_KEY".into(), "k".into())],
        );
        let line = w.argv.join(" ");
        assert!(w.argv.starts_with(&["prlimit".to_string()]), "{line}");
        assert!(line.contains("--nproc=256 --data=2147483648 --cpu=900 --core=0 -- /usr/bin/bwrap"), "{line}");
        assert!(line.contains("--unshare-net") && line.contains("--unshare-pid") && line.contains("--new-session"), "{line}");
        assert!(line.contains("--ro-bind /var/cache/mcpcert/npm/srv@1.0.0 /var/cache/mcpcert/npm/srv@1.0.0"), "{line}");
        assert!(!line.contains("--bind /var/cache/mcpcert/npm/srv@1.0.0"), "{line}");
        assert!(line.contains("--bind /srv/shared /srv/shared") && line.contains("--ro-bind /opt/python3.12 /opt/python3.12"), "{line}");
        assert!(line.contains("--perms 0755 --dir /var/cache/mcpcert/npm"), "{line}");
        assert!(line.contains("--tmpfs /home/mcpcert") && line.contains("--chdir /home/mcpcert"), "{line}");
        assert!(line.contains("setpriv --reuid=") && line.ends_with("--no-new-privs -- /x/bin/srv --db"), "{line}");
        let names: Vec<&str> = w.env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(names.contains(&"PATH") && names.contains(&"HOME") && names.contains(&"API_KEY"), "{names:?}");
        assert!(!names.iter().any(|n| n.starts_with("MCPCERT") || *n == "CARGO"), "{names:?}");
        // Not root: no user switch, a user namespace, the limit above the
        // user's own processes.
        let mut sb = sandbox(false);
        sb.user_processes = 40;
        let line = sb.wrap(Role::Server, folder, &[], &["srv".into()], &[]).argv.join(" ");
        assert!(!line.contains("setpriv") && line.contains("--unshare-user") && line.contains("--nproc=296"), "{line}");
    }

    #[test]
    fn an_installer_gets_the_network_its_folder_and_no_secret_setting() {
        let sb = sandbox(true);
        let folder = Path::new("/c/npm/srv@1.0.0");
        let line = sb.wrap(Role::Installer, folder, &[], &["npm".into(), "install".into()], &[]).argv.join(" ");
        assert!(!line.contains("--unshare-net"), "{line}");
        assert!(line.contains("--bind /c/npm/srv@1.0.0 /c/npm/srv@1.0.0") && line.contains("--chdir /c/npm/srv@1.0.0"), "{line}");
        let vars = [
            ("npm_config_before", "2026-12-01"),
            ("NPM_CONFIG__AUTHTOKEN", "npm_secret"),
            ("npm_config_//registry.example/:_authToken", "t"),
            ("PIP_CONSTRAINT", "/x/c.txt"),
            ("PIP_INDEX_URL", "https://pypi.example/simple"),
            ("GITHUB_TOKEN", "ghs_x"),
            ("HTTPS_PROXY", "http://proxy.invalid:3128"),
            ("npm_config_userconfig", "/root/.npmrc"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let kept: Vec<String> = installer_settings(vars).into_iter().map(|(k, _)| k).collect();
        assert_eq!(kept, ["npm_config_before", "PIP_CONSTRAINT", "PIP_INDEX_URL", "HTTPS_PROXY"]);
    }

    #[test]
    fn each_package_has_a_user_of_its_own() {
        let sb = sandbox(true);
        let a = sb.uid(Path::new("/c/npm/a@1"));
        let b = sb.uid(Path::new("/c/npm/b@1"));
        assert!(a != b && (200_000..300_000).contains(&a), "{a} {b}");
        assert_eq!(a, sb.uid(Path::new("/c/npm/a@1")));
    }
}
