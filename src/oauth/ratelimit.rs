//! Request budgets for the OAuth endpoints: a token bucket per client address in the
//! `OAuthState` object `rl:<address>` (IPv6 addresses count per /64, the block one subscriber
//! usually holds).
//!
//! What is counted: every registration request before its client is looked up (`register_ip`,
//! the size of `token_ip`), and registrations that create a client (`register`; registering
//! identical metadata again does not spend it, since Claude does it for every new connection
//! from a few shared addresses), token
//! requests per user grant (the routing id in the code or refresh token), all token requests
//! and all revocations (both before the client is authenticated, so that unknown clients, bad
//! secrets and made-up grants are counted), and authorization requests and sign-in attempts. A
//! token request spends its address's and its grant's budgets in one operation ([`check_all`]).
//! A storage failure lets the request through and is logged: rate limiting must not become an
//! outage.

use std::net::IpAddr;

use super::AuthObjects;
use super::error::OAuthError;
use super::state::{Bucket, StateOp, StateReply};
use crate::config::Limit;
use crate::http::HttpRequest;
use crate::mcp::Trace;
use crate::tools::registry::LocalBoxFuture;

/// The client's address as Cloudflare reports it (`CF-Connecting-IP`, set by the edge and not
/// forgeable there), reduced to its /64 for IPv6.
pub fn client_address(req: &HttpRequest) -> String {
    let Some(raw) = req.header("cf-connecting-ip").map(str::trim) else { return "unknown".into() };
    match raw.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.to_string(),
        // An IPv4-mapped address (RFC 4291 §2.5.5.2) is that IPv4 client, not one /64 that every
        // such client would share.
        Ok(IpAddr::V6(ip)) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = ip.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        Err(_) => "unknown".into(),
    }
}

/// Spends one request of `bucket` for this client address.
pub fn check<'a>(
    objects: &'a dyn AuthObjects,
    req: &'a HttpRequest,
    bucket: &str,
    limit: Limit,
    trace: &'a mut Trace,
) -> LocalBoxFuture<'a, Result<(), OAuthError>> {
    check_all(objects, req, vec![Bucket::new(bucket, limit)], trace)
}

/// Spends one request of each of `buckets` for this client address, in one call of its object
/// and all or none (`state::hit`: a refused request spends nothing).
pub fn check_all<'a>(
    objects: &'a dyn AuthObjects,
    req: &'a HttpRequest,
    buckets: Vec<Bucket>,
    trace: &'a mut Trace,
) -> LocalBoxFuture<'a, Result<(), OAuthError>> {
    // Boxed: five endpoints call it, compiled once (wasm size).
    Box::pin(spend(objects, req, buckets, trace))
}

async fn spend(
    objects: &dyn AuthObjects,
    req: &HttpRequest,
    buckets: Vec<Bucket>,
    trace: &mut Trace,
) -> Result<(), OAuthError> {
    let name = format!("rl:{}", client_address(req));
    match objects.state(name, StateOp::Hit { buckets }).await {
        Ok(StateReply::Limited { retry_after_secs, bucket }) => {
            trace.detail = Some(format!("rate limited: {bucket}"));
            Err(OAuthError::too_many(retry_after_secs))
        }
        Ok(_) => Ok(()),
        Err(e) => {
            trace.detail = Some(format!("rate limiter unavailable (request allowed): {e}"));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_by_address() {
        let req = |ip: &str| HttpRequest {
            headers: vec![("cf-connecting-ip".into(), ip.into())],
            ..HttpRequest::default()
        };
        assert_eq!(client_address(&req("203.0.113.7")), "203.0.113.7");
        assert_eq!(client_address(&req("2001:db8:1:2:3:4:5:6")), "2001:db8:1:2::/64");
        assert_eq!(client_address(&req("2001:db8:1:2:ffff::1")), "2001:db8:1:2::/64");
        assert_eq!(client_address(&req(" 203.0.113.7 ")), "203.0.113.7");
        assert_eq!(client_address(&req("::ffff:203.0.113.7")), "203.0.113.7");
        assert_eq!(client_address(&req("::ffff:cb00:7107")), "203.0.113.7");
        assert_eq!(client_address(&req("::1")), "0:0:0:0::/64");
        // Not addresses: a host name, a bracketed or malformed address, a port.
        for other in ["nonsense", "example.com", "[2001:db8::1]", "2001:db8:::1", "203.0.113.7:443", ""] {
            assert_eq!(client_address(&req(other)), "unknown", "{other}");
        }
        assert_eq!(client_address(&HttpRequest::default()), "unknown");
    }
}
