//! NSS key log files (`SSLKEYLOGFILE`), indexed by client random.
//!
//! Only the labels kwire uses are kept; every other label (`EXPORTER_SECRET`,
//! `RSA`, OpenSSL's `CLIENT_TRAFFIC_SECRET_N`, early-data secrets) is counted
//! and ignored. Nothing here prints key material: `Debug` shows counts only.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The secrets of one TLS session. `Debug` never shows them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SessionSecrets {
    /// TLS 1.2 master secret (`CLIENT_RANDOM`).
    pub master: Option<Vec<u8>>,
    pub client_handshake: Option<Vec<u8>>,
    pub server_handshake: Option<Vec<u8>>,
    /// `CLIENT_TRAFFIC_SECRET_0`.
    pub client_traffic: Option<Vec<u8>>,
    /// `SERVER_TRAFFIC_SECRET_0`.
    pub server_traffic: Option<Vec<u8>>,
}

impl std::fmt::Debug for SessionSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let has = |o: &Option<Vec<u8>>| if o.is_some() { "present" } else { "-" };
        f.debug_struct("SessionSecrets")
            .field("master", &has(&self.master))
            .field("client_handshake", &has(&self.client_handshake))
            .field("server_handshake", &has(&self.server_handshake))
            .field("client_traffic", &has(&self.client_traffic))
            .field("server_traffic", &has(&self.server_traffic))
            .finish()
    }
}

/// Where a decryptor gets session secrets from.
pub trait KeySource {
    /// The secrets for this client random, if known.
    fn lookup(&mut self, client_random: &[u8; 32]) -> Option<SessionSecrets>;
    /// Sessions with TLS 1.3 application traffic secrets, newest last, at most
    /// `max`: candidates for a connection whose handshake was not captured.
    fn traffic_candidates(&mut self, _max: usize) -> Vec<SessionSecrets> {
        Vec::new()
    }
}

/// A parsed key log.
#[derive(Default, Clone)]
pub struct KeyLog {
    sessions: HashMap<[u8; 32], SessionSecrets>,
    /// Client randoms in the order first seen.
    order: Vec<[u8; 32]>,
    /// Lines with labels kwire does not use.
    pub ignored_lines: u64,
    /// Lines that are not `LABEL <64 hex> <hex>` (comments and blanks excluded).
    pub bad_lines: u64,
}

impl std::fmt::Debug for KeyLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyLog")
            .field("sessions", &self.sessions.len())
            .field("ignored_lines", &self.ignored_lines)
            .field("bad_lines", &self.bad_lines)
            .finish()
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect()
}

/// Longest secret accepted (SHA-384 sized secrets are 48 bytes).
const MAX_SECRET: usize = 64;

impl KeyLog {
    pub fn new() -> KeyLog {
        KeyLog::default()
    }

    /// Parses key log text; lines already known are replaced.
    pub fn parse(text: &str) -> KeyLog {
        let mut k = KeyLog::new();
        k.add_text(text);
        k
    }

    /// Reads a key log file.
    pub fn from_file(path: &Path) -> std::io::Result<KeyLog> {
        let bytes = std::fs::read(path)?;
        Ok(KeyLog::parse(&String::from_utf8_lossy(&bytes)))
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Adds every line of `text`.
    pub fn add_text(&mut self, text: &str) {
        for line in text.lines() {
            self.add_line(line);
        }
    }

    fn add_line(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return;
        }
        let mut it = line.split_ascii_whitespace();
        let (Some(label), Some(cr), Some(secret), None) =
            (it.next(), it.next(), it.next(), it.next())
        else {
            self.bad_lines += 1;
            return;
        };
        let used = matches!(
            label,
            "CLIENT_RANDOM"
                | "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
                | "SERVER_HANDSHAKE_TRAFFIC_SECRET"
                | "CLIENT_TRAFFIC_SECRET_0"
                | "SERVER_TRAFFIC_SECRET_0"
        );
        if !used {
            self.ignored_lines += 1;
            return;
        }
        let cr: Option<[u8; 32]> = unhex(cr).and_then(|v| v.try_into().ok());
        let secret = unhex(secret).filter(|s| !s.is_empty() && s.len() <= MAX_SECRET);
        let (Some(cr), Some(secret)) = (cr, secret) else {
            self.bad_lines += 1;
            return;
        };
        if label == "CLIENT_RANDOM" && secret.len() != 48 {
            self.bad_lines += 1;
            return;
        }
        let order = &mut self.order;
        let s = self.sessions.entry(cr).or_insert_with(|| {
            order.push(cr);
            SessionSecrets::default()
        });
        let slot = match label {
            "CLIENT_RANDOM" => &mut s.master,
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET" => &mut s.client_handshake,
            "SERVER_HANDSHAKE_TRAFFIC_SECRET" => &mut s.server_handshake,
            "CLIENT_TRAFFIC_SECRET_0" => &mut s.client_traffic,
            _ => &mut s.server_traffic,
        };
        *slot = Some(secret);
    }

    pub fn get(&self, client_random: &[u8; 32]) -> Option<&SessionSecrets> {
        self.sessions.get(client_random)
    }

    /// Adds every session of `other` (newer lines win).
    pub fn merge(&mut self, other: KeyLog) {
        for cr in other.order {
            if let Some(s) = other.sessions.get(&cr) {
                if !self.sessions.contains_key(&cr) {
                    self.order.push(cr);
                }
                self.sessions.insert(cr, s.clone());
            }
        }
        self.ignored_lines += other.ignored_lines;
        self.bad_lines += other.bad_lines;
    }
}

impl KeySource for KeyLog {
    fn lookup(&mut self, client_random: &[u8; 32]) -> Option<SessionSecrets> {
        self.get(client_random).cloned()
    }

    fn traffic_candidates(&mut self, max: usize) -> Vec<SessionSecrets> {
        let skip = self.order.len().saturating_sub(max);
        self.order
            .iter()
            .skip(skip)
            .filter_map(|cr| self.sessions.get(cr))
            .filter(|s| s.client_traffic.is_some() || s.server_traffic.is_some())
            .cloned()
            .collect()
    }
}

/// A key log file that is read again when a client random is not in it:
/// live clients append a line per connection as they connect.
#[derive(Debug)]
pub struct WatchedKeyLog {
    path: PathBuf,
    log: KeyLog,
    /// File length when last read; rereading happens only when it changed.
    len_read: u64,
    pub rereads: u64,
}

impl WatchedKeyLog {
    pub fn open(path: &Path) -> std::io::Result<WatchedKeyLog> {
        let mut w = WatchedKeyLog {
            path: path.to_path_buf(),
            log: KeyLog::new(),
            len_read: 0,
            rereads: 0,
        };
        w.reread()?;
        Ok(w)
    }

    pub fn log(&self) -> &KeyLog {
        &self.log
    }

    /// A key log that does not exist yet: read when it appears.
    pub fn pending(path: &Path) -> WatchedKeyLog {
        WatchedKeyLog {
            path: path.to_path_buf(),
            log: KeyLog::new(),
            len_read: 0,
            rereads: 0,
        }
    }

    fn reread(&mut self) -> std::io::Result<()> {
        let len = std::fs::metadata(&self.path)?.len();
        if len == self.len_read {
            return Ok(());
        }
        self.log = KeyLog::from_file(&self.path)?;
        self.len_read = len;
        Ok(())
    }
}

impl KeySource for WatchedKeyLog {
    fn lookup(&mut self, client_random: &[u8; 32]) -> Option<SessionSecrets> {
        if let Some(s) = self.log.get(client_random) {
            return Some(s.clone());
        }
        self.rereads += 1;
        self.reread().ok()?;
        self.log.get(client_random).cloned()
    }

    fn traffic_candidates(&mut self, max: usize) -> Vec<SessionSecrets> {
        self.log.traffic_candidates(max)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    const CR: &str = "cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7";

    #[test]
    fn parses_used_labels_and_ignores_the_rest() {
        let text = format!(
            "# comment\n\
             CLIENT_HANDSHAKE_TRAFFIC_SECRET {CR} {s}\n\
             SERVER_TRAFFIC_SECRET_0 {CR} {s}\n\
             EXPORTER_SECRET {CR} {s}\n\
             CLIENT_TRAFFIC_SECRET_1 {CR} {s}\n\
             RSA 0011 2233\n\
             CLIENT_RANDOM {CR} 00\n\
             CLIENT_RANDOM zz {s}\n\
             garbage\n\
             \n",
            s = "ab".repeat(32)
        );
        let k = KeyLog::parse(&text);
        assert_eq!(k.len(), 1);
        assert_eq!((k.ignored_lines, k.bad_lines), (3, 3));
        let cr: [u8; 32] = unhex(CR).unwrap().try_into().unwrap();
        let s = k.get(&cr).unwrap();
        assert!(s.client_handshake.is_some() && s.server_traffic.is_some());
        assert!(s.master.is_none() && s.client_traffic.is_none());
        // Debug shows no secret bytes.
        let dbg = format!("{k:?} {s:?}");
        assert!(!dbg.contains("abab") && !dbg.contains("171"), "{dbg}");
    }

    #[test]
    fn key_config_combines_extra_keys_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("keys.log");
        let other = "11".repeat(32);
        std::fs::write(&p, format!("CLIENT_RANDOM {other} {}\n", "22".repeat(48))).unwrap();
        let cfg = KeyConfig {
            keylog: Some(p.clone()),
            watch: false,
            extra: KeyLog::parse(&format!("CLIENT_RANDOM {CR} {}\n", "33".repeat(48))),
        };
        let mut keys = cfg.open().unwrap();
        assert_eq!(keys.sessions(), 2);
        let cr: [u8; 32] = unhex(CR).unwrap().try_into().unwrap();
        let o: [u8; 32] = unhex(&other).unwrap().try_into().unwrap();
        assert!(keys.lookup(&cr).is_some() && keys.lookup(&o).is_some());
        // A missing file is an error when read once, not when watched.
        let missing = KeyConfig {
            keylog: Some(dir.path().join("nope")),
            ..KeyConfig::default()
        };
        assert!(missing.open().is_err());
        assert!(
            KeyConfig {
                watch: true,
                ..missing
            }
            .open()
            .is_ok()
        );
    }

    #[test]
    fn watched_log_rereads_on_unknown_random() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("keys.log");
        std::fs::write(&p, "").unwrap();
        let mut w = WatchedKeyLog::open(&p).unwrap();
        let cr: [u8; 32] = unhex(CR).unwrap().try_into().unwrap();
        assert!(w.lookup(&cr).is_none());
        std::fs::write(&p, format!("CLIENT_RANDOM {CR} {}\n", "11".repeat(48))).unwrap();
        assert!(w.lookup(&cr).is_some_and(|s| s.master.is_some()));
    }
}

/// Where a run's TLS keys come from: a key log file (`--tls-keylog`, else
/// `SSLKEYLOGFILE`), and keys found elsewhere (a pcapng's Decryption Secrets
/// Blocks). Cloning copies the keys already read; `Debug` shows no secret.
#[derive(Clone, Debug, Default)]
pub struct KeyConfig {
    pub keylog: Option<PathBuf>,
    /// Reread `keylog` when a client random is not in it (live capture).
    pub watch: bool,
    /// Keys from elsewhere, used before the file.
    pub extra: KeyLog,
}

impl KeyConfig {
    /// `--tls-keylog FILE`, or `SSLKEYLOGFILE` when the flag is absent.
    pub fn from_flag_or_env(flag: Option<PathBuf>, watch: bool) -> KeyConfig {
        let keylog = flag.or_else(|| {
            std::env::var_os("SSLKEYLOGFILE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        KeyConfig {
            keylog,
            watch,
            extra: KeyLog::new(),
        }
    }

    /// Adds the TLS key logs a pcapng file carries in Decryption Secrets Blocks
    /// (nothing for other files); returns how many blocks were read.
    pub fn add_pcapng_secrets(&mut self, path: &Path) -> u64 {
        match super::dsb::read(path) {
            Ok(Some(s)) => {
                self.extra.merge(s.keys);
                s.blocks
            }
            _ => 0,
        }
    }

    /// Checks that the key log can be read (a live run may wait for it).
    pub fn check(&self) -> Result<(), String> {
        match &self.keylog {
            Some(p) if !self.watch => std::fs::File::open(p)
                .map(|_| ())
                .map_err(|e| format!("cannot read the TLS key log {}: {e}", p.display())),
            _ => Ok(()),
        }
    }

    /// Whether any key is (or may become) known.
    pub fn is_configured(&self) -> bool {
        self.keylog.is_some() || !self.extra.is_empty()
    }

    /// The key source for a run. A key log that cannot be read is an error,
    /// except when watched (a live client may create it later).
    pub fn open(&self) -> std::io::Result<Keys> {
        let file = match &self.keylog {
            None => None,
            Some(p) if self.watch => Some(FileKeys::Watched(
                WatchedKeyLog::open(p).unwrap_or_else(|_| WatchedKeyLog::pending(p)),
            )),
            Some(p) => Some(FileKeys::Read(KeyLog::from_file(p)?)),
        };
        Ok(Keys {
            extra: self.extra.clone(),
            file,
        })
    }
}

#[derive(Debug)]
enum FileKeys {
    Read(KeyLog),
    Watched(WatchedKeyLog),
}

/// The keys of a run: [`KeyConfig::open`].
#[derive(Debug)]
pub struct Keys {
    extra: KeyLog,
    file: Option<FileKeys>,
}

impl Keys {
    /// No keys at all: TLS connections are still recognised and counted.
    pub fn none() -> Keys {
        Keys {
            extra: KeyLog::new(),
            file: None,
        }
    }

    /// Sessions known now.
    pub fn sessions(&self) -> usize {
        self.extra.len()
            + match &self.file {
                Some(FileKeys::Read(k)) => k.len(),
                Some(FileKeys::Watched(w)) => w.log().len(),
                None => 0,
            }
    }
}

impl KeySource for Keys {
    fn lookup(&mut self, client_random: &[u8; 32]) -> Option<SessionSecrets> {
        if let Some(s) = self.extra.get(client_random) {
            return Some(s.clone());
        }
        match &mut self.file {
            Some(FileKeys::Read(k)) => k.lookup(client_random),
            Some(FileKeys::Watched(w)) => w.lookup(client_random),
            None => None,
        }
    }

    fn traffic_candidates(&mut self, max: usize) -> Vec<SessionSecrets> {
        let mut v = self.extra.traffic_candidates(max);
        let more = match &mut self.file {
            Some(FileKeys::Read(k)) => k.traffic_candidates(max),
            Some(FileKeys::Watched(w)) => w.traffic_candidates(max),
            None => Vec::new(),
        };
        v.extend(more);
        let skip = v.len().saturating_sub(max);
        v.drain(..skip);
        v
    }
}
