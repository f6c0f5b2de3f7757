//! Word lists the sandbox builds company and person names from. Company names are
//! `prefix + suffix + qualifier`, and the lists are chosen so that every combination spells a
//! different domain label (a test checks it), which lets a domain be parsed back to its
//! company for exclusions.

use crate::leads::vocab::Culture;

/// First halves of company names.
pub const PREFIXES: Words = Words(
    "blue,bright,north,clear,swift,true,silver,green,iron,stone,oak,pine,maple,cedar,river,lake,harbor,\
     summit,peak,ridge,valley,sky,sun,star,moon,cloud,rain,snow,frost,fire,spark,light,tide,coast,bay,\
     cape,meadow,grove,forest,cliff,canyon,prairie,delta,aurora,nova,terra,astra,vela,lumen,solis,orbi,\
     arca,vita,nexa,opti,zen,flux,prime,apex,vertex,pivot,vector,quantum,atlas,titan,hydra,orion,polar,\
     alpine,nordic,urban,metro,civic,royal,noble,golden,amber,coral,jade,onyx,ruby,azure,indigo,violet,\
     scarlet,crimson,ivory,copper,cobalt,granite,marble,willow,birch,aspen,elm,hazel,fern,ivy,sage,mint,\
     clover,lotus,orchid,falcon,eagle,hawk,raven,heron,swan,fox,wolf,bear,lynx,otter,bison,stag,kestrel,\
     sparrow,robin,finch,wren,dune,mesa,fjord,tundra,sierra,everest,kilo,zephyr,helio",
);

/// Second halves of company names.
pub const SUFFIXES: Words = Words(
    "lane,path,bridge,gate,way,point,line,forge,craft,stack,base,hub,loop,link,mark,shift,scale,sight,\
     wise,ware,logic,nest,box,bit,byte,wire,cast,flow,stream,leaf,root,seed,bloom,rock,hill,wood,brook,\
     ford,haven,port,dock,yard,mill,barn,tower,hall,house,vault,keep,crest,crown,shield,arrow,anchor,\
     compass,beacon,lantern,signal,pulse,beat,spring,well,source,quest,venture,trail,route,track,ledger,\
     folio,metric,matrix,grid,frame,form,fold,sphere,orbit,dial,gear,lever,engine,motion,drive,volt,lens,\
     prism,pixel,canvas,ink,quill,page,note,tone,chord,verse,sense,mind,scope,deck",
);

/// Endings of company names: the domain part and the name's qualifier.
pub const QUALIFIERS: &[(&str, &str)] = &[
    ("", ""),
    ("hq", ""),
    ("labs", " Labs"),
    ("group", " Group"),
    ("partners", " Partners"),
    ("global", " Global"),
    ("works", " Works"),
    ("systems", " Systems"),
];

/// Top-level domains; `None` stands for the company's country code domain.
pub const TLDS: &[Option<&str>] = &[Some("com"), Some("io"), Some("co"), Some("net"), None];

/// A list of words in one text, separated by commas: a slice of `&str` would add 8 bytes of
/// pointer and length per name to the module's data, which gzip barely shrinks (900 names).
#[derive(Debug, Clone, Copy)]
pub struct Words(&'static str);

impl Words {
    /// How many.
    pub fn count(self) -> usize {
        self.0.bytes().filter(|b| *b == b',').count() + 1
    }

    /// The `i`th (`i < count()`).
    pub fn get(self, i: usize) -> &'static str {
        self.iter().nth(i).unwrap_or_default()
    }

    /// Each, in order.
    pub fn iter(self) -> impl Iterator<Item = &'static str> {
        self.0.split(',')
    }
}

/// Given names and surnames per culture.
pub fn names(culture: Culture) -> (Words, Words) {
    match culture {
        Culture::English => (
            Words(
                "James,Mary,Robert,Patricia,John,Jennifer,Michael,Linda,David,Elizabeth,William,Barbara,Richard,Susan,Joseph,Jessica,Thomas,Sarah,Daniel,Karen,Matthew,Emily,Andrew,Rachel,Ryan,Laura,Kevin,Megan,Brian,Olivia,Chris,Hannah,Ethan",
            ),
            Words(
                "Smith,Johnson,Williams,Brown,Jones,Miller,Davis,Wilson,Anderson,Taylor,Thomas,Moore,Martin,Jackson,Thompson,White,Harris,Clark,Lewis,Walker,Hall,Young,Allen,King,Wright,Scott,Green,Baker,Adams,Nelson,Carter,Mitchell,Roberts",
            ),
        ),
        Culture::French => (
            Words(
                "Camille,Julien,Claire,Nicolas,Sophie,Thomas,Marie,Antoine,Julie,Pierre,Aurélie,Mathieu,Céline,Guillaume,Élodie,Sébastien,Manon,Alexandre,Chloé,Romain,Léa,Maxime,Inès,Hugo,Margaux,Lucas,Pauline,Jean-Marc,Anaïs,Benoît,Hélène,Quentin,Amélie",
            ),
            Words(
                "Martin,Bernard,Dubois,Durand,Lefèvre,Moreau,Laurent,Simon,Michel,Garcia,David,Bertrand,Roux,Vincent,Fournier,Morel,Girard,André,Mercier,Dupont,Lambert,Bonnet,François,Legrand,Garnier,Faure,Rousseau,Blanc,Guérin,Muller,Henry,Roussel,Perrin",
            ),
        ),
        Culture::German => (
            Words(
                "Lukas,Anna,Jonas,Lena,Maximilian,Laura,Felix,Julia,Tobias,Katharina,Jan,Sarah,Florian,Lisa,Stefan,Sabine,Markus,Christina,Andreas,Nina,Sebastian,Johanna,Daniel,Franziska,Matthias,Jana,Philipp,Miriam,Thomas,Katrin,Simon,Carolin,Moritz",
            ),
            Words(
                "Müller,Schmidt,Schneider,Fischer,Weber,Meyer,Wagner,Becker,Schulz,Hoffmann,Schäfer,Koch,Bauer,Richter,Klein,Wolf,Schröder,Neumann,Schwarz,Zimmermann,Braun,Krüger,Hofmann,Hartmann,Lange,Schmitt,Werner,Krause,Meier,Lehmann,Köhler,Huber,Kaiser",
            ),
        ),
        Culture::Spanish => (
            Words(
                "Alejandro,Lucía,Javier,María,Carlos,Laura,Daniel,Marta,Pablo,Sofía,Miguel,Paula,David,Elena,Jorge,Carmen,Diego,Ana,Sergio,Cristina,Adrián,Isabel,Álvaro,Raquel,Manuel,Beatriz,Fernando,Claudia,Andrés,Patricia,Rubén,Valentina,Gonzalo",
            ),
            Words(
                "García,Rodríguez,González,Fernández,López,Martínez,Sánchez,Pérez,Gómez,Martín,Jiménez,Ruiz,Hernández,Díaz,Moreno,Muñoz,Álvarez,Romero,Navarro,Torres,Domínguez,Vázquez,Ramos,Gil,Ramírez,Serrano,Blanco,Molina,Morales,Ortega,Delgado,Castro,Ortiz",
            ),
        ),
        Culture::Italian => (
            Words(
                "Marco,Giulia,Alessandro,Francesca,Luca,Chiara,Andrea,Sara,Matteo,Elena,Lorenzo,Valentina,Davide,Martina,Simone,Federica,Francesco,Alessia,Stefano,Silvia,Riccardo,Laura,Paolo,Giorgia,Roberto,Elisa,Giovanni,Anna,Fabio,Ilaria,Nicola,Beatrice,Tommaso",
            ),
            Words(
                "Rossi,Russo,Ferrari,Esposito,Bianchi,Romano,Colombo,Ricci,Marino,Greco,Bruno,Gallo,Conti,De Luca,Mancini,Costa,Giordano,Rizzo,Lombardi,Moretti,Barbieri,Fontana,Santoro,Mariani,Rinaldi,Caruso,Ferrara,Galli,Martini,Leone,Longo,Gentile,Vitale",
            ),
        ),
        Culture::Dutch => (
            Words(
                "Daan,Emma,Sem,Sophie,Lucas,Julia,Milan,Anna,Thijs,Lotte,Bram,Sanne,Ruben,Fleur,Jesse,Eva,Lars,Lisa,Niels,Iris,Joost,Femke,Pieter,Maaike,Sander,Anouk,Wouter,Esther,Koen,Marloes,Tim,Ilse,Bas",
            ),
            Words(
                "de Jong,Jansen,de Vries,van den Berg,van Dijk,Bakker,Janssen,Visser,Smit,Meijer,de Boer,Mulder,de Groot,Bos,Vos,Peters,Hendriks,van Leeuwen,Dekker,Brouwer,de Wit,Dijkstra,Smits,de Graaf,van der Meer,van der Linden,Kok,Jacobs,de Haan,Vermeulen,van den Heuvel,van der Veen,Willems",
            ),
        ),
        Culture::Nordic => (
            Words(
                "Erik,Anna,Lars,Ingrid,Johan,Sofia,Mikkel,Maja,Anders,Freja,Oskar,Elin,Henrik,Karin,Magnus,Sara,Nils,Emma,Mats,Linnea,Jonas,Ida,Fredrik,Astrid,Olav,Sigrid,Rasmus,Hanna,Emil,Liv,Jukka,Aino,Mikael",
            ),
            Words(
                "Andersson,Johansson,Karlsson,Nilsson,Eriksson,Larsson,Olsson,Persson,Svensson,Gustafsson,Hansen,Jensen,Nielsen,Pedersen,Christensen,Larsen,Sørensen,Rasmussen,Johansen,Olsen,Berg,Haugen,Hagen,Bakken,Korhonen,Virtanen,Mäkinen,Nieminen,Lindqvist,Lindberg,Holm,Dahl,Strand",
            ),
        ),
        Culture::Portuguese => (
            Words(
                "João,Maria,Pedro,Ana,Lucas,Beatriz,Gabriel,Mariana,Rafael,Juliana,Tiago,Inês,Miguel,Carolina,Bruno,Fernanda,Rodrigo,Camila,Diogo,Larissa,Gustavo,Patrícia,Felipe,Rita,André,Letícia,Ricardo,Sofia,Thiago,Helena,Vinícius,Bianca,Eduardo",
            ),
            Words(
                "Silva,Santos,Oliveira,Souza,Pereira,Costa,Rodrigues,Almeida,Nascimento,Lima,Araújo,Fernandes,Carvalho,Gomes,Martins,Rocha,Ribeiro,Alves,Monteiro,Mendes,Barros,Freitas,Barbosa,Pinto,Moura,Cavalcanti,Dias,Castro,Campos,Cardoso,Teixeira,Correia,Lopes",
            ),
        ),
        Culture::Slavic => (
            Words(
                "Piotr,Anna,Tomasz,Katarzyna,Michał,Agnieszka,Paweł,Magdalena,Jakub,Monika,Krzysztof,Joanna,Marcin,Aleksandra,Jan,Eva,Petr,Lucie,Martin,Tereza,Pavel,Jana,Lukáš,Barbora,Tomáš,Veronika,Adam,Zuzana,Filip,Marta,Ondřej,Klára,Wojciech",
            ),
            Words(
                "Nowak,Kowalski,Wiśniewski,Wójcik,Kowalczyk,Kamiński,Lewandowski,Zieliński,Szymański,Woźniak,Dąbrowski,Kozłowski,Jankowski,Mazur,Krawczyk,Novák,Svoboda,Novotný,Dvořák,Černý,Procházka,Kučera,Veselý,Horák,Němec,Pokorný,Marek,Pospíšil,Hájek,Král,Jelínek,Růžička,Beneš",
            ),
        ),
        Culture::Indian => (
            Words(
                "Aarav,Priya,Rahul,Ananya,Arjun,Divya,Rohan,Sneha,Vikram,Pooja,Amit,Neha,Karthik,Kavya,Sanjay,Meera,Aditya,Shreya,Nikhil,Anjali,Rajesh,Deepika,Suresh,Lakshmi,Varun,Isha,Manish,Riya,Harsh,Swati,Arun,Nisha,Siddharth",
            ),
            Words(
                "Sharma,Patel,Singh,Kumar,Gupta,Reddy,Iyer,Nair,Rao,Mehta,Shah,Joshi,Verma,Agarwal,Menon,Pillai,Chatterjee,Banerjee,Das,Bose,Kapoor,Malhotra,Desai,Kulkarni,Bhat,Krishnan,Srinivasan,Chopra,Saxena,Mishra,Pandey,Naidu,Thakur",
            ),
        ),
        Culture::Japanese => (
            Words(
                "Haruto,Yui,Sota,Aoi,Yuto,Hina,Ren,Sakura,Takumi,Mio,Kenta,Yuna,Daiki,Rin,Shota,Miyu,Kaito,Nanami,Ryo,Akari,Hiroshi,Yuki,Takeshi,Emi,Kazuki,Ayaka,Naoki,Haruka,Yusuke,Misaki,Tatsuya,Kana,Koji",
            ),
            Words(
                "Sato,Suzuki,Takahashi,Tanaka,Watanabe,Ito,Yamamoto,Nakamura,Kobayashi,Kato,Yoshida,Yamada,Sasaki,Yamaguchi,Matsumoto,Inoue,Kimura,Hayashi,Shimizu,Yamazaki,Mori,Abe,Ikeda,Hashimoto,Yamashita,Ishikawa,Nakajima,Maeda,Fujita,Ogawa,Goto,Okada,Hasegawa",
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leads::vocab::COUNTRIES;

    #[test]
    fn lists_have_no_repeats() {
        for list in [PREFIXES, SUFFIXES] {
            let mut v: Vec<_> = list.iter().collect();
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), list.count());
        }
        for c in COUNTRIES {
            let (first, last) = names(c.culture);
            for list in [first, last] {
                assert!(list.iter().all(|n| !n.is_empty() && n.trim() == n), "{list:?}");
                let mut v: Vec<String> = list.iter().map(crate::leads::vocab::key).collect();
                v.sort();
                v.dedup();
                assert_eq!(v.len(), list.count(), "{:?}", c.culture);
                // Person names are spread with a multiplier of 7, which must be invertible.
                assert_ne!(list.count() % 7, 0, "{:?}", c.culture);
            }
        }
    }

    #[test]
    fn company_words_are_lower_case_ascii() {
        // They make domain names, and `capitalize` upper-cases their first letter as ASCII.
        for word in PREFIXES.iter().chain(SUFFIXES.iter()) {
            assert!(
                !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{word}"
            );
        }
    }
}
