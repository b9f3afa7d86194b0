//! Flags of `appliance run` that secure its listeners: access tokens (gRPC `x-token`, HTTP
//! `x-token` / `Authorization: Bearer`) and TLS for the gRPC listener (rustls).
//!
//! Tokens given with `--auth-token` are visible in the process list; prefer `--auth-token-file`
//! (one token per line, `#` comments) in production.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use front::auth::TokenSet;
use tonic::transport::{Identity, ServerTlsConfig};

use crate::config::Config;

#[derive(clap::Args, Debug, Default)]
pub struct SecurityArgs {
    /// Accept this access token (repeatable). With no token, authentication is off.
    #[arg(long = "auth-token", value_name = "TOKEN")]
    auth_tokens: Vec<String>,
    /// Read access tokens from this file: one per line, blank lines and `#` comments ignored.
    #[arg(long = "auth-token-file", value_name = "FILE")]
    auth_token_file: Option<PathBuf>,
    /// PEM certificate chain: serve gRPC over TLS (needs --tls-key).
    #[arg(long = "tls-cert", value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long = "tls-key", value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

impl SecurityArgs {
    /// Applies the flags over the configuration file's `[auth]` and `[grpc]` TLS settings.
    pub fn apply(&self, config: &mut Config) {
        if self.auth_token_file.is_some() {
            config.auth.token_file.clone_from(&self.auth_token_file);
        }
        config.auth.tokens.extend(self.auth_tokens.iter().cloned());
        if self.tls_cert.is_some() {
            config.grpc.tls_cert.clone_from(&self.tls_cert);
            config.grpc.tls_key.clone_from(&self.tls_key);
        }
    }
}

/// The configured tokens (empty set: authentication off).
pub fn tokens(config: &Config) -> anyhow::Result<Arc<TokenSet>> {
    let mut tokens = config.auth.tokens.clone();
    if let Some(path) = &config.auth.token_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the token file {}", path.display()))?;
        let before = tokens.len();
        tokens.extend(
            text.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .map(str::to_owned),
        );
        if tokens.len() == before {
            bail!("the token file {} holds no token", path.display());
        }
    }
    if let Some(bad) = tokens.iter().find(|token| !valid_token(token)) {
        bail!(
            "access token {:?}… is not a valid header value (visible ASCII, no spaces)",
            bad.chars().take(4).collect::<String>()
        );
    }
    Ok(Arc::new(TokenSet::new(tokens)))
}

/// The gRPC listener's TLS configuration, when asked for.
pub fn grpc_tls(config: &Config) -> anyhow::Result<Option<ServerTlsConfig>> {
    let (Some(cert), Some(key)) = (&config.grpc.tls_cert, &config.grpc.tls_key) else {
        return Ok(None);
    };
    let read = |path: &PathBuf, what: &str| {
        std::fs::read(path).with_context(|| format!("reading the TLS {what} {}", path.display()))
    };
    let identity = Identity::from_pem(read(cert, "certificate")?, read(key, "key")?);
    Ok(Some(ServerTlsConfig::new().identity(identity)))
}

fn valid_token(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic())
}
