//! The standard services beside the stream, so that grpcurl, grpcui, Postman and load balancers
//! work without the `.proto`: gRPC health (`grpc.health.v1.Health`: the server and
//! `stream.Stream` SERVING until shutdown begins, then NOT_SERVING) and server reflection (v1 and
//! v1alpha, from the stream's and the health service's file descriptor sets). Both sit behind the
//! same token check, TLS and accept loop as the stream.

use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

/// The stream's fully qualified service name, as health checks name it.
pub const STREAM_SERVICE: &str = "stream.Stream";
/// The shredstream proxy's entry service (issue 26).
pub const ENTRIES_SERVICE: &str = "shredstream.ShredstreamProxy";
/// Yellowstone's service (issue 26); its Rust client's `health_check` asks for this name.
pub const GEYSER_SERVICE: &str = "geyser.Geyser";

/// The health service, with the stream (and the entry and Yellowstone services when served)
/// marked SERVING, and its reporter.
pub async fn health(
    entries: bool,
    geyser: bool,
) -> (
    HealthReporter,
    tonic_health::pb::health_server::HealthServer<impl tonic_health::pb::health_server::Health>,
) {
    let (reporter, service) = tonic_health::server::health_reporter();
    reporter
        .set_service_status(STREAM_SERVICE, ServingStatus::Serving)
        .await;
    for (name, served) in [(ENTRIES_SERVICE, entries), (GEYSER_SERVICE, geyser)] {
        if served {
            reporter
                .set_service_status(name, ServingStatus::Serving)
                .await;
        }
    }
    (reporter, service)
}

/// Marks the server and the stream NOT_SERVING (shutdown has begun).
pub async fn not_serving(reporter: &HealthReporter) {
    reporter
        .set_service_status("", ServingStatus::NotServing)
        .await;
    for name in [STREAM_SERVICE, ENTRIES_SERVICE, GEYSER_SERVICE] {
        reporter
            .set_service_status(name, ServingStatus::NotServing)
            .await;
    }
}

/// Server reflection v1 over the stream's and the health service's descriptors.
pub fn reflection_v1() -> anyhow::Result<
    tonic_reflection::pb::v1::server_reflection_server::ServerReflectionServer<
        impl tonic_reflection::pb::v1::server_reflection_server::ServerReflection,
    >,
> {
    Ok(builder().build_v1()?)
}

/// Server reflection v1alpha (what older grpcurl and grpcui ask for).
pub fn reflection_v1alpha() -> anyhow::Result<
    tonic_reflection::pb::v1alpha::server_reflection_server::ServerReflectionServer<
        impl tonic_reflection::pb::v1alpha::server_reflection_server::ServerReflection,
    >,
> {
    Ok(builder().build_v1alpha()?)
}

fn builder() -> tonic_reflection::server::Builder<'static> {
    tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(stream_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(stream_proto::SHREDSTREAM_FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
}
