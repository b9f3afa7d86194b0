//! TLS trust for the clients that talk to the upstream validator over https (the JSON-RPC proxy's
//! hyper client and the insights ingest's ureq agent): Mozilla's root certificates
//! (`webpki-root-certs`, compiled in, so no system CA bundle is needed) plus optional extra CA
//! certificates from a PEM file (`--upstream-ca`; a private CA or a test's self-signed stand-in).
//! rustls with the ring provider, like the gRPC server's TLS.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Why the trust settings could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsClientError {
    #[error("extra CA file {path}: {reason}")]
    CaFile { path: PathBuf, reason: String },
    #[error("extra CA file {path} holds no certificate")]
    NoCertificate { path: PathBuf },
    #[error("TLS client configuration: {0}")]
    Config(String),
}

impl TlsClientError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::CaFile { .. } => "ca_file",
            Self::NoCertificate { .. } => "no_certificate",
            Self::Config(_) => "config",
        }
    }
}

/// Roots trusted for the upstream: the public ones plus the extra CAs.
#[derive(Debug, Clone, Default)]
pub struct UpstreamTrust {
    /// Extra CA certificates (DER), trusted next to Mozilla's roots.
    pub extra: Vec<CertificateDer<'static>>,
}

impl UpstreamTrust {
    /// Mozilla's roots plus every certificate in the PEM file at `path` (when given).
    pub fn load(path: Option<&Path>) -> Result<Self, TlsClientError> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let extra = CertificateDer::pem_file_iter(path)
            .map_err(|e| TlsClientError::CaFile {
                path: path.to_owned(),
                reason: e.to_string(),
            })?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsClientError::CaFile {
                path: path.to_owned(),
                reason: e.to_string(),
            })?;
        if extra.is_empty() {
            return Err(TlsClientError::NoCertificate {
                path: path.to_owned(),
            });
        }
        Ok(Self { extra })
    }

    /// Every trusted certificate: Mozilla's roots, then the extra ones.
    pub fn certificates(&self) -> impl Iterator<Item = CertificateDer<'static>> + '_ {
        webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .cloned()
            .chain(self.extra.iter().cloned())
    }

    /// A rustls client configuration (ring provider, TLS 1.2 and 1.3, no client certificate).
    pub fn rustls_config(&self) -> Result<Arc<rustls::ClientConfig>, TlsClientError> {
        let mut roots = rustls::RootCertStore::empty();
        let (_, ignored) = roots.add_parsable_certificates(self.certificates());
        if ignored > 0 {
            tracing::debug!(
                ignored,
                "root certificates rustls could not parse were skipped"
            );
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsClientError::Config(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Arc::new(config))
    }

    /// The same trust for a ureq agent (public roots stay trusted when extra ones are added).
    pub fn ureq_tls(&self) -> ureq::tls::TlsConfig {
        let builder = ureq::tls::TlsConfig::builder().provider(ureq::tls::TlsProvider::Rustls);
        if self.extra.is_empty() {
            return builder.build();
        }
        let certs: Vec<ureq::tls::Certificate<'static>> = self
            .certificates()
            .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
            .collect();
        builder
            .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
            .build()
    }
}
