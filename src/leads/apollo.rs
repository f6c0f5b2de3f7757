//! The live lead provider: Apollo's People API Search and bulk people enrichment (DOMAIN §2.1,
//! §2.3).
//!
//! * Count: `POST /mixed_people/api_search?per_page=1` and `pagination.total_entries` — free.
//!   A response with people but a zero total means Apollo ignored the filters (a known
//!   failure mode with wrong parameter names), so the count is refused rather than trusted.
//! * Preview: the first page of the same search — free, no emails, last names obfuscated.
//! * Import: pages of 100 from the search, then `POST /people/bulk_match` in calls of at most
//!   10 people by Apollo id to reveal work emails — this spends credits, counted from
//!   `credits_consumed`. Search paging stops at Apollo's display cap of 50,000 records.
//!
//! Filters are query parameters with `[]` array names, as Apollo documents them. Apollo has no
//! server-side exclusion for industries and company domains; those are dropped from results
//! here, so its counts include them (the result says so). A 429 is retried after its
//! `retry-after` (through `Outbound::sleep`) when the wait is short; 5xx and network failures
//! are retried once. Every other failure becomes a [`LeadError`] the tools turn into a
//! refusal.

use serde_json::{Value, json};

use super::filters::{Filters, Vocabulary};
use super::{Batch, LeadError, LeadProvider, Person, PoolEstimate};
use crate::config::ApolloConfig;
use crate::outbound::{Outbound, OutboundRequest, OutboundResponse, said};
use crate::tools::registry::LocalBoxFuture;

/// Results per search page (Apollo's maximum).
pub const PAGE_SIZE: u64 = 100;
/// Apollo shows at most this many records of one search (100 × 500 pages).
pub const DISPLAY_CAP: u64 = 50_000;
/// People per enrichment call (Apollo's maximum for `bulk_match`).
pub const ENRICH_BATCH: usize = 10;
/// The longest `retry-after` waited for inside one call; longer waits are refused.
const MAX_WAIT_S: u64 = 20;
/// Attempts per request (the first and the retries).
const ATTEMPTS: u32 = 3;

/// Apollo, through the outbound HTTP port.
pub struct Apollo<'a> {
    config: Option<&'a ApolloConfig>,
    outbound: &'a dyn Outbound,
}

impl<'a> Apollo<'a> {
    /// The adapter; without a key every call answers [`LeadError::NotConfigured`].
    pub fn new(config: Option<&'a ApolloConfig>, outbound: &'a dyn Outbound) -> Self {
        Apollo { config, outbound }
    }

    fn config(&self) -> Result<&'a ApolloConfig, LeadError> {
        self.config.ok_or_else(|| LeadError::NotConfigured("APOLLO_API_KEY is not set".into()))
    }

    /// Sends a request, waiting out short rate limits (a 429 did nothing) and, when `repeat`,
    /// retrying transient failures. Enrichment is not repeated: a lost answer may have charged
    /// its credits, and enriching the same people again charges them again (DOMAIN §2; audit
    /// finding). The import's next run starts again at that chunk, once.
    async fn send(&self, path_and_query: &str, body: Value, repeat: bool) -> Result<Value, LeadError> {
        let config = self.config()?;
        let url = format!("{}{path_and_query}", config.base_url);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let request = OutboundRequest::post(url.clone(), "application/json", body.to_string())
                .header("x-api-key", config.api_key.0.clone())
                .header("accept", "application/json")
                .header("cache-control", "no-cache")
                .header("user-agent", concat!("VibeSell/", env!("CARGO_PKG_VERSION")));
            let response = match self.outbound.fetch(request).await {
                Ok(r) => r,
                Err(e) if repeat && attempt < ATTEMPTS => {
                    let _ = e;
                    self.outbound.sleep(500 * attempt).await;
                    continue;
                }
                Err(e) => return Err(LeadError::Unavailable(format!("no response ({e})"))),
            };
            match response.status {
                200..=299 => {
                    return serde_json::from_slice(&response.body)
                        .map_err(|_| LeadError::Unavailable("the response was not JSON".into()));
                }
                429 => {
                    let wait = retry_after_seconds(&response);
                    if attempt < ATTEMPTS && wait <= MAX_WAIT_S {
                        self.outbound.sleep(u32::try_from(wait * 1000).unwrap_or(u32::MAX)).await;
                        continue;
                    }
                    return Err(LeadError::RateLimited { retry_after_s: wait.max(1) });
                }
                500..=599 if repeat && attempt < ATTEMPTS => {
                    self.outbound.sleep(1000 * attempt).await;
                    continue;
                }
                status => return Err(status_error(status, &response)),
            }
        }
    }

    async fn search(&self, filters: &Filters, page: u64, per_page: u64) -> Result<SearchPage, LeadError> {
        let query = search_query(filters, page, per_page);
        let json = self.send(&format!("/mixed_people/api_search?{query}"), json!({}), true).await?;
        let people: Vec<Value> = json.get("people").and_then(Value::as_array).cloned().unwrap_or_default();
        let total = json
            .pointer("/pagination/total_entries")
            .or_else(|| json.get("total_entries"))
            .and_then(Value::as_u64)
            .ok_or_else(|| LeadError::Unavailable("the search answer has no total".into()))?;
        if total == 0 && !people.is_empty() {
            return Err(LeadError::FilterNotApplied(
                "people came back with a total of zero, which Apollo does when it does not recognise the filters"
                    .into(),
            ));
        }
        Ok(SearchPage { people, total })
    }

    async fn enrich(&self, ids: &[String]) -> Result<(Vec<Option<Value>>, u64), LeadError> {
        let details: Vec<Value> = ids.iter().map(|id| json!({ "id": id })).collect();
        // Work emails only: the reveal flags are query parameters, as Apollo documents them, set
        // to their defaults so that no change of default could spend credits on personal
        // addresses or phone numbers.
        let json = self
            .send(
                "/people/bulk_match?reveal_personal_emails=false&reveal_phone_number=false",
                json!({ "details": details }),
                false,
            )
            .await?;
        let matches: Vec<Option<Value>> = json
            .get("matches")
            .and_then(Value::as_array)
            .map(|m| m.iter().map(|v| if v.is_object() { Some(v.clone()) } else { None }).collect())
            .unwrap_or_default();
        let credits = json.get("credits_consumed").and_then(Value::as_u64).unwrap_or_else(|| {
            // Apollo charges per revealed email when it does not say otherwise.
            matches.iter().flatten().filter(|m| work_email(m).is_some()).count() as u64
        });
        Ok((matches, credits))
    }
}

struct SearchPage {
    people: Vec<Value>,
    total: u64,
}

/// Seconds to wait after a 429: its `retry-after` (delta-seconds) when it has one. Apollo's
/// limits are fixed windows of a minute, an hour and a day, and its answers say what is left of
/// each (`x-minute-requests-left`, …; docs.apollo.io, "Rate limits"): a window used up is waited
/// out whole, since when it started is not said. Otherwise a short wait.
fn retry_after_seconds(response: &OutboundResponse) -> u64 {
    if let Some(s) = response.header("retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
        return s;
    }
    [("x-daily-requests-left", 86_400), ("x-hourly-requests-left", 3_600), ("x-minute-requests-left", 60)]
        .into_iter()
        .find(|(left, _)| response.header(left).is_some_and(|left| left.trim() == "0"))
        .map_or(5, |(_, s)| s)
}

fn status_error(status: u16, response: &OutboundResponse) -> LeadError {
    let said = serde_json::from_slice::<Value>(&response.body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
                .and_then(|s| said("Apollo", s))
        })
        .map_or_else(String::new, |s| format!(" ({s})"));
    match status {
        401 => LeadError::Rejected(format!("the API key was not accepted{said}")),
        403 => LeadError::Rejected(format!(
            "the API key may not use this endpoint; people search needs a master key on a paid plan{said}"
        )),
        400 | 404 | 422 => LeadError::Rejected(format!("the search was not valid{said}")),
        402 => {
            LeadError::Rejected(format!("the Apollo account is out of credits or needs a paid plan{said}"))
        }
        s => LeadError::Unavailable(format!("HTTP {s}{said}")),
    }
}

/// Apollo's department value for a VibeSell department id.
pub fn department_value(id: &str) -> &'static str {
    match id {
        "executive" => "c_suite",
        "sales" => "master_sales",
        "marketing" => "master_marketing",
        "engineering" => "master_engineering_technical",
        "product" => "product_management",
        "finance" => "master_finance",
        "operations" => "master_operations",
        "human_resources" => "master_human_resources",
        "information_technology" => "master_information_technology",
        "customer_success" => "support",
        "legal" => "master_legal",
        _ => "design",
    }
}

/// The search's query string.
pub fn search_query(f: &Filters, page: u64, per_page: u64) -> String {
    let mut q: Vec<(String, String)> = Vec::new();
    let mut list = |name: &str, values: Vec<String>| {
        for v in values {
            q.push((format!("{name}[]"), v));
        }
    };
    list("person_titles", f.titles.clone());
    list("person_not_titles", f.exclude_titles.clone());
    list("person_seniorities", f.seniorities.clone());
    list(
        "person_department_or_subdepartments",
        f.departments.iter().map(|d| department_value(d).to_owned()).collect(),
    );
    list("person_locations", f.countries.clone());
    list(
        "organization_num_employees_ranges",
        f.company_sizes
            .iter()
            .filter_map(|s| {
                super::vocab::COMPANY_SIZES.iter().find(|(label, _)| label == s).map(|x| x.1.to_owned())
            })
            .collect(),
    );
    // Industries and keywords are both organisation keyword tags on Apollo.
    list(
        "q_organization_keyword_tags",
        f.industries.iter().chain(&f.keywords).map(|v| v.to_lowercase()).collect(),
    );
    if !f.titles.is_empty() {
        q.push(("include_similar_titles".into(), "false".into()));
    }
    // People whose work address Apollo has verified, for the count as for the import: unverified
    // addresses bounce, and bounces pause campaigns and burn the sending domains (DOMAIN §6.3).
    q.push(("contact_email_status[]".into(), "verified".into()));
    q.push(("page".into(), page.to_string()));
    q.push(("per_page".into(), per_page.to_string()));
    q.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&")
}

/// Percent-encodes a query component (RFC 3986 unreserved characters kept).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A field of Apollo's, trimmed, and at most [`MAX_FIELD`] characters: names, titles and
/// companies are stored, shown and framed for the model, whatever length Apollo sends.
fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(MAX_FIELD).collect())
}

/// Longest field kept: longer than any name, title, company, domain or address (254).
const MAX_FIELD: usize = 256;

/// A real work email from an enrichment match (Apollo puts placeholders in locked ones).
fn work_email(m: &Value) -> Option<String> {
    let email = text(m, "/email")?.to_ascii_lowercase();
    let locked = email.starts_with("email_not_unlocked") || !email.contains('@');
    (!locked).then_some(email)
}

fn company_domain(p: &Value) -> Option<String> {
    text(p, "/organization/primary_domain")
        .or_else(|| text(p, "/organization/website_url").and_then(|u| super::filters::normalize_domain(&u)))
}

fn size_band(p: &Value) -> Option<String> {
    let n = p.pointer("/organization/estimated_num_employees").and_then(Value::as_u64)?;
    let bands = [
        (10, "1-10"),
        (50, "11-50"),
        (200, "51-200"),
        (500, "201-500"),
        (1000, "501-1000"),
        (5000, "1001-5000"),
        (10000, "5001-10000"),
    ];
    Some(bands.iter().find(|(max, _)| n <= *max).map_or("10001+", |b| b.1).to_owned())
}

/// A search result (and its enrichment, when there is one) as a [`Person`].
fn person(p: &Value, enriched: Option<&Value>) -> Person {
    let e = enriched.unwrap_or(p);
    let pick = |ptr: &str| text(e, ptr).or_else(|| text(p, ptr));
    Person {
        provider_id: text(p, "/id").unwrap_or_default(),
        first_name: pick("/first_name").unwrap_or_default(),
        last_name: pick("/last_name").or_else(|| text(p, "/last_name_obfuscated")).unwrap_or_default(),
        title: pick("/title").unwrap_or_default(),
        seniority: pick("/seniority"),
        department: text(e, "/departments/0").or_else(|| text(p, "/departments/0")),
        company: pick("/organization/name").unwrap_or_default(),
        company_domain: company_domain(e).or_else(|| company_domain(p)),
        industry: pick("/organization/industry"),
        company_size: size_band(e).or_else(|| size_band(p)),
        country: pick("/country"),
        city: pick("/city"),
        // Only an address Apollo has verified is imported: the search asks for verified people
        // only, and an enrichment that says otherwise (the status can change in between) counts as
        // no usable address (DOMAIN §6.3: verify before import, only Verified).
        email: enriched
            .filter(|m| text(m, "/email_status").as_deref() == Some("verified"))
            .and_then(work_email),
        email_status: enriched.and_then(|m| text(m, "/email_status")),
    }
}

/// Whether a result survives the exclusions Apollo cannot apply itself.
fn kept(f: &Filters, p: &Person) -> bool {
    let domain_excluded = p
        .company_domain
        .as_ref()
        .is_some_and(|d| f.exclude_company_domains.iter().any(|x| d == x || d.ends_with(&format!(".{x}"))));
    let industry_excluded = p
        .industry
        .as_ref()
        .is_some_and(|i| f.exclude_industries.iter().any(|x| super::vocab::key(x) == super::vocab::key(i)));
    // Whole words, as people read a title: excluding "CTO" must not drop every "Director", nor
    // "Intern" every "International" (audit finding).
    let title = format!(" {} ", super::vocab::key(&p.title));
    let title_excluded =
        f.exclude_titles.iter().any(|x| title.contains(&format!(" {} ", super::vocab::key(x))));
    !(domain_excluded || industry_excluded || title_excluded)
}

impl LeadProvider for Apollo<'_> {
    fn name(&self) -> &'static str {
        "apollo"
    }

    fn vocabulary(&self) -> Vocabulary {
        Vocabulary::APOLLO
    }

    fn estimate<'b>(&'b self, filters: &'b Filters) -> LocalBoxFuture<'b, Result<PoolEstimate, LeadError>> {
        Box::pin(async move {
            let page = self.search(filters, 1, 1).await?;
            Ok(PoolEstimate {
                count: page.total,
                exclusions_counted: filters.exclude_industries.is_empty()
                    && filters.exclude_company_domains.is_empty(),
                reachable: page.total.min(DISPLAY_CAP),
                companies: None,
                with_email: None,
                breakdowns: Vec::new(),
            })
        })
    }

    fn sample<'b>(
        &'b self,
        filters: &'b Filters,
        n: usize,
    ) -> LocalBoxFuture<'b, Result<Vec<Person>, LeadError>> {
        Box::pin(async move {
            // A little more than asked, so exclusions dropped here still leave `n`.
            let page = self.search(filters, 1, (n as u64 + 15).min(PAGE_SIZE)).await?;
            Ok(page.people.iter().map(|p| person(p, None)).filter(|p| kept(filters, p)).take(n).collect())
        })
    }

    fn fetch<'b>(
        &'b self,
        filters: &'b Filters,
        from: u64,
        n: usize,
        known: &'b dyn Fn(&str) -> bool,
    ) -> LocalBoxFuture<'b, Result<Batch, LeadError>> {
        Box::pin(async move {
            if from >= DISPLAY_CAP {
                return Ok(Batch { exhausted: true, ..Batch::default() });
            }
            let page_no = from / PAGE_SIZE + 1;
            let skip = (from % PAGE_SIZE) as usize;
            let page = self.search(filters, page_no, PAGE_SIZE).await?;
            let wanted = n.min(PAGE_SIZE as usize - skip);
            let slice: Vec<&Value> = page.people.iter().skip(skip).take(wanted).collect();
            let consumed = slice.len() as u64;
            let end = page.total.min(DISPLAY_CAP);
            let exhausted = from + consumed >= end
                || page.people.len() < PAGE_SIZE as usize && skip + slice.len() >= page.people.len();
            // Positions in the slice stay attached, so that a failure part-way can end the batch
            // right before the first person it could not enrich.
            let unexcluded: Vec<(u64, &Value)> =
                (0..consumed).zip(slice).filter(|(_, p)| kept(filters, &person(p, None))).collect();
            // People the workspace already has are not enriched again (that would cost credits).
            let (known_people, candidates): (Vec<_>, Vec<_>) =
                unexcluded.iter().partition(|(_, p)| text(p, "/id").is_some_and(|id| known(&id)));
            let mut batch = Batch { consumed, exhausted, ..Batch::default() };
            let mut rejected = 0;
            for chunk in candidates.chunks(ENRICH_BATCH) {
                let ids: Vec<String> =
                    chunk.iter().map(|(_, p)| text(p, "/id").unwrap_or_default()).collect();
                let (matches, spent) = match self.enrich(&ids).await {
                    Ok(m) => m,
                    Err(e) => {
                        // What earlier chunks enriched is paid for: it is kept, and the batch
                        // ends before this chunk so that the next one starts with it (audit:
                        // an error that dropped the whole batch paid twice for the same people).
                        batch.consumed = chunk[0].0;
                        batch.exhausted = false;
                        batch.interrupted = Some(e);
                        break;
                    }
                };
                batch.credits += spent;
                for (i, (_, p)) in chunk.iter().enumerate() {
                    // Matches come back in request order; fall back to matching by id.
                    let m = matches
                        .get(i)
                        .and_then(Option::as_ref)
                        .filter(|m| text(m, "/id") == text(p, "/id"))
                        .or_else(|| matches.iter().flatten().find(|m| text(m, "/id") == text(p, "/id")));
                    let enriched = person(p, m);
                    // The enriched record can reveal an excluded company the search hid.
                    if kept(filters, &enriched) {
                        batch.people.push(enriched);
                    } else {
                        rejected += 1;
                    }
                }
            }
            let taken = batch.consumed;
            batch.known = known_people.iter().filter(|(at, _)| *at < taken).count() as u64;
            let unexcluded = unexcluded.iter().filter(|(at, _)| *at < taken).count() as u64;
            batch.excluded = taken - unexcluded + rejected;
            Ok(batch)
        })
    }
}

#[cfg(test)]
mod tests;
