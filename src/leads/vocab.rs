//! The lead providers' vocabularies: countries, seniorities, departments, industries (with
//! their segments, whose tags are the company keywords), company sizes and job titles, plus
//! the normalisation and "did you mean" suggestions that turn what a model writes into the
//! canonical values a provider understands (PRODUCT §8 "provider filters", DOMAIN §2.1, §2.4).
//!
//! Seniorities, departments and size bands follow Apollo's people search (DOMAIN §2.1); the
//! industries follow the LinkedIn-style names Apollo tags organisations with. The sandbox
//! database (`sandbox`) is generated from these same tables, so every value here exists there.

/// Apollo's seniority levels (DOMAIN §2.1), in order from the top.
pub const SENIORITIES: &[(&str, &str, &[&str])] = &[
    ("owner", "Owner", &["owners", "business owner"]),
    ("founder", "Founder", &["founders", "cofounder", "co-founder"]),
    ("c_suite", "C-suite", &["c suite", "c-level", "c level", "cxo", "chief", "executive", "executives"]),
    ("partner", "Partner", &["partners"]),
    ("vp", "Vice president", &["vice president", "vice presidents", "vps", "svp", "evp"]),
    ("head", "Head", &["heads", "head of"]),
    ("director", "Director", &["directors"]),
    ("manager", "Manager", &["managers", "management"]),
    ("senior", "Senior individual contributor", &["senior ic", "individual contributor", "ic", "seniors"]),
    ("entry", "Entry level", &["entry level", "junior", "associate"]),
    ("intern", "Intern", &["interns", "internship"]),
];

/// Departments, by their VibeSell id, with a label and synonyms. The live adapter maps each to
/// Apollo's `person_department_or_subdepartments` value.
pub const DEPARTMENTS: &[(&str, &str, &[&str])] = &[
    (
        "executive",
        "Executive / C-suite",
        &["c suite", "c-suite", "leadership", "management team", "executives"],
    ),
    ("sales", "Sales", &["business development", "revenue", "bizdev", "commercial"]),
    ("marketing", "Marketing", &["growth", "demand generation", "brand"]),
    (
        "engineering",
        "Engineering",
        &["engineering and technical", "r&d", "software development", "technical"],
    ),
    ("product", "Product management", &["product", "product management"]),
    ("finance", "Finance", &["accounting", "finance and accounting"]),
    ("operations", "Operations", &["ops", "supply chain", "procurement"]),
    ("human_resources", "Human resources", &["hr", "people", "talent", "recruiting"]),
    ("information_technology", "Information technology", &["it", "information technology", "security"]),
    ("customer_success", "Customer success", &["customer service", "support", "customer experience", "cx"]),
    ("legal", "Legal", &["compliance", "legal and compliance"]),
    ("design", "Design", &["ux", "creative", "user experience"]),
];

/// Company headcount bands, as Apollo's `organization_num_employees_ranges` splits them.
pub const COMPANY_SIZES: &[(&str, &str)] = &[
    ("1-10", "1,10"),
    ("11-50", "11,50"),
    ("51-200", "51,200"),
    ("201-500", "201,500"),
    ("501-1000", "501,1000"),
    ("1001-5000", "1001,5000"),
    ("5001-10000", "5001,10000"),
    ("10001+", "10001,"),
];

/// How given names and surnames are chosen for people in a country (sandbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Culture {
    /// English-speaking.
    English,
    /// French.
    French,
    /// German.
    German,
    /// Spanish.
    Spanish,
    /// Italian.
    Italian,
    /// Dutch.
    Dutch,
    /// Nordic.
    Nordic,
    /// Portuguese.
    Portuguese,
    /// Polish and Czech.
    Slavic,
    /// Indian.
    Indian,
    /// Japanese.
    Japanese,
}

impl Culture {
    /// How many cultures there are (`names.txt` has a line of given names and one of surnames
    /// for each, in this order).
    pub const COUNT: usize = Culture::Japanese as usize + 1;
}

/// A country people can be searched in.
#[derive(Debug)]
pub struct Country {
    /// ISO 3166-1 alpha-2 code.
    pub code: &'static str,
    /// English name, the canonical value.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// Relative size of the country's B2B population in the sandbox.
    pub weight: u32,
    /// Names of its people (sandbox).
    pub culture: Culture,
    /// Cities companies are based in (sandbox).
    pub cities: &'static [&'static str],
    /// Its country-code top-level domain.
    pub cctld: &'static str,
    /// Whether the GDPR (or the UK GDPR) applies to people there: the first email then needs
    /// the Art. 14 notice (DOMAIN §6.2).
    pub gdpr: bool,
}

macro_rules! country {
    ($code:literal, $name:literal, [$($alias:literal),*], $weight:literal, $culture:ident, [$($city:literal),*], $tld:literal, $gdpr:literal) => {
        Country { code: $code, name: $name, aliases: &[$($alias),*], weight: $weight, culture: Culture::$culture,
                  cities: &[$($city),*], cctld: $tld, gdpr: $gdpr }
    };
}

/// The countries, biggest B2B markets first.
pub const COUNTRIES: &[Country] = &[
    country!(
        "US",
        "United States",
        ["usa", "us", "united states of america", "america"],
        24,
        English,
        ["New York", "San Francisco", "Austin", "Chicago", "Boston", "Seattle", "Denver", "Atlanta"],
        "us",
        false
    ),
    country!(
        "GB",
        "United Kingdom",
        ["uk", "great britain", "britain", "england"],
        6,
        English,
        ["London", "Manchester", "Edinburgh", "Bristol", "Leeds", "Cambridge"],
        "uk",
        true
    ),
    country!(
        "DE",
        "Germany",
        ["deutschland"],
        6,
        German,
        ["Berlin", "Munich", "Hamburg", "Frankfurt", "Cologne", "Stuttgart"],
        "de",
        true
    ),
    country!(
        "FR",
        "France",
        [],
        5,
        French,
        ["Paris", "Lyon", "Marseille", "Toulouse", "Lille", "Nantes"],
        "fr",
        true
    ),
    country!(
        "CA",
        "Canada",
        [],
        4,
        English,
        ["Toronto", "Vancouver", "Montreal", "Calgary", "Ottawa"],
        "ca",
        false
    ),
    country!(
        "IN",
        "India",
        [],
        4,
        Indian,
        ["Bengaluru", "Mumbai", "New Delhi", "Hyderabad", "Pune", "Chennai"],
        "in",
        false
    ),
    country!("AU", "Australia", [], 3, English, ["Sydney", "Melbourne", "Brisbane", "Perth"], "au", false),
    country!(
        "NL",
        "Netherlands",
        ["holland", "the netherlands"],
        3,
        Dutch,
        ["Amsterdam", "Rotterdam", "Utrecht", "Eindhoven"],
        "nl",
        true
    ),
    country!(
        "ES",
        "Spain",
        ["espana"],
        3,
        Spanish,
        ["Madrid", "Barcelona", "Valencia", "Seville", "Bilbao"],
        "es",
        true
    ),
    country!(
        "IT",
        "Italy",
        ["italia"],
        3,
        Italian,
        ["Milan", "Rome", "Turin", "Bologna", "Florence"],
        "it",
        true
    ),
    country!(
        "BR",
        "Brazil",
        ["brasil"],
        3,
        Portuguese,
        ["Sao Paulo", "Rio de Janeiro", "Belo Horizonte", "Curitiba"],
        "br",
        false
    ),
    country!("JP", "Japan", [], 3, Japanese, ["Tokyo", "Osaka", "Yokohama", "Fukuoka"], "jp", false),
    country!("SE", "Sweden", [], 2, Nordic, ["Stockholm", "Gothenburg", "Malmo"], "se", true),
    country!("CH", "Switzerland", [], 2, German, ["Zurich", "Geneva", "Basel", "Lausanne"], "ch", false),
    country!("MX", "Mexico", [], 2, Spanish, ["Mexico City", "Monterrey", "Guadalajara"], "mx", false),
    country!("PL", "Poland", [], 2, Slavic, ["Warsaw", "Krakow", "Wroclaw", "Gdansk"], "pl", true),
    country!("BE", "Belgium", [], 2, Dutch, ["Brussels", "Antwerp", "Ghent"], "be", true),
    country!("IE", "Ireland", [], 1, English, ["Dublin", "Cork", "Galway"], "ie", true),
    country!("DK", "Denmark", [], 1, Nordic, ["Copenhagen", "Aarhus", "Odense"], "dk", true),
    // In the EEA, so under the GDPR (audit finding: it was not marked so).
    country!("NO", "Norway", [], 1, Nordic, ["Oslo", "Bergen", "Trondheim"], "no", true),
    country!("FI", "Finland", [], 1, Nordic, ["Helsinki", "Espoo", "Tampere"], "fi", true),
    country!("AT", "Austria", ["osterreich"], 1, German, ["Vienna", "Graz", "Linz"], "at", true),
    country!("PT", "Portugal", [], 1, Portuguese, ["Lisbon", "Porto", "Braga"], "pt", true),
    country!("CZ", "Czech Republic", ["czechia"], 1, Slavic, ["Prague", "Brno", "Ostrava"], "cz", true),
    country!("SG", "Singapore", [], 1, English, ["Singapore"], "sg", false),
    country!(
        "AE",
        "United Arab Emirates",
        ["uae", "emirates"],
        1,
        English,
        ["Dubai", "Abu Dhabi"],
        "ae",
        false
    ),
    country!("IL", "Israel", [], 1, English, ["Tel Aviv", "Jerusalem", "Haifa"], "il", false),
    country!("ZA", "South Africa", [], 1, English, ["Johannesburg", "Cape Town", "Durban"], "za", false),
    country!("NZ", "New Zealand", [], 1, English, ["Auckland", "Wellington", "Christchurch"], "nz", false),
    country!("AR", "Argentina", [], 1, Spanish, ["Buenos Aires", "Cordoba", "Rosario"], "ar", false),
];

/// A broad family of industries, which decides how big each department is there (sandbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Software, internet, IT, telecom.
    Tech,
    /// Banking, insurance, financial services, accounting.
    Finance,
    /// Care, pharma, medical devices.
    Health,
    /// Professional services, education, real estate.
    Services,
    /// Construction, manufacturing, logistics, energy.
    Industrial,
    /// Retail, hospitality, food.
    Consumer,
}

/// A segment of an industry; its tags are the company keywords it matches.
#[derive(Debug)]
pub struct Segment {
    /// What the segment is.
    pub name: &'static str,
    /// Keywords companies in the segment are tagged with.
    pub tags: &'static [&'static str],
}

/// An industry.
#[derive(Debug)]
pub struct Industry {
    /// The canonical name.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// Relative number of companies (sandbox).
    pub weight: u32,
    /// Its family.
    pub kind: Kind,
    /// Its segments.
    pub segments: &'static [Segment],
    /// Countries where it is twice as present (sandbox), by ISO code.
    pub strong_in: &'static [&'static str],
}

macro_rules! seg {
    ($name:literal, [$($tag:literal),*]) => { Segment { name: $name, tags: &[$($tag),*] } };
}

/// The industries.
pub const INDUSTRIES: &[Industry] = &[
    Industry {
        name: "Computer Software",
        aliases: &["software", "saas companies", "software companies", "tech", "technology"],
        weight: 10,
        kind: Kind::Tech,
        segments: &[
            seg!("SaaS", ["saas", "b2b software", "cloud software"]),
            seg!("Developer tools", ["developer tools", "devtools", "api"]),
            seg!("Cybersecurity", ["cybersecurity", "security software"]),
            seg!("Data and AI", ["artificial intelligence", "machine learning", "data analytics"]),
        ],
        strong_in: &["US", "IL", "GB", "SE"],
    },
    Industry {
        name: "Information Technology & Services",
        aliases: &["it services", "information technology", "it consulting", "it"],
        weight: 9,
        kind: Kind::Tech,
        segments: &[
            seg!("IT consulting", ["it consulting", "digital transformation"]),
            seg!("Managed services", ["managed services", "cloud services"]),
            seg!("Systems integration", ["systems integration", "erp"]),
        ],
        strong_in: &["IN", "US", "PL"],
    },
    Industry {
        name: "Internet",
        aliases: &["internet companies", "online"],
        weight: 5,
        kind: Kind::Tech,
        segments: &[
            seg!("Marketplaces", ["marketplace", "ecommerce platform"]),
            seg!("Consumer apps", ["mobile apps", "consumer apps"]),
            seg!("Ad tech", ["adtech", "advertising technology"]),
        ],
        strong_in: &["US"],
    },
    Industry {
        name: "Telecommunications",
        aliases: &["telecom", "telco"],
        weight: 2,
        kind: Kind::Tech,
        segments: &[
            seg!("Carriers", ["mobile network", "broadband"]),
            seg!("Telecom equipment", ["telecom equipment", "5g"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Financial Services",
        aliases: &["finance", "fintech companies", "financial"],
        weight: 6,
        kind: Kind::Finance,
        segments: &[
            seg!("Fintech", ["fintech", "payments"]),
            seg!("Asset management", ["asset management", "wealth management"]),
            seg!("Lending", ["lending", "credit"]),
        ],
        strong_in: &["GB", "US", "CH", "SG"],
    },
    Industry {
        name: "Banking",
        aliases: &["banks", "bank"],
        weight: 2,
        kind: Kind::Finance,
        segments: &[
            seg!("Retail banking", ["retail banking"]),
            seg!("Investment banking", ["investment banking"]),
            seg!("Private banking", ["private banking"]),
        ],
        strong_in: &["CH", "GB"],
    },
    Industry {
        name: "Insurance",
        aliases: &["insurers"],
        weight: 3,
        kind: Kind::Finance,
        segments: &[
            seg!("Insurtech", ["insurtech"]),
            seg!("Life insurance", ["life insurance"]),
            seg!("Property and casualty", ["property insurance", "casualty insurance"]),
        ],
        strong_in: &["DE", "CH"],
    },
    Industry {
        name: "Accounting",
        aliases: &["accountants", "accounting firms", "audit"],
        weight: 4,
        kind: Kind::Finance,
        segments: &[
            seg!("Audit and assurance", ["audit", "assurance"]),
            seg!("Tax advisory", ["tax advisory", "tax"]),
            seg!("Bookkeeping", ["bookkeeping", "payroll services"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Hospital & Health Care",
        aliases: &["healthcare", "health care", "hospitals", "health"],
        weight: 7,
        kind: Kind::Health,
        segments: &[
            seg!("Hospitals", ["hospitals"]),
            seg!("Clinics", ["clinics", "outpatient care"]),
            seg!("Digital health", ["healthtech", "digital health"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Medical Devices",
        aliases: &["medtech", "medical technology"],
        weight: 2,
        kind: Kind::Health,
        segments: &[
            seg!("Diagnostics", ["diagnostics"]),
            seg!("Surgical devices", ["surgical devices", "medical equipment"]),
        ],
        strong_in: &["DE", "CH", "IE"],
    },
    Industry {
        name: "Pharmaceuticals",
        aliases: &["pharma", "biotech", "biotechnology", "life sciences"],
        weight: 3,
        kind: Kind::Health,
        segments: &[
            seg!("Biotech", ["biotech", "biotechnology"]),
            seg!("Generics", ["generics"]),
            seg!("Clinical research", ["clinical research", "cro"]),
        ],
        strong_in: &["CH", "DK", "IN"],
    },
    Industry {
        name: "Retail",
        aliases: &["retailers", "ecommerce", "e-commerce"],
        weight: 6,
        kind: Kind::Consumer,
        segments: &[
            seg!("Online retail", ["ecommerce", "online retail", "d2c"]),
            seg!("Fashion", ["fashion", "apparel"]),
            seg!("Grocery", ["grocery"]),
            seg!("Consumer electronics", ["consumer electronics"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Hospitality",
        aliases: &["hotels", "travel", "restaurants"],
        weight: 3,
        kind: Kind::Consumer,
        segments: &[
            seg!("Hotels", ["hotels"]),
            seg!("Restaurants", ["restaurants"]),
            seg!("Travel", ["travel", "tourism"]),
        ],
        strong_in: &["ES", "IT"],
    },
    Industry {
        name: "Food & Beverages",
        aliases: &["food", "beverages", "food and beverage", "f&b"],
        weight: 3,
        kind: Kind::Consumer,
        segments: &[
            seg!("Food production", ["food production", "food manufacturing"]),
            seg!("Beverages", ["beverages"]),
            seg!("Food delivery", ["food delivery"]),
        ],
        strong_in: &["IT", "FR"],
    },
    Industry {
        name: "Education Management",
        aliases: &["education", "edtech companies", "schools", "universities"],
        weight: 4,
        kind: Kind::Services,
        segments: &[
            seg!("Edtech", ["edtech", "e-learning"]),
            seg!("Higher education", ["higher education", "universities"]),
            seg!("Corporate training", ["corporate training", "training"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Marketing & Advertising",
        aliases: &["marketing", "advertising", "agencies", "marketing agencies"],
        weight: 5,
        kind: Kind::Services,
        segments: &[
            seg!("Digital agencies", ["digital marketing agency", "performance marketing"]),
            seg!("Content and SEO", ["seo", "content marketing"]),
            seg!("Creative agencies", ["branding", "creative agency"]),
        ],
        strong_in: &["US", "GB"],
    },
    Industry {
        name: "Management Consulting",
        aliases: &["consulting", "consultancies", "consultants"],
        weight: 5,
        kind: Kind::Services,
        segments: &[
            seg!("Strategy", ["strategy consulting"]),
            seg!("Operations", ["operations consulting"]),
            seg!("HR consulting", ["hr consulting"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Staffing & Recruiting",
        aliases: &["recruiting", "staffing", "recruitment", "recruitment agencies"],
        weight: 3,
        kind: Kind::Services,
        segments: &[
            seg!("Recruitment agencies", ["recruitment agency", "recruiting"]),
            seg!("Executive search", ["executive search"]),
            seg!("Temporary staffing", ["temporary staffing"]),
        ],
        strong_in: &["GB", "NL"],
    },
    Industry {
        name: "Legal Services",
        aliases: &["legal", "law firms", "law"],
        weight: 3,
        kind: Kind::Services,
        segments: &[
            seg!("Law firms", ["law firm"]),
            seg!("Legal tech", ["legaltech"]),
            seg!("IP law", ["intellectual property"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Real Estate",
        aliases: &["property", "realestate"],
        weight: 4,
        kind: Kind::Services,
        segments: &[
            seg!("Proptech", ["proptech"]),
            seg!("Commercial real estate", ["commercial real estate"]),
            seg!("Property management", ["property management"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Construction",
        aliases: &["builders", "construction companies"],
        weight: 5,
        kind: Kind::Industrial,
        segments: &[
            seg!("General contractors", ["general contractor"]),
            seg!("Architecture and engineering", ["architecture", "engineering services"]),
            seg!("Building materials", ["building materials"]),
        ],
        strong_in: &[],
    },
    Industry {
        name: "Manufacturing",
        aliases: &["industrial", "machinery", "industrial manufacturing"],
        weight: 6,
        kind: Kind::Industrial,
        segments: &[
            seg!("Industrial machinery", ["industrial machinery", "machinery"]),
            seg!("Automation", ["industrial automation", "robotics"]),
            seg!("Electronics", ["electronics manufacturing"]),
        ],
        strong_in: &["DE", "JP", "IT", "CZ", "MX"],
    },
    Industry {
        name: "Logistics & Supply Chain",
        aliases: &["logistics", "supply chain", "transportation", "shipping"],
        weight: 4,
        kind: Kind::Industrial,
        segments: &[
            seg!("Freight", ["freight forwarding", "freight"]),
            seg!("Warehousing", ["warehousing", "fulfillment"]),
            seg!("Last-mile delivery", ["last-mile delivery"]),
        ],
        strong_in: &["NL", "SG", "BE"],
    },
    Industry {
        name: "Automotive",
        aliases: &["auto", "cars", "car"],
        weight: 2,
        kind: Kind::Industrial,
        segments: &[
            seg!("Parts suppliers", ["automotive parts"]),
            seg!("Electric vehicles", ["electric vehicles", "ev charging"]),
            seg!("Dealerships", ["car dealerships"]),
        ],
        strong_in: &["DE", "JP"],
    },
    Industry {
        name: "Renewables & Environment",
        aliases: &["renewables", "renewable energy", "cleantech", "energy"],
        weight: 2,
        kind: Kind::Industrial,
        segments: &[
            seg!("Solar", ["solar"]),
            seg!("Wind", ["wind energy"]),
            seg!("Energy efficiency", ["energy efficiency", "cleantech"]),
        ],
        strong_in: &["DK", "DE", "ES"],
    },
];

/// Departments' relative size per family of industries, in percent, in [`Kind`] order
/// (Tech, Finance, Health, Services, Industrial, Consumer) and [`DEPARTMENTS`] order (sandbox).
pub const DEPARTMENT_PRESENCE: [[u32; 6]; 12] = [
    [100, 100, 100, 100, 100, 100], // executive
    [100, 80, 60, 90, 80, 70],      // sales
    [100, 70, 50, 100, 50, 100],    // marketing
    [100, 30, 25, 10, 50, 10],      // engineering
    [100, 40, 30, 10, 15, 20],      // product
    [100, 150, 100, 100, 100, 100], // finance
    [60, 80, 120, 80, 150, 150],    // operations
    [100, 100, 100, 100, 100, 100], // human_resources
    [60, 120, 100, 60, 60, 60],     // information_technology
    [120, 60, 40, 50, 20, 60],      // customer_success
    [50, 150, 80, 60, 40, 30],      // legal
    [100, 20, 10, 60, 20, 50],      // design
];

/// How many people with a title a company has, per mille, in each [`COMPANY_SIZES`] band.
pub type Profile = [u32; 8];

/// One per company.
pub const ONE: Profile = [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000];
const FOUNDER: Profile = [700, 500, 300, 150, 80, 40, 20, 10];
const OWNER: Profile = [500, 250, 80, 20, 0, 0, 0, 0];
const MD: Profile = [100, 200, 300, 300, 400, 600, 1000, 2000];
const CXO: Profile = [50, 300, 700, 900, 1000, 1000, 1000, 1000];
const VP: Profile = [0, 100, 500, 900, 1200, 2000, 4000, 6000];
const HEAD: Profile = [50, 300, 600, 800, 1000, 1500, 2000, 3000];
const DIR: Profile = [0, 200, 600, 1200, 2000, 4000, 8000, 15000];
const MGR: Profile = [100, 500, 1500, 3000, 5000, 10000, 20000, 40000];
const IC: Profile = [200, 1000, 3000, 8000, 15000, 40000, 90000, 200000];
const ENTRY: Profile = [100, 500, 1500, 4000, 8000, 20000, 40000, 80000];
const PARTNER: Profile = [300, 1000, 3000, 6000, 10000, 20000, 30000, 40000];

/// A job title the sandbox knows.
#[derive(Debug)]
pub struct Title {
    /// The canonical title.
    pub name: &'static str,
    /// Other accepted spellings (abbreviations).
    pub aliases: &'static [&'static str],
    /// Index into [`DEPARTMENTS`].
    pub department: usize,
    /// Index into [`SENIORITIES`].
    pub seniority: usize,
    /// How many per company, by size.
    pub profile: Profile,
    /// A further scale, in percent.
    pub scale: u32,
    /// When not empty, the only industries (by name) where the title exists.
    pub only_in: &'static [&'static str],
}

// Department and seniority indexes, to keep the title table readable.
const EXE: usize = 0;
const SAL: usize = 1;
const MKT: usize = 2;
const ENG: usize = 3;
const PRD: usize = 4;
const FIN: usize = 5;
const OPS: usize = 6;
const HR: usize = 7;
const IT: usize = 8;
const CS: usize = 9;
const LEG: usize = 10;
const DSN: usize = 11;
const OWN: usize = 0;
const FND: usize = 1;
const CSU: usize = 2;
const PTN: usize = 3;
const S_VP: usize = 4;
const S_HEAD: usize = 5;
const S_DIR: usize = 6;
const S_MGR: usize = 7;
const SEN: usize = 8;
const ENT: usize = 9;

macro_rules! title {
    ($name:literal, [$($alias:literal),*], $dept:ident, $sen:ident, $profile:ident, $scale:literal) => {
        Title { name: $name, aliases: &[$($alias),*], department: $dept, seniority: $sen, profile: $profile, scale: $scale, only_in: &[] }
    };
    ($name:literal, [$($alias:literal),*], $dept:ident, $sen:ident, $profile:ident, $scale:literal, only [$($ind:literal),*]) => {
        Title { name: $name, aliases: &[$($alias),*], department: $dept, seniority: $sen, profile: $profile, scale: $scale, only_in: &[$($ind),*] }
    };
}

const PRO_SERVICES: [&str; 4] =
    ["Management Consulting", "Legal Services", "Accounting", "Marketing & Advertising"];

/// The job titles of the sandbox database.
pub const TITLES: &[Title] = &[
    // executive
    title!("Chief Executive Officer", ["ceo", "chief executive"], EXE, CSU, ONE, 100),
    title!("Founder", [], EXE, FND, FOUNDER, 100),
    title!("Co-Founder", ["cofounder", "co founder"], EXE, FND, FOUNDER, 60),
    title!("Owner", ["business owner"], EXE, OWN, OWNER, 100),
    title!("Managing Director", ["md"], EXE, S_DIR, MD, 100),
    title!("President", [], EXE, CSU, MD, 40),
    title!("General Manager", ["gm"], EXE, S_MGR, MD, 60),
    title!("Chief Operating Officer", ["coo"], OPS, CSU, CXO, 80),
    title!("Managing Partner", [], EXE, PTN, ONE, 60, only ["Management Consulting", "Legal Services", "Accounting"]),
    title!("Partner", [], EXE, PTN, PARTNER, 100, only ["Management Consulting", "Legal Services", "Accounting"]),
    // sales
    title!("Chief Revenue Officer", ["cro"], SAL, CSU, CXO, 40),
    title!("Chief Sales Officer", ["cso"], SAL, CSU, CXO, 20),
    title!(
        "VP of Sales",
        ["vp sales", "vice president of sales", "vice president sales", "svp sales"],
        SAL,
        S_VP,
        VP,
        100
    ),
    title!("Head of Sales", [], SAL, S_HEAD, HEAD, 100),
    title!("Sales Director", ["director of sales"], SAL, S_DIR, DIR, 100),
    title!(
        "Sales Operations Manager",
        ["sales ops manager", "revops manager", "revenue operations manager"],
        SAL,
        S_MGR,
        MGR,
        20
    ),
    title!(
        "Head of Revenue Operations",
        ["head of revops", "head of sales operations"],
        SAL,
        S_HEAD,
        HEAD,
        30
    ),
    title!("Sales Manager", [], SAL, S_MGR, MGR, 100),
    title!("Regional Sales Manager", [], SAL, S_MGR, MGR, 40),
    title!("Account Executive", ["ae"], SAL, SEN, IC, 60),
    title!("Senior Account Executive", ["senior ae"], SAL, SEN, IC, 30),
    title!("Account Manager", [], SAL, SEN, IC, 40),
    title!("Sales Development Representative", ["sdr"], SAL, ENT, ENTRY, 60),
    title!("Business Development Representative", ["bdr"], SAL, ENT, ENTRY, 40),
    title!("Business Development Manager", ["bdm"], SAL, S_MGR, MGR, 60),
    title!("Head of Business Development", [], SAL, S_HEAD, HEAD, 50),
    title!("Head of Partnerships", [], SAL, S_HEAD, HEAD, 30),
    title!("Key Account Manager", ["kam"], SAL, SEN, IC, 30),
    // marketing
    title!("Chief Marketing Officer", ["cmo"], MKT, CSU, CXO, 70),
    title!("VP of Marketing", ["vp marketing", "vice president of marketing"], MKT, S_VP, VP, 80),
    title!("Head of Marketing", [], MKT, S_HEAD, HEAD, 100),
    title!("Marketing Director", ["director of marketing"], MKT, S_DIR, DIR, 80),
    title!("Head of Growth", ["growth lead"], MKT, S_HEAD, HEAD, 40),
    title!("Marketing Manager", [], MKT, S_MGR, MGR, 100),
    title!("Demand Generation Manager", ["demand gen manager"], MKT, S_MGR, MGR, 30),
    title!("Content Marketing Manager", ["content manager"], MKT, S_MGR, MGR, 30),
    title!("Product Marketing Manager", ["pmm"], MKT, S_MGR, MGR, 30),
    title!("Brand Manager", [], MKT, S_MGR, MGR, 30),
    title!("Digital Marketing Specialist", [], MKT, SEN, IC, 30),
    title!("Marketing Coordinator", [], MKT, ENT, ENTRY, 40),
    title!("E-commerce Manager", ["ecommerce manager"], MKT, S_MGR, MGR, 60, only ["Retail", "Internet", "Food & Beverages"]),
    // engineering
    title!("Chief Technology Officer", ["cto"], ENG, CSU, CXO, 100),
    title!("VP of Engineering", ["vp engineering", "vice president of engineering"], ENG, S_VP, VP, 80),
    title!("Head of Engineering", [], ENG, S_HEAD, HEAD, 80),
    title!("Director of Engineering", ["engineering director"], ENG, S_DIR, DIR, 70),
    title!("Engineering Manager", [], ENG, S_MGR, MGR, 80),
    title!("Software Engineer", ["developer", "software developer"], ENG, SEN, IC, 100),
    title!("Senior Software Engineer", ["senior developer"], ENG, SEN, IC, 70),
    title!("DevOps Engineer", ["site reliability engineer", "sre"], ENG, SEN, IC, 30),
    title!("Data Engineer", [], ENG, SEN, IC, 25),
    title!("Head of Data", ["chief data officer"], ENG, S_HEAD, HEAD, 30),
    title!("Data Scientist", [], ENG, SEN, IC, 25),
    title!("Mechanical Engineer", [], ENG, SEN, IC, 80, only ["Manufacturing", "Automotive", "Construction", "Renewables & Environment", "Medical Devices"]),
    title!("Project Engineer", [], ENG, SEN, IC, 60, only ["Construction", "Manufacturing", "Renewables & Environment"]),
    // product
    title!("Chief Product Officer", ["cpo"], PRD, CSU, CXO, 30),
    title!("VP of Product", ["vp product", "vice president of product"], PRD, S_VP, VP, 50),
    title!("Head of Product", [], PRD, S_HEAD, HEAD, 80),
    title!("Product Manager", ["pm"], PRD, S_MGR, MGR, 80),
    title!("Senior Product Manager", [], PRD, SEN, IC, 20),
    // finance
    title!("Chief Financial Officer", ["cfo"], FIN, CSU, CXO, 100),
    title!("VP of Finance", ["vp finance", "vice president of finance"], FIN, S_VP, VP, 50),
    title!("Head of Finance", [], FIN, S_HEAD, HEAD, 80),
    title!("Finance Director", ["director of finance"], FIN, S_DIR, DIR, 50),
    title!("Financial Controller", ["controller", "comptroller"], FIN, S_DIR, HEAD, 70),
    title!("Finance Manager", [], FIN, S_MGR, MGR, 60),
    title!("FP&A Manager", ["fpa manager", "financial planning and analysis manager"], FIN, S_MGR, MGR, 20),
    title!("Accountant", [], FIN, SEN, IC, 40),
    title!("Senior Accountant", [], FIN, SEN, IC, 20),
    title!("Head of Risk", ["chief risk officer"], FIN, S_HEAD, HEAD, 80, only ["Banking", "Insurance", "Financial Services"]),
    title!("Underwriting Manager", [], FIN, S_MGR, MGR, 60, only["Insurance"]),
    title!("Tax Manager", [], FIN, S_MGR, MGR, 80, only["Accounting"]),
    title!("Audit Manager", [], FIN, S_MGR, MGR, 80, only ["Accounting", "Banking"]),
    // operations
    title!("VP of Operations", ["vp operations", "vice president of operations"], OPS, S_VP, VP, 60),
    title!("Head of Operations", [], OPS, S_HEAD, HEAD, 90),
    title!("Operations Director", ["director of operations"], OPS, S_DIR, DIR, 60),
    title!("Operations Manager", ["ops manager"], OPS, S_MGR, MGR, 100),
    title!("Procurement Manager", ["purchasing manager", "buyer"], OPS, S_MGR, MGR, 40),
    title!("Supply Chain Manager", [], OPS, S_MGR, MGR, 40),
    title!("Office Manager", [], OPS, S_MGR, FOUNDER, 60),
    title!("Project Manager", [], OPS, S_MGR, MGR, 60),
    title!("Plant Manager", ["factory manager"], OPS, S_MGR, HEAD, 100, only ["Manufacturing", "Automotive", "Food & Beverages", "Pharmaceuticals"]),
    title!("Quality Manager", ["qa manager", "quality assurance manager"], OPS, S_MGR, MGR, 60, only ["Manufacturing", "Automotive", "Pharmaceuticals", "Medical Devices", "Food & Beverages"]),
    title!("Logistics Manager", [], OPS, S_MGR, MGR, 100, only ["Logistics & Supply Chain", "Retail", "Manufacturing"]),
    title!("Fleet Manager", [], OPS, S_MGR, MGR, 50, only["Logistics & Supply Chain"]),
    title!("Store Manager", [], OPS, S_MGR, MGR, 100, only["Retail"]),
    title!("Property Manager", [], OPS, S_MGR, MGR, 100, only["Real Estate"]),
    title!("Site Manager", ["construction manager"], OPS, S_MGR, MGR, 80, only["Construction"]),
    title!("Hotel Manager", [], OPS, S_MGR, HEAD, 100, only["Hospitality"]),
    title!("Chief Medical Officer", ["cmo medical"], OPS, CSU, CXO, 100, only ["Hospital & Health Care", "Pharmaceuticals", "Medical Devices"]),
    title!("Medical Director", [], OPS, S_DIR, DIR, 50, only ["Hospital & Health Care", "Pharmaceuticals"]),
    title!("Nurse Manager", ["head nurse"], OPS, S_MGR, MGR, 80, only["Hospital & Health Care"]),
    title!("Principal", ["head teacher"], EXE, S_HEAD, ONE, 60, only["Education Management"]),
    title!("Dean", [], EXE, S_HEAD, HEAD, 30, only["Education Management"]),
    title!("Account Director", [], SAL, S_DIR, DIR, 80, only ["Marketing & Advertising", "Management Consulting"]),
    title!(
        "Recruitment Consultant",
        ["recruiter consultant"],
        SAL,
        SEN,
        IC,
        100,
        only["Staffing & Recruiting"]
    ),
    // human resources
    title!("Chief People Officer", ["chief human resources officer", "chro"], HR, CSU, CXO, 40),
    title!("VP of People", ["vp hr", "vp of human resources", "vice president of people"], HR, S_VP, VP, 30),
    title!("Head of People", ["head of hr", "head of human resources"], HR, S_HEAD, HEAD, 80),
    title!("HR Director", ["director of human resources", "human resources director"], HR, S_DIR, DIR, 40),
    title!("HR Manager", ["human resources manager"], HR, S_MGR, MGR, 60),
    title!("HR Business Partner", ["hrbp"], HR, SEN, IC, 15),
    title!("Talent Acquisition Manager", ["head of talent acquisition"], HR, S_MGR, MGR, 30),
    title!("Recruiter", ["talent acquisition specialist"], HR, SEN, IC, 25),
    // information technology
    title!("Chief Information Officer", ["cio"], IT, CSU, CXO, 50),
    title!("Chief Information Security Officer", ["ciso"], IT, CSU, CXO, 25),
    title!("IT Director", ["director of it"], IT, S_DIR, DIR, 40),
    title!("Head of IT", [], IT, S_HEAD, HEAD, 70),
    title!("IT Manager", [], IT, S_MGR, MGR, 60),
    title!("Systems Administrator", ["sysadmin"], IT, SEN, IC, 20),
    title!("Security Engineer", [], IT, SEN, IC, 10),
    // customer success
    title!("VP of Customer Success", ["vp customer success"], CS, S_VP, VP, 40),
    title!("Head of Customer Success", [], CS, S_HEAD, HEAD, 60),
    title!("Head of Customer Experience", ["head of cx"], CS, S_HEAD, HEAD, 30),
    title!("Customer Success Manager", ["csm"], CS, S_MGR, MGR, 60),
    title!("Customer Support Manager", ["support manager"], CS, S_MGR, MGR, 40),
    // legal
    title!("General Counsel", ["chief legal officer", "gc"], LEG, CSU, CXO, 40),
    title!("Head of Legal", [], LEG, S_HEAD, HEAD, 50),
    title!("Legal Counsel", ["in-house counsel", "corporate counsel"], LEG, SEN, IC, 15),
    title!("Compliance Manager", [], LEG, S_MGR, MGR, 30),
    title!("Head of Compliance", ["chief compliance officer"], LEG, S_HEAD, HEAD, 40),
    // design
    title!("Head of Design", ["design director"], DSN, S_HEAD, HEAD, 40),
    title!("Creative Director", [], DSN, S_DIR, HEAD, 40),
    title!("Product Designer", ["ux designer", "ui designer"], DSN, SEN, IC, 20),
];

/// Whether a title exists in an industry.
pub fn title_in_industry(title: &Title, industry: &Industry) -> bool {
    title.only_in.is_empty() || title.only_in.contains(&industry.name)
}

/// How present a title's department is in an industry, in percent.
pub fn presence(title: &Title, industry: &Industry) -> u32 {
    if !title.only_in.is_empty() {
        return 100;
    }
    let kind = match industry.kind {
        Kind::Tech => 0,
        Kind::Finance => 1,
        Kind::Health => 2,
        Kind::Services => 3,
        Kind::Industrial => 4,
        Kind::Consumer => 5,
    };
    let base = DEPARTMENT_PRESENCE[title.department][kind];
    // Partners exist only in the professional services that have them.
    if title.seniority == PTN && !PRO_SERVICES.contains(&industry.name) { 0 } else { base }
}

// ---- normalisation and suggestions -------------------------------------------------------

/// Lower-cases, folds common accents, spells `&` as `and`, and keeps letters, digits, `+` and
/// single spaces: the key two spellings of the same value share.
pub fn key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = true;
    let mut push = |c: char, out: &mut String| {
        if c.is_ascii_alphanumeric() || c == '+' {
            out.push(c.to_ascii_lowercase());
            space = false;
        } else if c == '&' {
            if !space {
                out.push(' ');
            }
            out.push_str("and ");
            space = true;
        } else if !space {
            out.push(' ');
            space = true;
        }
    };
    for ch in text.chars() {
        match fold(ch) {
            Some(ascii) => ascii.chars().for_each(|c| push(c, &mut out)),
            None => push(ch, &mut out),
        }
    }
    while out.ends_with(' ') {
        out.pop();
    }
    out
}

/// The ASCII spelling of a letter with a diacritic (the common European ones).
pub fn fold(ch: char) -> Option<&'static str> {
    Some(match ch {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' => "a",
        'æ' | 'Æ' => "ae",
        'ç' | 'Ç' | 'č' | 'Č' | 'ć' => "c",
        'è' | 'é' | 'ê' | 'ë' | 'È' | 'É' | 'Ê' | 'Ë' | 'ě' | 'ę' => "e",
        'ì' | 'í' | 'î' | 'ï' | 'Ì' | 'Í' | 'Î' | 'Ï' => "i",
        'ñ' | 'Ñ' | 'ń' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' => "o",
        'ù' | 'ú' | 'û' | 'ü' | 'ů' | 'Ù' | 'Ú' | 'Û' | 'Ü' => "u",
        'ý' | 'ÿ' | 'Ý' => "y",
        'ß' => "ss",
        'ł' | 'Ł' => "l",
        'ř' | 'Ř' => "r",
        'š' | 'Š' | 'ś' | 'Ś' => "s",
        'ž' | 'Ž' | 'ż' | 'ź' | 'Ż' => "z",
        _ => return None,
    })
}

/// Levenshtein distance between two short keys (by bytes; keys are ASCII).
pub fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest canonical values to `input`, best first, among `candidates` (pairs of a key
/// that may match and the canonical value it stands for). At most `max`, only plausible ones.
pub fn suggest<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = (&'a str, &'a str)>,
    max: usize,
) -> Vec<&'a str> {
    let wanted = key(input);
    if wanted.is_empty() {
        return Vec::new();
    }
    let words: Vec<&str> = wanted.split(' ').filter(|w| w.len() > 2 && *w != "and" && *w != "of").collect();
    let mut scored: Vec<(usize, &'a str)> = Vec::new();
    for (candidate_key, canonical) in candidates {
        let candidate = key(candidate_key);
        let d = distance(&wanted, &candidate);
        let tolerance = (wanted.len().max(candidate.len()) / 3).max(2);
        // Shared words count as closeness too: "head of sales ops" is near "head of sales".
        let shared = words.iter().filter(|w| candidate.split(' ').any(|c| c == **w)).count();
        let contains = candidate.contains(&wanted) || (wanted.len() >= 4 && wanted.contains(&candidate));
        let score = if d <= tolerance {
            d
        } else if contains {
            tolerance + 1
        } else if shared > 0 && shared * 2 >= words.len() {
            tolerance + 2 + words.len() - shared
        } else {
            continue;
        };
        match scored.iter_mut().find(|(_, c)| *c == canonical) {
            Some(existing) if existing.0 > score => existing.0 = score,
            Some(_) => {}
            None => scored.push((score, canonical)),
        }
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

/// Every keyword (segment tag) of the sandbox, without repeats, in table order.
pub fn keywords() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for industry in INDUSTRIES {
        for segment in industry.segments {
            for tag in segment.tags {
                if !all.contains(tag) {
                    all.push(tag);
                }
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fold_spelling_differences() {
        assert_eq!(key("  Hospital & Health-Care "), "hospital and health care");
        assert_eq!(key("Zürich"), "zurich");
        assert_eq!(key("VP, Sales!"), "vp sales");
        assert_eq!(key("10001+"), "10001+");
        assert_eq!(key("Ł\u{f3}d\u{17a}"), "lodz");
    }

    #[test]
    fn suggestions_are_close_and_ordered() {
        let titles = TITLES.iter().map(|t| (t.name, t.name));
        let s = suggest("Head of Sales Ops", titles, 3);
        assert!(s.contains(&"Head of Sales"), "{s:?}");
        let s = suggest("Cheif Technology Oficer", TITLES.iter().map(|t| (t.name, t.name)), 3);
        assert_eq!(s.first(), Some(&"Chief Technology Officer"));
        let countries = COUNTRIES.iter().map(|c| (c.name, c.name));
        assert_eq!(suggest("Germnay", countries, 3), vec!["Germany"]);
        assert!(suggest("zzzzzz", COUNTRIES.iter().map(|c| (c.name, c.name)), 3).is_empty());
    }

    #[test]
    fn tables_are_consistent() {
        assert_eq!(DEPARTMENT_PRESENCE.len(), DEPARTMENTS.len());
        let mut names: Vec<String> = TITLES.iter().map(|t| key(t.name)).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TITLES.len(), "title keys are unique");
        for t in TITLES {
            for i in t.only_in {
                assert!(INDUSTRIES.iter().any(|x| x.name == *i), "{}: unknown industry {i}", t.name);
            }
            assert!(t.department < DEPARTMENTS.len() && t.seniority < SENIORITIES.len());
        }
        for i in INDUSTRIES {
            for c in i.strong_in {
                assert!(COUNTRIES.iter().any(|x| x.code == *c), "{}: unknown country {c}", i.name);
            }
        }
        let mut codes: Vec<&str> = COUNTRIES.iter().map(|c| c.code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), COUNTRIES.len());
        assert!(TITLES.len() < 128 && COUNTRIES.len() < 64 && INDUSTRIES.len() < 32);
        assert!(INDUSTRIES.iter().all(|i| i.segments.len() <= 4));
    }
}
