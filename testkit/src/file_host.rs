//! The public file host of the archive tests: a range-capable HTTP/1.1 static file server (HEAD,
//! GET, GET with one `Range: bytes=a-b`, keep-alive) written with std (python's http.server has
//! no ranges), with a switch that makes its range answers misbehave the ways real hosts do.
#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Serves files under `root` and returns the base URL. `ranges_served` counts the range requests
/// answered, `connections` the connections accepted.
pub fn serve(
    root: PathBuf,
    ranges_served: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
) -> String {
    serve_with_faults(
        root,
        ranges_served,
        connections,
        Arc::new(AtomicU8::new(Fault::None as u8)),
    )
}

/// How the server misanswers range requests (read per request).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Fault {
    None,
    /// Answers, then closes the connection without saying so (a kept-alive connection the
    /// server timed out).
    CloseAfterAnswer,
    /// Content-Length of the range, one byte less sent, then closed.
    ShortBody,
    /// A Content-Range one byte off.
    WrongContentRange,
    /// The right bytes as `Transfer-Encoding: chunked` (two chunks).
    Chunked,
    /// 416 to every range.
    Unsatisfiable,
}

impl Fault {
    /// The fault stored as `value` (`Fault::X as u8`).
    pub fn of(value: u8) -> Fault {
        [
            Fault::None,
            Fault::CloseAfterAnswer,
            Fault::ShortBody,
            Fault::WrongContentRange,
            Fault::Chunked,
            Fault::Unsatisfiable,
        ][value as usize]
    }
}

/// [`serve`] with a switch (a [`Fault`] as `u8`, read per request) that makes range answers
/// misbehave.
pub fn serve_with_faults(
    root: PathBuf,
    ranges_served: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
    fault: Arc<AtomicU8>,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            connections.fetch_add(1, Ordering::Relaxed);
            let root = root.clone();
            let counter = ranges_served.clone();
            let fault = fault.clone();
            std::thread::spawn(move || {
                let _ = handle(stream, &root, &counter, &fault);
            });
        }
    });
    format!("http://{addr}")
}

fn handle(
    stream: TcpStream,
    root: &Path,
    counter: &AtomicUsize,
    fault: &AtomicU8,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = std::io::BufWriter::new(stream);
    loop {
        let Some(Request {
            line: request,
            range,
        }) = read_request(&mut reader)?
        else {
            return Ok(()); // connection closed
        };
        let mut parts = request.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let path = root.join(parts.next().unwrap_or("/").trim_start_matches('/'));
        let file = path.is_file().then(|| File::open(&path).ok()).flatten();
        let Some(mut file) = file else {
            out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?;
            out.flush()?;
            continue;
        };
        let len = file.metadata()?.len();
        match (method.as_str(), range) {
            ("HEAD", _) => {
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nAccept-Ranges: bytes\r\n\r\n"
                )?;
            }
            ("GET", Some((a, b))) if a <= b && b < len => {
                counter.fetch_add(1, Ordering::Relaxed);
                let fault = Fault::of(fault.load(Ordering::Relaxed));
                answer_range(&mut out, &mut file, (a, b, len), fault)?;
                if matches!(fault, Fault::CloseAfterAnswer | Fault::ShortBody) {
                    out.flush()?;
                    return Ok(()); // closes the connection
                }
            }
            ("GET", Some(_)) => {
                write!(
                    out,
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n\r\n"
                )?;
            }
            _ => answer_whole(&mut out, &mut file)?,
        }
        out.flush()?;
    }
}

/// What the server reads of a request.
struct Request {
    /// The request line (method, path, version).
    line: String,
    /// `Range: bytes=a-b`, if sent.
    range: Option<(u64, u64)>,
}

/// Reads one request's line and headers. `None`: the connection closed.
fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut request = String::new();
    if reader.read_line(&mut request)? == 0 {
        return Ok(None);
    }
    let mut range = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            let spec = value.trim().strip_prefix("bytes=").unwrap();
            let (a, b) = spec.split_once('-').unwrap();
            range = Some((a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()));
        }
    }
    Ok(Some(Request {
        line: request,
        range,
    }))
}

/// Answers with the whole file.
fn answer_whole(out: &mut impl Write, file: &mut File) -> std::io::Result<()> {
    let mut body = Vec::new();
    file.read_to_end(&mut body)?;
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )?;
    out.write_all(&body)
}

/// Answers a satisfiable range `a..=b` of a file of `len` bytes, misbehaving as `fault` says.
fn answer_range(
    out: &mut impl Write,
    file: &mut File,
    (a, b, len): (u64, u64, u64),
    fault: Fault,
) -> std::io::Result<()> {
    let mut body = vec![0u8; (b - a + 1) as usize];
    file.seek(SeekFrom::Start(a))?;
    file.read_exact(&mut body)?;
    let (ra, rb) = match fault {
        Fault::WrongContentRange => (a + 1, b + 1),
        _ => (a, b),
    };
    match fault {
        Fault::Unsatisfiable => write!(
            out,
            "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n\r\n"
        )?,
        Fault::Chunked => {
            write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked\r\nContent-Range: bytes {a}-{b}/{len}\r\n\r\n"
            )?;
            let (one, two) = body.split_at(body.len() / 2);
            for chunk in [one, two] {
                if !chunk.is_empty() {
                    write!(out, "{:x}\r\n", chunk.len())?;
                    out.write_all(chunk)?;
                    out.write_all(b"\r\n")?;
                }
            }
            out.write_all(b"0\r\n\r\n")?;
        }
        _ => {
            write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {ra}-{rb}/{len}\r\n\r\n",
                body.len()
            )?;
            let sent = if fault == Fault::ShortBody {
                body.len() - 1
            } else {
                body.len()
            };
            out.write_all(&body[..sent])?;
        }
    }
    Ok(())
}
