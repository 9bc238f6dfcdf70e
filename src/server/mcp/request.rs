//! server::mcp::request: what one `tools/call` knows of its request, whichever path served it
//! (rmcp's service, [`super::handler`], or the stateless fast path, [`super::lean`]): the
//! request's `_meta`, its HTTP parts (with the caller the auth layer put there), its
//! cancellation, and where its notifications go.

use axum::http::request::Parts;
use rmcp::model::{
    ProgressNotification, ProgressNotificationParam, RequestMetaObject, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One `tools/call` request as the call sees it.
pub struct CallRequest<'a> {
    pub meta: &'a RequestMetaObject,
    pub parts: &'a Parts,
    /// Cancelled when the client cancels the call or goes away.
    pub cancelled: CancellationToken,
    pub notices: Notices<'a>,
}

/// Where a held call's progress (and, in a session, its approval link) goes.
#[derive(Clone, Copy)]
pub enum Notices<'a> {
    /// rmcp's peer of this request: it frames what is sent on the call's own stream.
    Peer(&'a Peer<RoleServer>),
    /// The fast path's response stream: the first message turns the answer into SSE.
    Stream(&'a mpsc::Sender<ServerJsonRpcMessage>),
}

impl Notices<'_> {
    /// Sends a progress notification; one that cannot be delivered is dropped (the client
    /// went away, and the call's cancellation says so).
    pub async fn progress(&self, param: ProgressNotificationParam) {
        match self {
            Notices::Peer(peer) => {
                if let Err(error) = peer.notify_progress(param).await {
                    tracing::debug!(%error, "progress notification not sent");
                }
            }
            Notices::Stream(stream) => {
                let notification =
                    ServerNotification::ProgressNotification(ProgressNotification::new(param));
                let message = ServerJsonRpcMessage::notification(notification);
                // Never waited on: a client that does not read its stream must not hold the
                // call past its deadline, so a notice that finds the stream full is dropped.
                if let Err(error) = stream.try_send(message) {
                    tracing::debug!(%error, "progress notification not sent");
                }
            }
        }
    }

    /// The peer that can be asked to open a URL, when the client declared URL elicitation on
    /// a session. A stateless request has none: servers send no requests on 2026-07-28.
    pub fn url_elicitation(&self) -> Option<&Peer<RoleServer>> {
        match self {
            Notices::Peer(peer)
                if peer
                    .supported_elicitation_modes()
                    .contains(&ElicitationMode::Url) =>
            {
                Some(peer)
            }
            _ => None,
        }
    }
}
