//! Flags of `appliance run` that secure its listeners (`--auth-token`, `--auth-token-file`,
//! `--tls-cert`, `--tls-key`), applied over the file's `[auth]` and `[grpc]` TLS settings.
//!
//! Tokens given with `--auth-token` are visible in the process list; prefer `--auth-token-file`
//! (one token per line, `#` comments) in production.

use std::path::PathBuf;

use super::Config;

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
