//! getSignaturesForAddress with an upstream: the upstream's (newest) rows first, then the
//! archive's rows that continue strictly after them, de-duplicated, `limit` over the union.

use archive::SignatureQuery;
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::{Dispatched, Frontend};
use crate::envelope::{self, Call};
use crate::error::{self, RpcError};
use crate::methods::{self, Outcome, SignatureRow};
use crate::params::GetSignaturesForAddress;
use crate::upstream::Upstream;

/// Pages read from the archive to fill a merged answer when rows overlap the upstream's.
const MAX_CONTINUATION_PAGES: usize = 8;

#[derive(Serialize)]
#[serde(untagged)]
enum MergedRow {
    Upstream(Value),
    Archive(SignatureRow),
}

impl Frontend {
    /// getSignaturesForAddress with an upstream: its (newest) rows first, then the archive's,
    /// continuing strictly after the last upstream row, de-duplicated, `limit` over the union.
    pub(super) async fn merged_signatures(
        &self,
        upstream: &Upstream,
        call: &Call<'_>,
        request: &GetSignaturesForAddress,
    ) -> Dispatched {
        let response = match upstream
            .post(Bytes::copy_from_slice(call.raw.get().as_bytes()))
            .await
        {
            Ok(response) => response,
            Err(error) => {
                self.shared.metrics.count_upstream_failure();
                return Dispatched::Rejected(RpcError::upstream_failed(&error.to_string()));
            }
        };
        let parsed: Option<Value> = serde_json::from_slice(&response.body).ok();
        let rows = match parsed
            .as_ref()
            .and_then(|v| v.get("result"))
            .and_then(Value::as_array)
        {
            Some(rows) => rows.clone(),
            // An upstream error (or anything else) is the answer, as the upstream gave it.
            None if parsed.is_some() => return Dispatched::Merged(response.body.to_vec()),
            None => {
                self.shared.metrics.count_upstream_failure();
                return Dispatched::Rejected(RpcError::upstream_failed("no JSON answer"));
            }
        };
        let archive = match self.archive_continuation(request, &rows) {
            Ok(archive) => archive,
            Err(outcome) => return Dispatched::Local(outcome),
        };
        let merged: Vec<MergedRow> = rows
            .into_iter()
            .map(MergedRow::Upstream)
            .chain(archive.into_iter().map(MergedRow::Archive))
            .take(request.limit)
            .collect();
        match serde_json::to_vec(&merged) {
            Ok(result) => {
                let mut out = Vec::with_capacity(result.len() + 64);
                envelope::write_result(&mut out, &result, &call.id);
                Dispatched::Merged(out)
            }
            Err(_) => Dispatched::Rejected(RpcError::internal()),
        }
    }

    /// The archive rows that follow the upstream's `rows` (see `merged_signatures`).
    fn archive_continuation(
        &self,
        request: &GetSignaturesForAddress,
        rows: &[Value],
    ) -> Result<Vec<SignatureRow>, Outcome> {
        let store = &*self.shared.store;
        let wanted = request.limit.saturating_sub(rows.len());
        if wanted == 0 {
            return Ok(Vec::new());
        }
        let storage = |error: archive::ArchiveError| {
            tracing::warn!(%error, label = error.label(), "archive read failed");
            Outcome::Error(RpcError::storage_unreachable())
        };
        // Continue only when `until` is not what stopped the upstream: the archive must hold it.
        if let Some(until) = &request.until
            && store.transaction(until).map_err(storage)?.is_none()
        {
            return Ok(Vec::new());
        }
        let upstream_signatures: Vec<&str> = rows
            .iter()
            .filter_map(|row| row.get("signature")?.as_str())
            .collect();
        let last = rows.last().and_then(|row| {
            let signature = error::parse_signature(row.get("signature")?.as_str()?).ok()?;
            Some((signature, row.get("slot")?.as_u64()?))
        });
        let (mut before, newest_slot) = match last {
            None => (request.before, None),
            Some((signature, slot)) => match store.transaction(&signature).map_err(storage)? {
                Some(_) => (Some(signature), None),
                // The archive does not hold the upstream's last row: start at the archive's
                // newest row and skip what is not older than it.
                None => (None, Some(slot)),
            },
        };
        let mut out = Vec::new();
        for _ in 0..MAX_CONTINUATION_PAGES {
            let query = SignatureQuery {
                before,
                until: request.until,
                limit: wanted - out.len(),
            };
            let found =
                methods::archive_signatures(store, &request.address, &query).map_err(storage)?;
            // An epoch without an address index ends the archive's part: the upstream's rows
            // are the answer for it (it was asked the same call).
            let unindexed = found.unindexed_epoch.is_some();
            let page = found.rows;
            let exhausted = unindexed || page.len() < query.limit;
            before = page
                .last()
                .and_then(|row| error::parse_signature(&row.signature).ok());
            out.extend(page.into_iter().filter(|row| {
                newest_slot.is_none_or(|slot| row.slot <= slot)
                    && !upstream_signatures.contains(&row.signature.as_str())
            }));
            if exhausted || out.len() >= wanted || before.is_none() {
                break;
            }
        }
        out.truncate(wanted);
        Ok(out)
    }
}
