//! The standard gRPC services beside the stream, through the real process: `grpc.health.v1`
//! answers SERVING for the server and for `stream.Stream` (NOT_FOUND for another name), and server
//! reflection (v1 and v1alpha) lists the services and returns the stream's file descriptor, so a
//! client without the `.proto` (grpcurl, grpcui, Postman) can call it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prost::Message;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_reflection::pb::v1 as reflection;
use tonic_reflection::pb::v1alpha as reflection_alpha;

use process::{Appliance, free_tcp_address};

fn start() -> (Appliance, SocketAddr) {
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args([
            "run",
            "--grpc",
            &grpc.to_string(),
            "--http",
            &http.to_string(),
        ])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(grpc).is_err() {
        assert!(Instant::now() < deadline, "gRPC not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Appliance { child }, grpc)
}

async fn channel(grpc: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{grpc}"))
        .unwrap()
        .connect()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_serving_for_the_server_and_the_stream() {
    let (_appliance, grpc) = start();
    let mut health = HealthClient::new(channel(grpc).await);
    for service in [
        "",
        "stream.Stream",
        "shredstream.ShredstreamProxy",
        "geyser.Geyser",
    ] {
        let request = HealthCheckRequest {
            service: service.into(),
        };
        let answer = health.check(request).await.unwrap().into_inner();
        assert_eq!(answer.status(), ServingStatus::Serving, "{service:?}");
    }
    let unknown = HealthCheckRequest {
        service: "no.Such".into(),
    };
    let status = health.check(unknown).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_v1_lists_the_services_and_describes_the_stream() {
    use reflection::server_reflection_request::MessageRequest;
    use reflection::server_reflection_response::MessageResponse;
    let (_appliance, grpc) = start();
    let mut client =
        reflection::server_reflection_client::ServerReflectionClient::new(channel(grpc).await);
    let requests = [
        MessageRequest::ListServices(String::new()),
        MessageRequest::FileContainingSymbol("stream.Stream".into()),
    ]
    .map(|message| reflection::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(message),
    });
    let mut answers = client
        .server_reflection_info(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) =
        answers.next().await.unwrap().unwrap().message_response
    else {
        panic!("no service list");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for wanted in ["stream.Stream", "grpc.health.v1.Health"] {
        assert!(names.iter().any(|n| n == wanted), "{names:?}");
    }
    let Some(MessageResponse::FileDescriptorResponse(files)) =
        answers.next().await.unwrap().unwrap().message_response
    else {
        panic!("no file descriptor");
    };
    let file = prost_types::FileDescriptorProto::decode(files.file_descriptor_proto[0].as_slice())
        .unwrap();
    assert_eq!(file.package(), "stream");
    let service = &file.service[0];
    assert_eq!(service.name(), "Stream");
    assert_eq!(service.method[0].name(), "SubscribeDecoded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_v1alpha_lists_the_stream() {
    use reflection_alpha::server_reflection_request::MessageRequest;
    use reflection_alpha::server_reflection_response::MessageResponse;
    let (_appliance, grpc) = start();
    let mut client = reflection_alpha::server_reflection_client::ServerReflectionClient::new(
        channel(grpc).await,
    );
    let request = reflection_alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut answers = client
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) =
        answers.next().await.unwrap().unwrap().message_response
    else {
        panic!("no service list");
    };
    assert!(list.service.iter().any(|s| s.name == "stream.Stream"));
}
