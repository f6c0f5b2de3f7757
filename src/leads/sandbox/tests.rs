//! Properties of the sandbox database: counts agree exactly with what sampling and importing
//! return, over many random filters; every returned person matches; nobody is returned twice;
//! the same request gives the same people; domains parse back to their companies.
#![allow(clippy::needless_range_loop)] // cells are addressed by index on purpose here

use std::collections::HashSet;

use super::*;
use crate::leads::LeadProvider;
use crate::leads::vocab::{COMPANY_SIZES, COUNTRIES, DEPARTMENTS, INDUSTRIES, SENIORITIES, TITLES};

/// A small deterministic generator for the property tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A random filter, usually narrow enough to enumerate.
fn random_filters(rng: &mut Rng) -> Filters {
    let mut f = Filters::default();
    // Small countries keep pools enumerable.
    let small: Vec<&str> = COUNTRIES.iter().filter(|c| c.weight <= 2).map(|c| c.name).collect();
    f.countries.push((*rng.pick(&small)).to_owned());
    if rng.chance(20) {
        f.countries.push(rng.pick(COUNTRIES).name.to_owned());
    }
    match rng.below(3) {
        0 => {
            for _ in 0..1 + rng.below(3) {
                f.titles.push(rng.pick(TITLES).name.to_owned());
            }
        }
        1 => f.seniorities.push(rng.pick(SENIORITIES).0.to_owned()),
        _ => f.departments.push(rng.pick(DEPARTMENTS).0.to_owned()),
    }
    if rng.chance(60) {
        f.industries.push(rng.pick(INDUSTRIES).name.to_owned());
        if rng.chance(30) {
            let industry = INDUSTRIES.iter().find(|i| i.name == f.industries[0]).unwrap();
            f.keywords.push((*rng.pick(rng_tags(industry))).to_owned());
        }
    } else if rng.chance(30) {
        f.keywords.push(rng.pick(&crate::leads::vocab::keywords()).to_string());
    }
    if rng.chance(60) {
        f.company_sizes.push(rng.pick(COMPANY_SIZES).0.to_owned());
        if rng.chance(40) {
            f.company_sizes.push(rng.pick(COMPANY_SIZES).0.to_owned());
        }
    }
    if rng.chance(20) {
        f.exclude_titles.push(rng.pick(TITLES).name.to_owned());
    }
    if rng.chance(15) {
        f.exclude_industries.push(rng.pick(INDUSTRIES).name.to_owned());
    }
    f.titles.dedup();
    f.countries.dedup();
    f.company_sizes.dedup();
    f.exclude_titles.retain(|x| !f.titles.contains(x));
    f.exclude_industries.retain(|x| !f.industries.contains(x));
    f
}

fn rng_tags(industry: &'static crate::leads::vocab::Industry) -> &'static [&'static str] {
    industry.segments[0].tags
}

/// Whether a generated person satisfies the filters, judged from the person alone.
fn matches(f: &Filters, p: &Person) -> bool {
    let wanted = |list: &[String], v: &str| list.is_empty() || list.iter().any(|x| x == v);
    let industry = INDUSTRIES.iter().find(|i| Some(i.name) == p.industry.as_deref()).unwrap();
    let tags_ok = f.keywords.is_empty()
        || industry.segments.iter().any(|s| {
            s.tags.iter().any(|t| f.keywords.iter().any(|k| k == t)) && company_segment_is(p, s.name)
        });
    wanted(&f.countries, p.country.as_deref().unwrap())
        && wanted(&f.titles, &p.title)
        && wanted(&f.seniorities, p.seniority.as_deref().unwrap())
        && wanted(&f.departments, p.department.as_deref().unwrap())
        && wanted(&f.industries, industry.name)
        && wanted(&f.company_sizes, p.company_size.as_deref().unwrap())
        && tags_ok
        && !f.exclude_titles.contains(&p.title)
        && !f.exclude_industries.iter().any(|x| x == industry.name)
        && !f.exclude_company_domains.iter().any(|d| Some(d.as_str()) == p.company_domain.as_deref())
}

/// The segment of a person's company, read back from the company itself.
fn company_segment_is(p: &Person, segment: &str) -> bool {
    let company = company_by_domain(p.company_domain.as_deref().unwrap()).unwrap();
    let (_, i, g, _) = company.cell;
    INDUSTRIES[i].segments[g].name == segment
}

/// Walks the whole import order and checks it is exactly the pool.
fn enumerate(pool: &Pool, f: &Filters) -> Vec<Person> {
    let n = pool.count();
    let mut ids = HashSet::new();
    let mut emails = HashSet::new();
    let mut people = Vec::with_capacity(n as usize);
    for m in 0..n {
        let r = pool.at(m).unwrap_or_else(|| panic!("position {m} of {n} is empty for {f:?}"));
        assert!(pool.contains(&r), "{r:?} not in pool {f:?}");
        let person = r.person();
        assert!(matches(f, &person), "{person:?} does not match {f:?}");
        assert!(ids.insert(person.provider_id.clone()), "{} returned twice", person.provider_id);
        assert!(emails.insert(person.email.clone().unwrap()), "{:?} returned twice", person.email);
        people.push(person);
    }
    assert!(pool.at(n).is_none());
    people
}

/// Counts by brute force: every cell of the model, every person in it.
fn brute_force_count(f: &Filters) -> u64 {
    let m = model();
    let mut total = 0;
    for c in 0..COUNTRIES.len() {
        // Generating a person per cell is slow; skip the countries the filter cannot match.
        if !f.countries.is_empty() && !f.countries.iter().any(|x| x == COUNTRIES[c].name) {
            continue;
        }
        for i in 0..INDUSTRIES.len() {
            for g in 0..INDUSTRIES[i].segments.len() {
                for s in 0..SIZES {
                    for t in 0..TITLES.len() {
                        let n = m.cu[c][i] * m.h(i, g, s, t);
                        if n == 0 {
                            continue;
                        }
                        // Cell-level attributes are shared by everyone in the cell.
                        let first = PersonRef { c, i, g, s, t, j: 0 }.person();
                        let cell_ok =
                            matches(&Filters { exclude_company_domains: vec![], ..f.clone() }, &first);
                        if !cell_ok {
                            continue;
                        }
                        if f.exclude_company_domains.is_empty() {
                            total += n;
                        } else {
                            total += (0..n)
                                .filter(|&j| {
                                    let p = PersonRef { c, i, g, s, t, j }.person();
                                    !f.exclude_company_domains.contains(p.company_domain.as_ref().unwrap())
                                })
                                .count() as u64;
                        }
                    }
                }
            }
        }
    }
    total
}

#[test]
fn the_database_is_large_and_fits_its_name_space() {
    let (people, companies) = totals();
    assert!((5_000_000..60_000_000).contains(&people), "{people} people");
    assert!(companies <= name_space(), "{companies} companies for {} names", name_space());
    assert!(companies > 100_000, "{companies} companies");
    let m = model();
    // Every cell's companies exist.
    for n in [0, companies / 2, companies - 1] {
        assert!(m.company_cell(n).is_some());
        assert!(company(n).is_some());
    }
    assert!(company(companies).is_none());
}

#[test]
fn count_equals_sample_equals_import_over_random_filters() {
    let mut rng = Rng(42);
    let mut enumerated = 0;
    let mut checked = 0;
    let mut nonzero = 0;
    while checked < 400 {
        let f = random_filters(&mut rng);
        let pool = Pool::new(&f);
        checked += 1;
        let n = pool.count();
        if n > 0 {
            nonzero += 1;
        }
        // The breakdowns add up to the count.
        let b = pool.breakdown();
        for dimension in [&b.by_size, &b.by_seniority, &b.by_country] {
            assert_eq!(dimension.iter().map(|x| x.1).sum::<u64>(), n, "{f:?}");
        }
        if n <= 2_500 {
            let people = enumerate(&pool, &f);
            assert_eq!(people.len() as u64, n);
            enumerated += 1;
            // The sample is exactly the first people an import brings in.
            let sample = crate::testing::block_on(Sandbox.sample(&f, 10)).unwrap();
            assert_eq!(sample.len() as u64, n.min(10));
            for (s, p) in sample.iter().zip(&people) {
                assert_eq!(s, p);
            }
            // The companies count is exact too.
            let companies: HashSet<_> = people.iter().map(|p| p.company_domain.clone()).collect();
            assert_eq!(pool.companies(), companies.len() as u64, "{f:?}");
            // An import in uneven batches returns the same people, and then nothing.
            let mut imported = Vec::new();
            let mut from = 0;
            loop {
                let batch = crate::testing::block_on(Sandbox.fetch(
                    &f,
                    from,
                    7 + (from as usize % 13),
                    &|_: &str| false,
                ))
                .unwrap();
                assert_eq!(batch.credits, batch.people.len() as u64);
                from += batch.consumed;
                imported.extend(batch.people);
                if batch.exhausted {
                    break;
                }
            }
            assert_eq!(imported, people, "{f:?}");
        } else {
            // Too big to walk: spot checks at the ends and in between.
            for m in [0, 1, n / 3, n / 2, n - 2, n - 1] {
                let r = pool.at(m).unwrap();
                assert!(matches(&f, &r.person()), "{f:?}");
            }
            assert!(pool.at(n).is_none());
        }
    }
    assert!(enumerated >= 150, "only {enumerated} of {checked} filters were small enough to walk");
    assert!(nonzero >= 250, "only {nonzero} of {checked} filters matched anyone");
}

#[test]
fn counts_agree_with_brute_force() {
    let mut rng = Rng(7);
    for _ in 0..25 {
        let mut f = random_filters(&mut rng);
        f.countries.truncate(1);
        let pool = Pool::new(&f);
        if pool.count() > 50_000 {
            continue;
        }
        assert_eq!(pool.count(), brute_force_count(&f), "{f:?}");
    }
}

#[test]
fn excluded_companies_disappear_exactly() {
    let mut rng = Rng(99);
    let mut done = 0;
    while done < 40 {
        let f = random_filters(&mut rng);
        let pool = Pool::new(&f);
        let n = pool.count();
        if !(5..=2_000).contains(&n) {
            continue;
        }
        // Exclude the companies of two people in the pool, plus a domain nobody works at.
        let a = pool.at(rng.next() % n).unwrap().person();
        let b = pool.at(rng.next() % n).unwrap().person();
        let at = |d: &str| {
            enumerate(&pool, &f).iter().filter(|p| p.company_domain.as_deref() == Some(d)).count() as u64
        };
        let (da, db) = (a.company_domain.clone().unwrap(), b.company_domain.clone().unwrap());
        let removed = if da == db { at(&da) } else { at(&da) + at(&db) };
        let mut g = f.clone();
        g.exclude_company_domains = vec![da.clone(), db.clone(), "example.org".into()];
        let smaller = Pool::new(&g);
        assert_eq!(smaller.count(), n - removed, "{g:?}");
        let people = enumerate(&smaller, &g);
        assert!(
            people
                .iter()
                .all(|p| p.company_domain != Some(da.clone()) && p.company_domain != Some(db.clone()))
        );
        let b = smaller.breakdown();
        assert_eq!(b.by_seniority.iter().map(|x| x.1).sum::<u64>(), smaller.count());
        if done < 5 {
            assert_eq!(smaller.count(), brute_force_count(&g), "{g:?}");
        }
        done += 1;
    }
}

#[test]
fn the_same_request_gives_the_same_people() {
    let f = Filters {
        countries: vec!["Germany".into(), "France".into()],
        titles: vec!["Chief Financial Officer".into(), "Head of Finance".into()],
        company_sizes: vec!["51-200".into(), "201-500".into()],
        ..Filters::default()
    };
    let a = crate::testing::block_on(Sandbox.sample(&f, 10)).unwrap();
    let b = crate::testing::block_on(Sandbox.sample(&f, 10)).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 10);
    // Spread over the pool: not ten people of one company or one country.
    let companies: HashSet<_> = a.iter().map(|p| p.company.clone()).collect();
    assert!(companies.len() >= 8, "{companies:?}");
    let countries: HashSet<_> = a.iter().map(|p| p.country.clone()).collect();
    assert_eq!(countries.len(), 2);
    // Pinned: a change to the model or the name tables shows up here.
    assert_eq!(Pool::new(&f).count(), 14_718);
    insta_like(&a[0]);
}

/// The first person of the pinned pool, field by field.
fn insta_like(p: &Person) {
    assert!(p.provider_id.starts_with("sbx_") && p.provider_id.len() == 20);
    assert!(p.email.is_some());
    assert!(["Germany", "France"].contains(&p.country.as_deref().unwrap()));
    assert!(["Chief Financial Officer", "Head of Finance"].contains(&p.title.as_str()));
}

#[test]
fn domains_parse_back_to_their_company() {
    let (_, companies) = totals();
    let mut rng = Rng(3);
    for _ in 0..2_000 {
        let n = rng.next() % companies;
        let c = company(n).unwrap();
        assert_eq!(company_by_domain(&c.domain), Some(c.clone()), "{}", c.domain);
    }
    assert_eq!(company_by_domain("google.com"), None);
    assert_eq!(company_by_domain("bluelane"), None);
}

#[test]
fn every_name_combination_spells_a_different_label() {
    let mut labels = HashSet::new();
    for p in names::prefixes().iter() {
        for s in names::suffixes().iter() {
            for (q, _) in names::QUALIFIERS {
                assert!(labels.insert(format!("{p}{s}{q}")), "{p}{s}{q} is ambiguous");
            }
        }
    }
    // And no label splits two ways: the parser tries every prefix, so check it finds one.
    let mut rng = Rng(11);
    let (prefixes, suffixes): (Vec<_>, Vec<_>) =
        (names::prefixes().iter().collect(), names::suffixes().iter().collect());
    for _ in 0..3_000 {
        let (p, s, q) = (rng.pick(&prefixes), rng.pick(&suffixes), rng.pick(names::QUALIFIERS).0);
        let label = format!("{p}{s}{q}");
        let splits = names::prefixes()
            .iter()
            .filter_map(|p| label.strip_prefix(p))
            .flat_map(|rest| names::suffixes().iter().filter_map(move |s| rest.strip_prefix(s)))
            .filter(|rest| names::QUALIFIERS.iter().any(|(q, _)| q == rest))
            .count();
        assert_eq!(splits, 1, "{label}");
    }
}

#[test]
fn the_name_permutation_is_a_bijection() {
    let space = name_space();
    let mut rng = Rng(5);
    for _ in 0..5_000 {
        let n = rng.next() % space;
        let x = permute_name(n, false);
        assert!(x < space);
        assert_eq!(permute_name(x, true), n);
    }
}

#[test]
fn kept_indexes_skip_excluded_companies() {
    // k = 5 companies, companies 1 and 3 excluded, 12 people: j = 0,2,4,5,7,9,10 are kept.
    let kept: Vec<u64> = (0..7).map(|r| nth_kept(r, 5, &[1, 3])).collect();
    assert_eq!(kept, vec![0, 2, 4, 5, 7, 9, 10]);
    assert_eq!(at_company(12, 5, 1), 3);
    assert_eq!(at_company(12, 5, 3), 2);
    assert_eq!(stride_for(10), 7);
    assert_eq!(gcd(stride_for(1_000_000), 1_000_000), 1);
}

#[test]
fn people_look_plausible() {
    let f = Filters {
        countries: vec!["Japan".into()],
        titles: vec!["Software Engineer".into()],
        ..Filters::default()
    };
    let pool = Pool::new(&f);
    assert!(pool.count() > 1_000);
    let p = pool.at(0).unwrap().person();
    let email = p.email.clone().unwrap();
    assert!(email.ends_with(p.company_domain.as_deref().unwrap()));
    assert!(email.is_ascii() && !email.contains(' '), "{email}");
    let (first, last) = names::names(crate::leads::vocab::Culture::Japanese);
    assert!(first.iter().any(|n| n == p.first_name) && last.iter().any(|n| n == p.last_name));
    // Accented names fold into plain addresses.
    let f = Filters { countries: vec!["France".into()], ..Filters::default() };
    let pool = Pool::new(&f);
    for m in 0..200 {
        let p = pool.at(m).unwrap().person();
        let email = p.email.unwrap();
        assert!(email.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b)), "{email}");
    }
}

#[test]
#[ignore = "prints a sample of the database and timings; run with --ignored --nocapture"]
#[allow(clippy::disallowed_methods, clippy::print_stdout)]
fn show() {
    let (people, companies) = totals();
    println!("{people} people at {companies} companies (name space {})", name_space());
    let f = Filters {
        countries: vec!["United States".into()],
        seniorities: vec!["vp".into(), "c_suite".into()],
        ..Filters::default()
    };
    let t = std::time::Instant::now();
    let pool = Pool::new(&f);
    println!("count {} in {:?}", pool.count(), t.elapsed());
    let t = std::time::Instant::now();
    let everyone =
        Filters { countries: COUNTRIES.iter().map(|c| c.name.to_owned()).collect(), ..Filters::default() };
    let all = Pool::new(&everyone);
    let _ = all.breakdown();
    println!("broadest count {} + breakdown in {:?}", all.count(), t.elapsed());
    let t = std::time::Instant::now();
    for m in 0..1000 {
        let _ = all.at(m).unwrap().person();
    }
    println!("1000 people in {:?}", t.elapsed());
    for m in 0..15 {
        let p = pool.at(m).unwrap().person();
        println!(
            "{} {} — {} at {} ({}, {}, {}) {}",
            p.first_name,
            p.last_name,
            p.title,
            p.company,
            p.industry.unwrap(),
            p.company_size.unwrap(),
            p.city.unwrap(),
            p.email.unwrap()
        );
    }
    println!("{:?}", pool.breakdown());
}

#[test]
fn positions_multiply_modulo_the_pool_exactly() {
    let reference = |a: u64, b: u64, n: u64| (u128::from(a) * u128::from(b) % u128::from(n)) as u64;
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..20_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Pools far beyond what fits a direct product too, up to the largest the doubling takes.
        let n = [1 + x % 1_000, 1 + x % 5_000_000_000, 1 + (x >> 1), (1 << 63) - 1][(i % 4) as usize];
        let (a, b) = (x.rotate_left(17) % n, x.rotate_left(41) % n);
        assert_eq!(super::mul_mod(a, b, n), reference(a, b, n), "{a} × {b} mod {n}");
    }
}
