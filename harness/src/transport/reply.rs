//! Types the transports share: how a server's request is answered while
//! a reply is read (`Answer`), and one HTTP exchange as seen on the wire
//! (`HttpReply`). Their home is here, below every transport, so that the
//! transports import them and not one another.

use super::{Frame, TransportError};
use serde::Serialize;
use serde_json::Value;

/// Makes the response to a request the server sent (its whole JSON-RPC
/// message) for a client that answers it.
pub type Answer<'a> = &'a (dyn Fn(&Value) -> Value + Send + Sync);

/// One HTTP exchange as seen on the wire.
#[derive(Debug, Clone, Serialize, Default)]
pub(super) struct HttpReply {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub content_type: Option<String>,
    /// Body text for non-SSE replies (lossy UTF-8, capped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub frames: Vec<Frame>,
    #[serde(skip)]
    pub response_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TransportError>,
    pub ms: u64,
    /// The connection was reset or closed before a byte of the answer came.
    #[serde(skip)]
    pub lost: bool,
    /// The lost attempts sent again before this one: why each was lost.
    #[serde(skip)]
    pub resent: Vec<String>,
}

impl HttpReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}
