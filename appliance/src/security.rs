//! What secures the listeners, read from the configuration: access tokens (gRPC `x-token`, HTTP
//! `x-token` / `Authorization: Bearer`) and TLS for the gRPC listener (rustls). The flags that set
//! them are `config::SecurityArgs`.
//!
//! Tokens given with `--auth-token` are visible in the process list; prefer `--auth-token-file`
//! (one token per line, `#` comments) in production.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use front::auth::TokenSet;
use tonic::transport::{Identity, ServerTlsConfig};

use crate::config::Config;

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
