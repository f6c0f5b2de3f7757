//! The sandbox lead database: millions of plausible B2B people at plausible companies,
//! generated inside the Worker, deterministically, with nothing stored (PRODUCT §9).
//!
//! # Model
//!
//! The population is split into *cells* `(country c, industry i, segment g, size band s,
//! title t)`. A cell holds `N = cu[c][i] · h(i,g,s,t)` people, where `cu` is the country's
//! weight (doubled where the industry is strong) and `h` is the number of people with the
//! title per "country unit" of that segment and size. The companies of `(c,i,g,s)` number
//! `K = cu[c][i] · k(i,g,s)`; person `j` of a cell works at company `j mod K`, so companies of a
//! cell share its people evenly (one CEO each, a few VPs at big ones, and so on).
//!
//! Because every count is a product of small tables, counting a filter is a sum over the
//! matching cells' factors — a few thousand multiplications, never a scan of people. A person
//! is generated on demand from their cell and index: names from the country's culture, the
//! company's name and domain from a keyed permutation of the company's global number (so a
//! domain parses back to its company, which is how `exclude_company_domains` is counted), the
//! email from the company's address pattern. The same filters always give the same people.
//!
//! # Order
//!
//! The people matching a filter have a canonical order (by cell, then index). Sampling and
//! importing walk a permutation of it — position `m` is canonical position
//! `(offset + m · stride) mod count` with `stride` coprime to `count` — so the first people
//! are spread across the whole pool, the sample is exactly the first people an import brings
//! in, and walking `m = 0..count` visits every matching person exactly once.

pub mod names;

use std::sync::OnceLock;

use super::Person;
use super::filters::Filters;
use super::vocab::{self, COMPANY_SIZES, COUNTRIES, DEPARTMENTS, INDUSTRIES, SENIORITIES, TITLES};

/// The sandbox provider (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sandbox;

const SIZES: usize = 8;
const SEGMENTS: usize = 4;
/// Companies per country unit and segment, by size band, for an industry of weight 10 with 4
/// segments (scaled by weight and segment count).
const COMPANIES_PER_UNIT: [u64; SIZES] = [40, 25, 16, 5, 3, 2, 1, 1];

/// The 64-bit finaliser of SplitMix64: a bijection on `u64` that scatters bits.
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A hash of several values.
fn hash(parts: &[u64]) -> u64 {
    parts.iter().fold(0x9e37_79b9_7f4a_7c15, |acc, &p| mix64(acc ^ p.wrapping_mul(0x2545_f491_4f6c_dd1d)))
}

/// The tables every count and every person derive from, built once per isolate.
struct Model {
    /// `k(i,g,s)`: companies per country unit, `[industry][segment][size]`.
    k: Vec<[[u64; SIZES]; SEGMENTS]>,
    /// `cu[c][i]`: the country unit weight.
    cu: Vec<Vec<u64>>,
    /// Companies before each `(c,i,g,s)` cell in global company numbering (one more entry
    /// than cells).
    company_offsets: Vec<u64>,
}

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let k = INDUSTRIES
            .iter()
            .map(|ind| {
                let mut t = [[0u64; SIZES]; SEGMENTS];
                let segs = ind.segments.len() as u64;
                for (g, row) in t.iter_mut().enumerate().take(ind.segments.len()) {
                    for (s, cell) in row.iter_mut().enumerate() {
                        // Rounded: w · n · 4 / (segs · 10); small industries have no giants.
                        *cell = (u64::from(ind.weight) * COMPANIES_PER_UNIT[s] * 4 * 10 / segs + 50) / 100;
                        let _ = g;
                    }
                }
                t
            })
            .collect();
        let cu = COUNTRIES
            .iter()
            .map(|c| {
                INDUSTRIES
                    .iter()
                    .map(|i| u64::from(c.weight) * if i.strong_in.contains(&c.code) { 2 } else { 1 })
                    .collect()
            })
            .collect();
        let mut m = Model { k, cu, company_offsets: Vec::new() };
        let mut offsets = Vec::with_capacity(COUNTRIES.len() * INDUSTRIES.len() * SEGMENTS * SIZES + 1);
        let mut total = 0u64;
        for c in 0..COUNTRIES.len() {
            for i in 0..INDUSTRIES.len() {
                for g in 0..SEGMENTS {
                    for s in 0..SIZES {
                        offsets.push(total);
                        total += m.companies(c, i, g, s);
                    }
                }
            }
        }
        offsets.push(total);
        m.company_offsets = offsets;
        m
    })
}

impl Model {
    fn companies(&self, c: usize, i: usize, g: usize, s: usize) -> u64 {
        self.cu[c][i] * self.k[i][g][s]
    }

    /// People per country unit with title `t` in `(i,g,s)`.
    fn h(&self, i: usize, g: usize, s: usize, t: usize) -> u64 {
        let title = &TITLES[t];
        let industry = &INDUSTRIES[i];
        if !vocab::title_in_industry(title, industry) {
            return 0;
        }
        let num = self.k[i][g][s]
            * u64::from(title.profile[s])
            * u64::from(title.scale)
            * u64::from(vocab::presence(title, industry));
        (num + 5_000_000) / 10_000_000
    }

    fn cell_index(c: usize, i: usize, g: usize, s: usize) -> usize {
        ((c * INDUSTRIES.len() + i) * SEGMENTS + g) * SIZES + s
    }

    fn total_companies(&self) -> u64 {
        self.company_offsets.last().copied().unwrap_or(0)
    }

    /// The cell and index of global company `n`.
    fn company_cell(&self, n: u64) -> Option<(usize, usize, usize, usize, u64)> {
        if n >= self.total_companies() {
            return None;
        }
        // The last offset ≤ n whose cell is not empty.
        let idx = self.company_offsets.partition_point(|&o| o <= n) - 1;
        let s = idx % SIZES;
        let g = (idx / SIZES) % SEGMENTS;
        let i = (idx / (SIZES * SEGMENTS)) % INDUSTRIES.len();
        let c = idx / (SIZES * SEGMENTS * INDUSTRIES.len());
        Some((c, i, g, s, n - self.company_offsets[idx]))
    }
}

// ---- company names -----------------------------------------------------------------------

fn name_space() -> u64 {
    (names::prefixes().count() * names::suffixes().count() * names::QUALIFIERS.len() * names::TLDS.len())
        as u64
}

/// A keyed Feistel permutation of `[0, 2^bits)`, `bits` even.
fn feistel(x: u64, bits: u32, inverse: bool) -> u64 {
    const KEYS: [u64; 4] = [0x5bd1_e995, 0x1b87_3593, 0xcc9e_2d51, 0x85eb_ca6b];
    let half = bits / 2;
    let mask = (1u64 << half) - 1;
    let (mut l, mut r) = (x >> half, x & mask);
    if inverse {
        for key in KEYS.iter().rev() {
            let prev_r = l;
            let prev_l = r ^ (mix64(prev_r ^ key) & mask);
            (l, r) = (prev_l, prev_r);
        }
    } else {
        for key in KEYS {
            (l, r) = (r, l ^ (mix64(r ^ key) & mask));
        }
    }
    (l << half) | r
}

/// A permutation of `[0, name_space())` (cycle-walking Feistel).
fn permute_name(n: u64, inverse: bool) -> u64 {
    let space = name_space();
    let mut bits = 64 - (space - 1).leading_zeros();
    bits += bits % 2;
    let mut x = feistel(n, bits, inverse);
    while x >= space {
        x = feistel(x, bits, inverse);
    }
    x
}

/// A company, as people show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Company {
    /// Its global number.
    pub number: u64,
    /// Display name.
    pub name: String,
    /// Web domain.
    pub domain: String,
    /// Cell: country, industry, segment, size.
    pub cell: (usize, usize, usize, usize),
    /// Index within the cell.
    pub index: u64,
    /// The city of its office.
    pub city: &'static str,
    /// Which address pattern its emails follow.
    pub email_pattern: u8,
}

/// The word with its first letter in upper case. The words are the prefixes of the sandbox's
/// domain names, which are ASCII (`names::tests`), so ASCII upper case is the whole of it.
fn capitalize(word: &str) -> String {
    let mut name = word.to_owned();
    if let Some(first) = name.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    name
}

/// The company with global number `n`.
pub fn company(n: u64) -> Option<Company> {
    let m = model();
    let (c, i, g, s, index) = m.company_cell(n)?;
    let name_no = permute_name(n, false);
    let (p, rest) = (name_no % names::prefixes().count() as u64, name_no / names::prefixes().count() as u64);
    let (x, rest) = (rest % names::suffixes().count() as u64, rest / names::suffixes().count() as u64);
    let (q, tld) = (rest % names::QUALIFIERS.len() as u64, rest / names::QUALIFIERS.len() as u64);
    let (prefix, suffix) = (names::prefixes().get(p as usize), names::suffixes().get(x as usize));
    let (qualifier, shown) = names::QUALIFIERS[q as usize];
    let tld = names::TLDS[tld as usize].unwrap_or(COUNTRIES[c].cctld);
    let h = hash(&[n, 0xc0]);
    let cities = COUNTRIES[c].cities;
    Some(Company {
        number: n,
        name: format!("{}{suffix}{shown}", capitalize(prefix)),
        domain: format!("{prefix}{suffix}{qualifier}.{tld}"),
        cell: (c, i, g, s),
        index,
        city: cities[(h % cities.len() as u64) as usize],
        email_pattern: ((h >> 16) % 4) as u8,
    })
}

/// The company a domain belongs to, if the sandbox has one.
pub fn company_by_domain(domain: &str) -> Option<Company> {
    let (label, tld) = domain.split_once('.')?;
    let slots: Vec<usize> = match names::TLDS.iter().position(|t| *t == Some(tld)) {
        Some(slot) => vec![slot],
        None => vec![names::TLDS.iter().position(Option::is_none)?],
    };
    for (p, prefix) in names::prefixes().iter().enumerate() {
        let Some(rest) = label.strip_prefix(prefix) else { continue };
        for (x, suffix) in names::suffixes().iter().enumerate() {
            let Some(rest) = rest.strip_prefix(suffix) else { continue };
            let Some(q) = names::QUALIFIERS.iter().position(|(ql, _)| *ql == rest) else { continue };
            for &slot in &slots {
                let name_no = p as u64
                    + names::prefixes().count() as u64
                        * (x as u64
                            + names::suffixes().count() as u64
                                * (q as u64 + names::QUALIFIERS.len() as u64 * slot as u64));
                let n = permute_name(name_no, true);
                if let Some(company) = company(n)
                    && company.domain == domain
                {
                    return Some(company);
                }
            }
        }
    }
    None
}

// ---- people ------------------------------------------------------------------------------

/// Where a person sits: their cell and index in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PersonRef {
    /// Country index.
    pub c: usize,
    /// Industry index.
    pub i: usize,
    /// Segment index.
    pub g: usize,
    /// Size index.
    pub s: usize,
    /// Title index.
    pub t: usize,
    /// Index in the cell.
    pub j: u64,
}

impl PersonRef {
    /// The person's stable id.
    pub fn id(&self) -> String {
        let packed = (self.c as u64)
            | (self.i as u64) << 5
            | (self.g as u64) << 10
            | (self.s as u64) << 12
            | (self.t as u64) << 15
            | self.j << 22;
        format!("sbx_{:016x}", mix64(packed ^ 0x7a3c_91e5_0b2d_4f68))
    }

    /// The person, generated.
    pub fn person(&self) -> Person {
        let m = model();
        let k = m.companies(self.c, self.i, self.g, self.s);
        let index = self.j % k;
        let rank = self.j / k;
        let number = m.company_offsets[Model::cell_index(self.c, self.i, self.g, self.s)] + index;
        // The cell exists, so its company does.
        let company = company(number).unwrap_or_else(|| unreachable_company(number));
        let country = &COUNTRIES[self.c];
        let (firsts, lasts) = names::names(country.culture);
        let (f, l) = (firsts.count() as u64, lasts.count() as u64);
        // Local index: distinct for everyone at the company (one rank per title).
        let local = self.t as u64 + TITLES.len() as u64 * rank;
        let h = hash(&[number, 0x9e]);
        let within = local % (f * l);
        let first = firsts.get(((within % f) * 7 + h % f) as usize % f as usize);
        let last = lasts.get(((within / f + (h >> 20) % l + (within % f) * 3) % l) as usize);
        let clash = local / (f * l);
        let (fk, lk) = (email_part(first), email_part(last));
        let number_suffix = if clash == 0 { String::new() } else { (clash + 1).to_string() };
        let local_part = match company.email_pattern {
            0 | 1 => format!("{fk}.{lk}{number_suffix}"),
            2 => format!("{fk}_{lk}{number_suffix}"),
            _ => format!("{lk}.{fk}{number_suffix}"),
        };
        let title = &TITLES[self.t];
        Person {
            provider_id: self.id(),
            first_name: first.to_owned(),
            last_name: last.to_owned(),
            title: title.name.to_owned(),
            seniority: Some(SENIORITIES[title.seniority].0.to_owned()),
            department: Some(DEPARTMENTS[title.department].0.to_owned()),
            company: company.name.clone(),
            company_domain: Some(company.domain.clone()),
            industry: Some(INDUSTRIES[self.i].name.to_owned()),
            company_size: Some(COMPANY_SIZES[self.s].0.to_owned()),
            country: Some(country.name.to_owned()),
            city: Some(company.city.to_owned()),
            email: Some(format!("{local_part}@{}", company.domain)),
            email_status: Some("verified".to_owned()),
        }
    }
}

#[cold]
fn unreachable_company(number: u64) -> Company {
    // Only reachable if the tables were inconsistent; a test walks every cell to rule it out.
    Company {
        number,
        name: String::from("Unknown"),
        domain: String::from("unknown.invalid"),
        cell: (0, 0, 0, 0),
        index: 0,
        city: "",
        email_pattern: 0,
    }
}

/// A name as an email address part: ASCII letters only.
fn email_part(name: &str) -> String {
    vocab::key(name).replace(' ', "")
}

// ---- a filter, compiled ------------------------------------------------------------------

/// One `(segment, size)` of an industry with the titles that match, and their people per
/// country unit.
#[derive(Debug)]
struct CellPlan {
    g: usize,
    s: usize,
    titles: Vec<(usize, u64)>,
    h_sum: u64,
}

#[derive(Debug)]
struct IndustryPlan {
    i: usize,
    cells: Vec<CellPlan>,
    h_total: u64,
    h_by_size: [u64; SIZES],
    h_by_seniority: Vec<u64>,
}

/// An excluded company of the pool, with its matching people by title.
#[derive(Debug)]
struct Excluded {
    c: usize,
    i: usize,
    g: usize,
    s: usize,
    index: u64,
    k: u64,
    people: u64,
}

/// Counts by a dimension, for the pool's breakdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breakdown {
    /// By company size band, in [`COMPANY_SIZES`] order.
    pub by_size: Vec<(&'static str, u64)>,
    /// By seniority, in [`SENIORITIES`] order.
    pub by_seniority: Vec<(&'static str, u64)>,
    /// By country, in [`COUNTRIES`] order.
    pub by_country: Vec<(&'static str, u64)>,
}

/// A filter compiled against the model: counts, breakdowns and people by position.
#[derive(Debug)]
pub struct Pool {
    countries: Vec<usize>,
    industries: Vec<IndustryPlan>,
    excluded: Vec<Excluded>,
    total: u64,
    stride: u64,
    offset: u64,
}

impl Pool {
    /// Compiles `filters` (canonical values, as validated by the sandbox vocabulary).
    pub fn new(filters: &Filters) -> Pool {
        let m = model();
        let wanted = |list: &[String], value: &str| list.is_empty() || list.iter().any(|v| v == value);
        let countries: Vec<usize> =
            (0..COUNTRIES.len()).filter(|&c| wanted(&filters.countries, COUNTRIES[c].name)).collect();
        let sizes: Vec<usize> =
            (0..SIZES).filter(|&s| wanted(&filters.company_sizes, COMPANY_SIZES[s].0)).collect();
        let titles: Vec<usize> = (0..TITLES.len())
            .filter(|&t| {
                let title = &TITLES[t];
                wanted(&filters.titles, title.name)
                    && wanted(&filters.seniorities, SENIORITIES[title.seniority].0)
                    && wanted(&filters.departments, DEPARTMENTS[title.department].0)
                    && !filters.exclude_titles.iter().any(|x| x == title.name)
            })
            .collect();
        let mut industries = Vec::new();
        for (i, industry) in INDUSTRIES.iter().enumerate() {
            if !wanted(&filters.industries, industry.name)
                || filters.exclude_industries.iter().any(|x| x == industry.name)
            {
                continue;
            }
            let mut plan = IndustryPlan {
                i,
                cells: Vec::new(),
                h_total: 0,
                h_by_size: [0; SIZES],
                h_by_seniority: vec![0; SENIORITIES.len()],
            };
            for (g, segment) in industry.segments.iter().enumerate() {
                if !filters.keywords.is_empty()
                    && !segment.tags.iter().any(|t| filters.keywords.iter().any(|k| k == t))
                {
                    continue;
                }
                for &s in &sizes {
                    let mut cell = CellPlan { g, s, titles: Vec::new(), h_sum: 0 };
                    for &t in &titles {
                        let h = m.h(i, g, s, t);
                        if h > 0 {
                            cell.titles.push((t, h));
                            cell.h_sum += h;
                            plan.h_by_seniority[TITLES[t].seniority] += h;
                        }
                    }
                    if cell.h_sum > 0 {
                        plan.h_total += cell.h_sum;
                        plan.h_by_size[s] += cell.h_sum;
                        plan.cells.push(cell);
                    }
                }
            }
            if plan.h_total > 0 {
                industries.push(plan);
            }
        }
        let mut pool = Pool { countries, industries, excluded: Vec::new(), total: 0, stride: 1, offset: 0 };
        for domain in &filters.exclude_company_domains {
            let Some(company) = company_by_domain(domain) else { continue };
            let (c, i, g, s) = company.cell;
            if pool.excluded.iter().any(|e| (e.c, e.i, e.g, e.s, e.index) == (c, i, g, s, company.index)) {
                continue;
            }
            let Some(cell) = pool.cell(i, g, s) else { continue };
            if !pool.countries.contains(&c) {
                continue;
            }
            let (cu, k) = (m.cu[c][i], m.companies(c, i, g, s));
            let people = cell.titles.iter().map(|&(_, h)| at_company(cu * h, k, company.index)).sum();
            pool.excluded.push(Excluded { c, i, g, s, index: company.index, k, people });
        }
        pool.excluded.sort_by_key(|e| (e.c, e.i, e.g, e.s, e.index));
        let gross: u64 = pool
            .countries
            .iter()
            .map(|&c| pool.industries.iter().map(|ip| m.cu[c][ip.i] * ip.h_total).sum::<u64>())
            .sum();
        pool.total = gross - pool.excluded.iter().map(|e| e.people).sum::<u64>();
        pool.offset = if pool.total == 0 { 0 } else { hash(&[fingerprint(filters)]) % pool.total };
        pool.stride = stride_for(pool.total);
        pool
    }

    fn cell(&self, i: usize, g: usize, s: usize) -> Option<&CellPlan> {
        self.industries.iter().find(|ip| ip.i == i)?.cells.iter().find(|cp| cp.g == g && cp.s == s)
    }

    /// How many people match.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// How many companies employ them. Company `r` of a cell has someone with title `t` exactly
    /// when `r < N_t` (people are dealt out round the companies), so a cell contributes
    /// `min(K, max_t N_t)`, and both scale with the country unit.
    pub fn companies(&self) -> u64 {
        let m = model();
        let mut total = 0;
        for ip in &self.industries {
            let units: u64 = self.countries.iter().map(|&c| m.cu[c][ip.i]).sum();
            for cell in &ip.cells {
                let most = cell.titles.iter().map(|&(_, h)| h).max().unwrap_or(0);
                total += units * m.k[ip.i][cell.g][cell.s].min(most);
            }
        }
        total - self.excluded.iter().filter(|e| e.people > 0).count() as u64
    }

    /// The pool by size, seniority and country.
    pub fn breakdown(&self) -> Breakdown {
        let m = model();
        let mut by_size = [0u64; SIZES];
        let mut by_seniority = vec![0u64; SENIORITIES.len()];
        let mut by_country = vec![0u64; COUNTRIES.len()];
        for &c in &self.countries {
            for ip in &self.industries {
                let cu = m.cu[c][ip.i];
                by_country[c] += cu * ip.h_total;
                for (total, h) in by_size.iter_mut().zip(ip.h_by_size) {
                    *total += cu * h;
                }
                for (n, h) in ip.h_by_seniority.iter().enumerate() {
                    by_seniority[n] += cu * h;
                }
            }
        }
        for e in &self.excluded {
            by_country[e.c] -= e.people;
            by_size[e.s] -= e.people;
            if let Some(cell) = self.cell(e.i, e.g, e.s) {
                for &(t, h) in &cell.titles {
                    by_seniority[TITLES[t].seniority] -= at_company(m.cu[e.c][e.i] * h, e.k, e.index);
                }
            }
        }
        Breakdown {
            by_size: COMPANY_SIZES
                .iter()
                .zip(by_size)
                .map(|((label, _), n)| (*label, n))
                .filter(|x| x.1 > 0)
                .collect(),
            by_seniority: SENIORITIES
                .iter()
                .zip(by_seniority)
                .map(|((id, _, _), n)| (*id, n))
                .filter(|x| x.1 > 0)
                .collect(),
            by_country: COUNTRIES
                .iter()
                .zip(by_country)
                .map(|(c, n)| (c.name, n))
                .filter(|x| x.1 > 0)
                .collect(),
        }
    }

    /// The person at position `m` of the sampling and import order (`m < count`).
    pub fn at(&self, m: u64) -> Option<PersonRef> {
        if m >= self.total {
            return None;
        }
        self.canonical((self.offset + mul_mod(m, self.stride, self.total)) % self.total)
    }

    /// The person at canonical position `p`.
    fn canonical(&self, mut p: u64) -> Option<PersonRef> {
        let m = model();
        for &c in &self.countries {
            let excluded_in = |pred: &dyn Fn(&Excluded) -> bool| -> u64 {
                self.excluded.iter().filter(|e| e.c == c && pred(e)).map(|e| e.people).sum()
            };
            let country_total: u64 = self.industries.iter().map(|ip| m.cu[c][ip.i] * ip.h_total).sum::<u64>()
                - excluded_in(&|_| true);
            if p >= country_total {
                p -= country_total;
                continue;
            }
            for ip in &self.industries {
                let cu = m.cu[c][ip.i];
                let industry_total = cu * ip.h_total - excluded_in(&|e| e.i == ip.i);
                if p >= industry_total {
                    p -= industry_total;
                    continue;
                }
                for cell in &ip.cells {
                    let cell_total =
                        cu * cell.h_sum - excluded_in(&|e| e.i == ip.i && e.g == cell.g && e.s == cell.s);
                    if p >= cell_total {
                        p -= cell_total;
                        continue;
                    }
                    let k = m.companies(c, ip.i, cell.g, cell.s);
                    let excluded: Vec<u64> = self
                        .excluded
                        .iter()
                        .filter(|e| (e.c, e.i, e.g, e.s) == (c, ip.i, cell.g, cell.s))
                        .map(|e| e.index)
                        .collect();
                    for &(t, h) in &cell.titles {
                        let n = cu * h;
                        let available = n - excluded.iter().map(|&x| at_company(n, k, x)).sum::<u64>();
                        if p >= available {
                            p -= available;
                            continue;
                        }
                        let j = nth_kept(p, k, &excluded);
                        return Some(PersonRef { c, i: ip.i, g: cell.g, s: cell.s, t, j });
                    }
                }
            }
        }
        None
    }

    /// Whether a person is in the pool (for tests and for checking imported people).
    pub fn contains(&self, r: &PersonRef) -> bool {
        if !self.countries.contains(&r.c) {
            return false;
        }
        let Some(cell) = self.cell(r.i, r.g, r.s) else { return false };
        let Some(&(_, h)) = cell.titles.iter().find(|(t, _)| *t == r.t) else { return false };
        let m = model();
        let k = m.companies(r.c, r.i, r.g, r.s);
        r.j < m.cu[r.c][r.i] * h
            && !self
                .excluded
                .iter()
                .any(|e| (e.c, e.i, e.g, e.s) == (r.c, r.i, r.g, r.s) && r.j % k == e.index)
    }
}

/// How many of `n` people of a cell work at company `index` of its `k` companies.
fn at_company(n: u64, k: u64, index: u64) -> u64 {
    n.checked_div(k).map_or(0, |whole| whole + u64::from(index < n % k))
}

/// The `r`-th cell index `j` (from 0) whose company `j mod k` is not excluded (`excluded`
/// sorted, unique, all `< k`).
fn nth_kept(r: u64, k: u64, excluded: &[u64]) -> u64 {
    let kept = k - excluded.len() as u64;
    let (block, mut residue) = (r / kept, r % kept);
    for &e in excluded {
        if e <= residue {
            residue += 1;
        } else {
            break;
        }
    }
    block * k + residue
}

fn fingerprint(filters: &Filters) -> u64 {
    let hex = filters.fingerprint();
    u64::from_str_radix(&hex, 16).unwrap_or(0)
}

/// `a · b mod n` for `a, b < n`, exactly: directly while the product fits a u64 (any pool of
/// fewer than 4 billion people), else by doubling, which never overflows for `n < 2^63`. No
/// u128, whose division would link compiler-builtins' 128-bit division into the module.
fn mul_mod(a: u64, b: u64, n: u64) -> u64 {
    if let Some(product) = a.checked_mul(b) {
        return product % n;
    }
    let (mut a, mut b, mut r) = (a % n, b, 0u64);
    while b > 0 {
        if b & 1 == 1 {
            r = (r + a) % n;
        }
        a = (a << 1) % n;
        b >>= 1;
    }
    r
}

/// A stride near the golden ratio of `total`, coprime to it, so consecutive positions land far
/// apart and every position is visited once.
fn stride_for(total: u64) -> u64 {
    if total <= 1 {
        return 1;
    }
    let mut stride = ((total as f64) * 0.618_033_988_75) as u64;
    stride = stride.clamp(1, total - 1);
    while gcd(stride, total) != 1 {
        stride += 1;
        if stride >= total {
            stride = 1;
        }
    }
    stride
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// How many people and companies the whole database holds.
pub fn totals() -> (u64, u64) {
    let m = model();
    let everyone =
        Filters { countries: COUNTRIES.iter().map(|c| c.name.to_owned()).collect(), ..Filters::default() };
    (Pool::new(&everyone).count(), m.total_companies())
}

#[cfg(test)]
mod tests;
