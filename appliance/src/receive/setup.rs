//! Opening the receive side of a run: every `--udp` and `--xdp` source with its counters and
//! pinned core, and where a replay sends.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, bail};
use tracing::warn;

use super::SourceMetrics;
use super::thread::SourceSpec;
use super::udp::UdpSource;
use super::xdp::{XdpAttachment, XdpSpec};
use crate::config::Config;

/// The receive side of a run: sources for the receive threads, their counters for `/metrics`,
/// the XDP attachments to keep until shutdown, and where a replay sends.
pub struct ReceiveSetup {
    pub sources: Vec<SourceSpec>,
    pub metrics: Vec<Arc<SourceMetrics>>,
    pub attachments: Vec<XdpAttachment>,
    pub replay_target: SocketAddr,
}

/// Opens every `--udp` and `--xdp` source (and a loopback UDP source as the replay's target
/// when replaying without `--udp`).
pub fn open_sources(config: &Config, replaying: bool) -> anyhow::Result<ReceiveSetup> {
    let mut setup = ReceiveSetup {
        sources: Vec::new(),
        metrics: Vec::new(),
        attachments: Vec::new(),
        replay_target: SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let mut udp = config.sources.udp.clone();
    if replaying && udp.is_empty() {
        udp.push(SocketAddr::from(([127, 0, 0, 1], 0)));
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let coalesce_messages = if config.sources.udp_gro {
        config.sources.receive_batch
    } else {
        0
    };
    for (index, address) in udp.iter().enumerate() {
        let source = UdpSource::bind(
            *address,
            config.sources.socket_buffer_bytes,
            coalesce_messages,
        )
        .map_err(|error| {
            warn!(reason = error.label(), %address, "UDP source failed");
            anyhow::Error::new(error)
        })?;
        let local = source.local_addr()?;
        if index == 0 {
            setup.replay_target = local;
        }
        let core = config
            .sources
            .cores
            .get(setup.sources.len())
            .map(|&id| core_affinity::CoreId { id });
        push_source(
            &mut setup,
            Box::new(source),
            "udp",
            local.to_string(),
            "recvmmsg",
            core,
        );
    }
    for spec in xdp_specs(config)? {
        let (attachment, sockets) = crate::receive::xdp::start(&spec).map_err(|error| {
            warn!(reason = error.label(), iface = %spec.iface, "AF_XDP set-up failed");
            anyhow::Error::new(error).context(format!("AF_XDP on {}", spec.iface))
        })?;
        for (queue, socket) in sockets.into_iter().enumerate() {
            let mode = format!("{}-{}", socket.mode().label(), attachment.attach);
            let core = match config.sources.cores.get(setup.sources.len()) {
                Some(&id) => Some(core_affinity::CoreId { id }),
                None => cores.get(queue % cores.len().max(1)).copied(),
            };
            let endpoint = format!("{}/{queue}", spec.iface);
            push_source(&mut setup, Box::new(socket), "xdp", endpoint, &mode, core);
        }
        setup.attachments.push(attachment);
    }
    Ok(setup)
}

fn push_source(
    setup: &mut ReceiveSetup,
    source: Box<dyn crate::receive::ShredSource>,
    kind: &'static str,
    endpoint: String,
    mode: &str,
    core: Option<core_affinity::CoreId>,
) {
    let metrics = Arc::new(SourceMetrics::new(kind, endpoint, mode.to_owned()));
    setup.metrics.push(Arc::clone(&metrics));
    setup.sources.push(SourceSpec {
        source,
        metrics,
        core,
    });
}

/// Groups the `--xdp IFACE:PORT` flags by interface: one program (all its ports) per interface.
fn xdp_specs(config: &Config) -> anyhow::Result<Vec<XdpSpec>> {
    let mut specs: Vec<XdpSpec> = Vec::new();
    for flag in &config.sources.xdp {
        let (iface, port) = flag
            .rsplit_once(':')
            .with_context(|| format!("--xdp {flag}: expected IFACE:PORT"))?;
        let port: u16 = port
            .parse()
            .ok()
            .filter(|&port| port != 0)
            .with_context(|| format!("--xdp {flag}: bad port"))?;
        if iface.is_empty() {
            bail!("--xdp {flag}: empty interface name");
        }
        match specs.iter_mut().find(|spec| spec.iface == iface) {
            Some(spec) if !spec.ports.contains(&port) => spec.ports.push(port),
            Some(_) => {}
            None => specs.push(XdpSpec {
                iface: iface.to_owned(),
                ports: vec![port],
                attach: config.sources.xdp_attach,
                bind: config.sources.xdp_bind,
                busy_poll: config.sources.busy_poll,
            }),
        }
    }
    Ok(specs)
}
